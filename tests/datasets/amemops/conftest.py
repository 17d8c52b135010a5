import pytest

from memgym.datasets.sources.tones import ToneLibrary


@pytest.fixture(scope="session")
def tones() -> ToneLibrary:
    """60 tone identities x 4 recordings per split: fast and trivially separable."""
    return ToneLibrary()
