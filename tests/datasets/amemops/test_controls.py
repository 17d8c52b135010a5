import dataclasses

import pytest

from memgym.core.errors import ConfigError
from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.controls import apply_recording_control
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.sources.similarity import SimilarityPools


@pytest.fixture(scope="module")
def pools(tones):
    return SimilarityPools(tones, recordings_per_identity=1)


def _strip(stream):
    return [dataclasses.replace(e, recording_id="", start_sample=0) for e in stream.events]


@pytest.mark.parametrize("control", ["fixed", "cycle2", "cycle4", "unrestricted"])
def test_controls_keep_timing_attributes_answers_noise(tones, pools, control):
    original = StreamGenerator(StreamConfig(), tones, pools).generate(seed=5, index=1)
    controlled = StreamGenerator(StreamConfig(recordings=control), tones, pools).generate(seed=5, index=1)
    assert controlled.recordings == control
    assert _strip(original) == _strip(controlled)
    assert original.items == controlled.items and original.noise_seed == controlled.noise_seed
    assert all(e.start_sample == 0 for e in controlled.events)
    by_identity = {}
    for o, c in zip(original.events, controlled.events):
        by_identity.setdefault(o.identity, []).append((o.recording_id, c.recording_id))
    for pairs in by_identity.values():
        used = [c for _, c in pairs]
        if control == "fixed":
            assert set(used) == {pairs[0][0]}  # the first occurrence's recording, everywhere
        elif control == "unrestricted":
            assert used == [o for o, _ in pairs]
        else:
            k = int(control[-1])
            assert len(set(used)) == min(k, len(pairs), 4)
            assert all(used[i] == used[i % k] for i in range(len(used)))


def test_unknown_control(tones, pools):
    stream = StreamGenerator(StreamConfig(), tones, pools).generate(seed=0, index=0)
    with pytest.raises(ConfigError, match="not a recording control"):
        apply_recording_control(stream, "cycle3", tones)
