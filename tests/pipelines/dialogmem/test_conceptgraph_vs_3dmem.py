"""ConceptGraph and 3D-Mem on one generated episode: the same instance map, different relation evidence.

Both memories fuse the same instances; ConceptGraphs reads ``on`` / ``near`` from its 3D relation
graph over every instance, 3D-Mem only what an object's snapshot image shows. On the session's
small generated episode (simulated perception, 64x48 camera) the structured reasoner's replies
differ on some items, the differing evidence is exactly those relation facts, and 3D-Mem reading
the 3D graph (``snapshot_relations=graph``) replies as ConceptGraph does on every item.
"""

from __future__ import annotations

import numpy as np
import pytest

from memgym.agents.agent import form_episode
from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.config import load_config
from memgym.core.episode import Dataset
from memgym.core.registry import MEMORIES
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig, store_config
from memgym.pipelines.dialogmem.evaluation import build_env, build_memory
from memgym.pipelines.structured_reasoner import StructuredReasoner

CAMERA = ("camera.width=64", "camera.height=48")
RELATIONS = ("on", "near")


@pytest.fixture(scope="module")
def memories(dialogmem_small):
    """``conceptgraph``, ``3dmem`` and ``3dmem`` reading the 3D graph, all holding the one map that
    formation on the first episode built, and that episode."""
    config = load_config(DialogMemEvalConfig, overrides=(f"dataset={dialogmem_small}", "memory=3dmem", *CAMERA))
    episode = next(iter(Dataset.load(dialogmem_small)))
    formed = build_memory(config)
    form_episode(build_env(config, formed, {}), ReasonerAgent(formed, StructuredReasoner()), episode=episode)
    state = formed.state_dict()
    out = {"3dmem": formed}
    for name, relations in (("conceptgraph", ""), ("3dmem_graph", "graph")):
        options = load_config(
            DialogMemEvalConfig,
            overrides=(f"memory={name.split('_')[0]}", f"visual.snapshot_relations={relations}", *CAMERA),
        )
        memory = MEMORIES.get(options.memory).from_options(options)
        memory.load_state_dict(state)
        memory.bind_episode(episode)
        out[name] = memory
    return out, episode


def replies(memory, episode) -> dict[str, str]:
    """Item id -> the structured reasoner's reply (``OBJECT <id>``, an answer or ``unknown``)."""
    agent = ReasonerAgent(memory, StructuredReasoner())
    out = {}
    for item in episode.items:
        agent.answer({"text": item.prompt, "position": np.zeros(3, np.float32)}, {"task": item.task})
        out[item.item_id] = agent.last_reply
    return out


def test_3dmem_relations_are_what_its_snapshots_show_and_change_replies(memories):
    by_name, episode = memories
    conceptgraph, snapshot, graph = (replies(by_name[n], episode) for n in ("conceptgraph", "3dmem", "3dmem_graph"))
    assert graph == conceptgraph  # the same map and candidates: only the relation evidence differs
    differing = [i for i in episode.items if snapshot[i.item_id] != conceptgraph[i.item_id]]
    assert differing  # 4 of 61 items with this episode and camera
    memory, reference = by_name["3dmem"], by_name["conceptgraph"]
    shown = {o: set(memory.frame_objects[s.frame]) for s in memory.snapshots() for o in s.objects}
    labels = {i.id: i.label for i in memory.objects.instances}
    for item in differing:
        mine = sorted(memory.retrieve(item.prompt).entries, key=lambda e: e.id)  # grouped by snapshot
        theirs = sorted(reference.retrieve(item.prompt).entries, key=lambda e: e.id)
        assert [(e.id, e.label, e.location) for e in mine] == [(e.id, e.label, e.location) for e in theirs]
        changed = False
        for entry, other in zip(mine, theirs):
            rest = {k: v for k, v in entry.facts.items() if k not in RELATIONS}
            assert rest == {k: v for k, v in other.facts.items() if k not in RELATIONS}
            for key in RELATIONS:  # 3D-Mem names only categories its snapshot's image shows
                assert key not in entry.facts or entry.facts[key] in {labels[o] for o in shown[entry.id]}
                changed |= entry.facts.get(key) != other.facts.get(key)
        assert changed, item.prompt


def test_store_records_the_snapshot_relations_of_snapshot_memories_only():
    resolved = {
        name: store_config(load_config(DialogMemEvalConfig, overrides=(f"memory={name}",))).visual.snapshot_relations
        for name in ("3dmem", "3dmem+controlled", "3dmem+gt_metadata", "conceptgraph", "frames")
    }
    assert resolved == {
        "3dmem": "image",
        "3dmem+controlled": "image",
        "3dmem+gt_metadata": "image",
        "conceptgraph": "",
        "frames": "",
    }
