"""A small, fast tone library for the AMemOps tests (60 identities x 4 recordings)."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.datasets.sources.library import RecordingInfo, SourceLibrary


class ToneLibrary(SourceLibrary):
    """Identity ``k`` is a harmonic tone at ``100 + 37 k`` Hz; recordings differ in phase/noise/level."""

    name = "tones"

    def __init__(self, identities: int = 60, per_split: int = 4, seconds: float = 2.0) -> None:
        self.seconds = seconds
        infos = [
            RecordingInfo(
                recording_id=f"tone{k:02d}-{split}-{r}",
                identity=f"tone{k:02d}",
                split=split,
                family=f"family{k % 5}",
                source_type="synthetic",
                excerpt_start="random",
            )
            for k in range(identities)
            for split in ("train", "eval")
            for r in range(per_split)
        ]
        super().__init__(infos)

    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        k = int(info.identity[4:])
        rng = np.random.default_rng(abs(hash(info.recording_id)) % 2**32)
        t = np.arange(int(self.seconds * 16_000)) / 16_000
        f0 = 100 + 37 * k
        tone = sum(np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6.3)) / h for h in range(1, 4))
        return (rng.uniform(0.1, 1.0) * tone + 0.01 * rng.standard_normal(len(t))).astype(np.float32)

    def num_samples(self, recording_id: str) -> int:
        self.info(recording_id)
        return int(self.seconds * 16_000)


@pytest.fixture(scope="session")
def tones() -> ToneLibrary:
    return ToneLibrary()
