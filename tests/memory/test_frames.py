"""Frames memory: every frame kept, uniform sampling, frame entries at observation poses."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.errors import ConfigError
from memgym.core.registry import MEMORIES
from memgym.memory.embodied.frames import FramesMemory
from memgym.pipelines.structured_reasoner import StructuredReasoner


def observation(index: int, semantic_id: int = 0) -> dict:
    semantic = np.zeros((6, 8), np.int32)
    semantic[: 1 + index % 3, :4] = semantic_id  # a labelled block growing with index % 3
    return {
        "rgb": np.full((6, 8, 3), index, np.uint8),
        "depth": np.full((6, 8), 2.0, np.float32),
        "semantic": semantic,
        "position": np.array([index, 0.0, -index], np.float32),
        "rotation": np.array([0.0, 0.0, 0.0, 1.0], np.float32),
        "text": f"Amelia: line {index}" if index % 10 == 0 else "",
    }


def filled(name="frames", count=40, **options) -> FramesMemory:
    memory = MEMORIES.get(name)(**{"perception": "exact", **options})
    memory.detector.set_labels({5: "mug"})
    memory.detector.min_pixels = 1
    for i in range(count):
        memory.observe(observation(i, 5 if i % 7 == 0 else 0))
    return memory


def test_keeps_every_frame_and_samples_uniformly():
    memory = filled()
    assert len(memory.frames) == 40
    evidence = memory.retrieve("anything")
    picked = [int(c.removeprefix("frame_")) for c in evidence.captions]
    assert picked == np.linspace(0, 39, 16).round().astype(int).tolist() and picked[0] == 0 and picked[-1] == 39
    assert [int(i[0, 0, 0]) for i in evidence.images] == picked
    assert evidence.locations["frame_39"] == (39.0, 0.0, -39.0)
    assert len(filled(num_frames=64).retrieve("").images) == 40
    with pytest.raises(ConfigError, match="num_frames"):
        FramesMemory(num_frames=0)


def test_label_entries_point_at_the_sampled_frame_showing_it_best():
    memory = filled(num_frames=40)
    evidence = memory.retrieve("Go to the mug.")
    mugs = [e for e in evidence.entries if e.label == "mug"]
    # frames 0, 7, ..., 35 show it; 14 and 35 show it largest (3 rows): the earlier one wins
    assert [e.id for e in mugs] == ["frame_14:mug"]
    agent = ReasonerAgent(memory, StructuredReasoner())
    action = agent.answer({"text": "Go to the mug.", "position": np.zeros(3)}, {"task": "navigation"})
    assert agent.last_reply == "OBJECT frame_14:mug"
    np.testing.assert_allclose(action["position"], [14.0, 0.0, -14.0])


def test_round_trip_pickle_and_dialogue_variant():
    memory = filled("frames+dialogue")
    clone = MEMORIES.get("frames+dialogue")(perception="exact")
    clone.load_state_dict(memory.state_dict())
    assert clone.retrieve("x").text == memory.retrieve("x").text
    assert memory.retrieve("x").dialogue == "Amelia: line 0\nAmelia: line 10\nAmelia: line 20\nAmelia: line 30"
    assert filled().retrieve("x").dialogue == ""
    again = pickle.loads(pickle.dumps(memory))
    assert np.array_equal(again.retrieve("x").images[3], memory.retrieve("x").images[3])
    memory.reset()
    assert memory.frames == [] and memory.turns == [] and memory.frame_count == 0


def test_runs_without_a_detector():
    memory = FramesMemory(detector="none")
    memory.observe({k: v for k, v in observation(0).items() if k != "semantic"})
    evidence = memory.retrieve("Go to the mug.")
    assert [e.id for e in evidence.entries] == ["frame_0"]


def test_only_the_gt_detector_needs_semantic_images():
    assert "semantic" in FramesMemory().reads and "semantic" not in FramesMemory(detector="none").reads
