"""ConceptGraph memory: retrieval by predicted category, evidence, round trip, swap mid-run."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.errors import ConfigError, MemgymError
from memgym.core.registry import MEMORIES
from memgym.memory.embodied.conceptgraph import ConceptGraphMemory
from memgym.memory.embodied.snapshots import SnapshotMemory
from memgym.pipelines.structured_reasoner import StructuredReasoner
from tests.support.box_scene import TABLE_LABELS, TABLE_MEMORY_OPTIONS, TABLE_SCENE, table_memory

OPTIONS = TABLE_MEMORY_OPTIONS
MUG = np.array(TABLE_SCENE[3][0])
OBS = {"text": "", "position": np.zeros(3, np.float32)}


build = table_memory


@pytest.fixture(scope="module")
def memory(box_views):
    return build("conceptgraph", box_views)


def test_retrieval_keeps_only_the_predicted_categories(memory):
    memory.bind_reasoner(StructuredReasoner())
    evidence = memory.retrieve("Go to the mug on the table.")
    assert evidence.categories == ("mug", "table")
    assert sorted(e.label for e in evidence.entries) == ["mug", "table"]
    assert len(evidence.images) == 2 and all(i.dtype == np.uint8 and i.ndim == 3 for i in evidence.images)
    evidence = memory.retrieve("Which crate did you see first?")
    assert [e.label for e in evidence.entries] == ["crate", "crate"]
    assert memory.retrieve("Go to the piano.").entries == ()


def test_agent_navigates_to_the_estimated_location_and_reads_relations(memory):
    agent = ReasonerAgent(memory, StructuredReasoner())
    action = agent.answer({**OBS, "text": "Go to the mug."}, {"task": "navigation"})
    assert agent.last_reply.startswith("OBJECT obj_")
    assert np.linalg.norm(action["position"] - MUG) < 0.05
    action = agent.answer({**OBS, "text": "The mug is on top of what?"}, {"task": "qa"})
    assert action["text"] == "table"
    agent.answer({**OBS, "text": "Go to the crate."}, {"task": "navigation"})
    assert agent.last_reply == "unknown"  # two crates and no cue to tell them apart


def test_retrieval_needs_a_reasoner(box_views):
    with pytest.raises(MemgymError, match="bind_reasoner"):
        build("conceptgraph", box_views, 3).retrieve("Go to the mug.")
    with pytest.raises(ConfigError, match="detector"):
        ConceptGraphMemory(detector="none")


def test_gt_detector_needs_semantic_images_and_labels(box_views):
    memory = MEMORIES.get("conceptgraph")(**OPTIONS)
    with pytest.raises(MemgymError, match="bind_episode"):
        memory.observe(box_views[0])
    memory.detector.set_labels(TABLE_LABELS)
    with pytest.raises(MemgymError, match="semantic=True"):
        memory.observe({k: v for k, v in box_views[0].items() if k != "semantic"})


def test_dialogue_variants_append_the_transcript(box_views):
    plain, spoken = build("conceptgraph", box_views), build("conceptgraph+dialogue", box_views)
    for memory in (plain, spoken):
        memory.bind_reasoner(StructuredReasoner())
    assert plain.retrieve("Who owns the mug?").dialogue == ""
    evidence = spoken.retrieve("Who owns the mug?")
    assert evidence.dialogue == "Amelia: The mug on the table is mine."
    assert evidence.text.endswith(evidence.dialogue) and evidence.structured_text.endswith(evidence.dialogue)
    assert isinstance(spoken, ConceptGraphMemory) and not isinstance(spoken, SnapshotMemory)


def test_formation_is_deterministic(box_views):
    first, second = build("3dmem", box_views).state_dict(), build("3dmem", box_views).state_dict()
    assert pickle.dumps(first) == pickle.dumps(second)
