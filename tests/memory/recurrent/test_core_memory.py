"""The model as a registered memgym Memory: one frame per observe, same numbers as the chunked form."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from memgym.core.registry import MEMORIES
from memgym.memory.recurrent.core_memory import CoreMemory
from memgym.memory.recurrent.mixers import CORES
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig


def test_every_core_is_a_registered_memory():
    for core in CORES:
        cls = MEMORIES.get(core)
        assert issubclass(cls, CoreMemory) and cls.core == core


@pytest.mark.parametrize("core", ["gdn2", "attention_rope"])
def test_observing_frames_matches_the_chunked_model(core):
    torch.manual_seed(0)
    model = AMemOpsModel(ModelConfig(core=core))
    frames = np.random.default_rng(0).standard_normal((30, 131)).astype(np.float32)
    memory = MEMORIES.get(core)(model)
    for frame in frames[:-1]:
        memory.observe(frame)
    memory.observe({"features": frames[-1:]})
    answer = memory.retrieve()
    with torch.no_grad():
        whole = model(torch.from_numpy(frames)[None])
    expected = torch.softmax(whole["gain"][0, -1], -1).numpy()
    np.testing.assert_allclose(answer["gain_probs"], expected, rtol=1e-4, atol=1e-6)
    assert answer["gain"] == int(expected.argmax())
    assert memory.frames_seen == 30


def test_state_round_trip_and_reset():
    memory = MEMORIES.get("gdn2")()
    frames = np.random.default_rng(1).standard_normal((5, 131)).astype(np.float32)
    memory.observe(frames[:3])
    saved = memory.state_dict()
    assert saved["states"][0]["S"].shape == (1, 2, 64, 64)
    other = MEMORIES.get("gdn2")()
    other.load_state_dict(saved)
    memory.observe(frames[3])
    other.observe(frames[3])
    np.testing.assert_allclose(memory.retrieve()["pan_probs"], other.retrieve()["pan_probs"], rtol=1e-6)
    memory.reset()
    with pytest.raises(RuntimeError, match="before any frame"):
        memory.retrieve()


def test_bad_frames_are_named():
    memory = MEMORIES.get("kda")()
    with pytest.raises(ValueError, match=r"expected a frame \(131,\)"):
        memory.observe(np.zeros(7))
    with pytest.raises(ValueError, match="'features'"):
        memory.observe({"audio": np.zeros(131)})
