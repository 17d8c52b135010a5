"""3D-Mem snapshots: every object in one snapshot, retrieval by category, the linker seam."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.errors import ConfigError
from memgym.memory.embodied.linking import Linker
from memgym.memory.embodied.snapshots import SnapshotMemory
from memgym.pipelines.structured_reasoner import StructuredReasoner
from tests.support.box_scene import TABLE_SCENE, table_memory


def build(views, name="3dmem"):
    memory = table_memory(name, views)
    memory.bind_reasoner(StructuredReasoner())
    return memory


def test_every_object_is_in_exactly_one_snapshot_with_a_kept_image(box_views):
    memory = build(box_views)
    snapshots = memory.snapshots()
    members = [o for s in snapshots for o in s.objects]
    assert sorted(members) == sorted(i.id for i in memory.objects.instances)
    for snapshot in snapshots:
        assert snapshot.image.shape == (96, 128, 3)
        assert np.array_equal(snapshot.image, box_views[snapshot.frame]["rgb"])
        assert all(o in memory.frame_objects[snapshot.frame] for o in snapshot.objects)


def test_retrieval_keeps_snapshots_with_the_predicted_categories(box_views):
    memory = build(box_views)
    evidence = memory.retrieve("Go to the mug.")
    kept = {e.group for e in evidence.entries}
    assert evidence.categories == ("mug",)
    assert len(evidence.images) == len(kept) == len(evidence.captions)
    assert {e.label for e in evidence.entries} == {"mug"}  # a kept snapshot offers its objects of those categories
    assert all(e.group.startswith("snap_") for e in evidence.entries)
    agent = ReasonerAgent(memory, StructuredReasoner())
    action = agent.answer({"text": "Go to the mug.", "position": np.zeros(3)}, {"task": "navigation"})
    assert np.linalg.norm(action["position"] - np.array(TABLE_SCENE[3][0])) < 0.05


class FirstSnapshotLinker(Linker):
    def link(self, inputs):
        return {inputs.snapshots[0].id: list(range(len(inputs.turns)))}


def test_a_linker_attaches_turns_to_snapshots(box_views):
    memory = build(box_views)
    assert all(s.turns == [] for s in memory.snapshots())
    memory.linker = FirstSnapshotLinker()
    first = memory.snapshots()[0]
    assert first.turns == [0]
    held = [o for o in first.objects]
    label = memory.objects.instances[int(held[0].split("_")[1])].label
    evidence = memory.retrieve(f"Go to the {label}.")
    assert evidence.dialogue == ""  # 3dmem appends no transcript: a kept snapshot carries its linked turns
    assert evidence.linked == ((first.id, "Amelia: The mug on the table is mine."),)
    assert all(e.said == ("Amelia: The mug on the table is mine.",) for e in evidence.entries if e.group == first.id)
    assert "Amelia: The mug on the table is mine." in evidence.structured_text
    memory.reset()
    assert isinstance(memory, SnapshotMemory) and isinstance(memory.linker, FirstSnapshotLinker)


def test_retrieval_keeps_at_most_top_k_categories_in_the_order_named(box_views):
    memory = build(box_views)
    assert memory.retrieve("Go to the mug on the table.").categories == ("mug", "table")
    memory.top_k_categories = 1
    evidence = memory.retrieve("Go to the mug on the table.")
    assert evidence.categories == ("mug",) and {e.label for e in evidence.entries} == {"mug"}
    with pytest.raises(ConfigError, match="top_k_categories"):
        SnapshotMemory(top_k_categories=0)
    with pytest.raises(ConfigError, match="snapshot_relations"):
        SnapshotMemory(snapshot_relations="scene")
