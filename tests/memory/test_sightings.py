"""One definition of a sighting: the visual memories count ``times_seen`` and ``order`` as the
DialogMem annotation does (>= 5% of the view, :mod:`memgym.sensors.sightings`)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest
from dialogmem_fixtures import OBJECTS, TRAVERSAL
from sighting_survey import survey
from small_houses import SMALL_HOUSES

from memgym.agents.agent import form_episode
from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.records import from_json
from memgym.core.registry import MEMORIES
from memgym.datasets.dialogmem.episode import build_episode
from memgym.memory.embodied.ground_truth import SceneTruth, match_instances
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.pipelines.dialogmem.evaluation import build_env, build_memory, load_episodes
from memgym.pipelines.dialogmem.generation import generate
from memgym.pipelines.structured_reasoner import StructuredReasoner
from memgym.sensors.sightings import MAX_SIGHTING_GAP, count_sightings, seen_frames, sighting_ranks
from tests.support.box_scene import TABLE_LABELS, TABLE_MEMORY_OPTIONS, table_memory

# the memory's camera renders at the annotation's visibility resolution (64 px wide), so both
# measure the same coverage in every frame
CAMERA = ("camera.width=64", "camera.height=48")


def test_sightings_are_frames_covering_five_percent_with_short_gaps_bridged():
    assert seen_frames({3: 0.05, 1: 0.2, 2: 0.049, 7: 0.3}) == [1, 3, 7]
    assert MAX_SIGHTING_GAP == 6
    # up to 6 unseen frames inside one sighting (a glance away, coverage dipping under 5%), 7 split it
    assert count_sightings([1, 3, 7]) == 1 and count_sightings([0, 7]) == 1 and count_sightings([0, 8]) == 2
    assert count_sightings([8, 0, 1, 16, 16, 24]) == 3 and count_sightings([]) == 0 and count_sightings([5]) == 1
    # max_gap=0: maximal runs of consecutive frames
    assert count_sightings([1, 3, 7], max_gap=0) == 3 and count_sightings([4, 5, 6, 9, 10], max_gap=0) == 2
    # order within a category by first sighting; objects first seen together get none
    first = {"a": 4, "b": 2, "c": 4, "d": 9, "mug": 1}
    groups = {"a": "chair", "b": "chair", "c": "chair", "d": "chair", "mug": "mug"}
    assert sighting_ranks(first, groups) == {"b": 0, "d": 3, "mug": 0}


@pytest.mark.parametrize("name", ["conceptgraph", "3dmem"])
def test_memories_count_sightings_with_the_gap_the_episode_recorded(box_views, monkeypatch, name):
    """A memory bound to an episode counts ``times_seen`` with the gap the episode's annotation
    recorded; a record without one (a dataset built before it was recorded, whose annotation counted
    runs of consecutive frames) is counted with gap 0, so old datasets evaluate as before."""
    blank = {**box_views[0], "semantic": np.zeros_like(box_views[0]["semantic"])}  # nothing in view
    memory = table_memory(name, [box_views[0], blank, blank, blank, box_views[1]])
    (crate,) = [i for i in memory.objects.instances if i.seen_frames() == [0, 4]]  # 3 unseen frames between
    assert memory.facts()[crate.id]["times_seen"] == "once"  # bound to no episode: MAX_SIGHTING_GAP
    # the gt detector's label table comes from the episode's scene: the box scene's here
    scene = types.SimpleNamespace(
        objects=[types.SimpleNamespace(semantic_id=k, category=c) for k, c in TABLE_LABELS.items()]
    )
    monkeypatch.setattr("memgym.scenes.spec.load_scene", lambda spec: scene)
    episode = build_episode(episode_id="e0", objects=OBJECTS, traversal=TRAVERSAL, rng=np.random.default_rng(0))
    record = json.loads(episode.to_json())
    for recorded, times in ((6, "once"), (3, "once"), (2, "twice"), (0, "twice"), (None, "twice")):
        annotations = {k: v for k, v in record["data"]["annotations"].items() if k != "max_sighting_gap"}
        if recorded is not None:
            annotations["max_sighting_gap"] = recorded
        memory.bind_episode(from_json(json.dumps({**record, "data": {**record["data"], "annotations": annotations}})))
        assert memory.sighting_gap == (recorded or 0)
        assert memory.facts()[crate.id]["times_seen"] == times, recorded
    restored = MEMORIES.get(name)(**TABLE_MEMORY_OPTIONS)  # unbound (MAX_SIGHTING_GAP) until its state is loaded
    restored.load_state_dict(memory.state_dict())
    assert restored.facts()[crate.id]["times_seen"] == "twice"  # the state keeps the bound episode's gap


@pytest.fixture(scope="module")
def formed(tmp_path_factory):
    """One small house's episode and the conceptgraph memory formed on it (gt detector, exact
    perception: the simulated detector's misses would lower the counts by design)."""
    out = tmp_path_factory.mktemp("sightings") / "episodes.jsonl"
    # without clutter, so that fusion keeps each object one instance (merges of touching objects of
    # a category are the memory's errors, not the counting's)
    small = [o for o in SMALL_HOUSES if not o.startswith("camera.")]
    overrides = ("scenes=1", *small, "first_house_seed=6", "house.clutter=none", *CAMERA)
    (episode,), _ = load_episodes(Path(generate(JobArgs(overrides=overrides, out=out, progress=False))))
    config = load_config(
        DialogMemEvalConfig, overrides=(f"dataset={out}", "memory=conceptgraph", "visual.perception=exact", *CAMERA)
    )
    memory = build_memory(config)
    form_episode(build_env(config, memory, {}), ReasonerAgent(memory, StructuredReasoner()), episode=episode)
    return episode, memory


@pytest.mark.slow
def test_memory_sightings_equal_the_annotation(formed):
    episode, memory = formed
    truth = {(m.object_id, m.key): m.value for m in episode.memory if m.key in ("times_seen", "order")}
    instances = {i.id: i for i in memory.objects.instances}
    per_object: dict[str, list[str]] = {}
    for instance_id, object_id in match_instances(SceneTruth.of(episode), memory.objects.instances).items():
        per_object.setdefault(object_id, []).append(instance_id)
    facts = memory.facts()
    compared = 0
    for observation in episode.traversal.observations:
        matched = per_object[observation.object_id]
        if any(len(memory.provenance.get(i, {})) != 1 for i in matched):
            continue  # fusion merged another object's views into it: a map error, not a counting one
        # the frames it is seen in are the annotation's, however fusion split it into instances
        assert sorted(f for i in matched for f in instances[i].seen_frames()) == list(observation.frames)
        if len(matched) == 1:
            own = facts[matched[0]]
            for key in ("times_seen", "order"):
                assert own.get(key) == truth.get((observation.object_id, key)), (observation.object_id, key)
            compared += 1
    assert compared >= 10


@pytest.mark.slow
def test_default_perception_keeps_sightings():
    """With the default simulated detector (time-correlated misses at the recall of clearly visible
    objects), the memory's ``times_seen`` equals the annotation's for at least 80% of the
    single-instance objects, and sightings that bridge up to :data:`MAX_SIGHTING_GAP` unseen
    frames keep it far more often than runs of consecutive frames would. Houses 14 and 18, held
    out of the detector's tuning (docs/dialogmem.md, "Sightings under the default simulated
    perception"): 14 / 15 against 4 / 15; over houses 5-21, 123 / 143 (86%) against 82 / 143."""
    houses = [survey("simulated", seed) for seed in (14, 18)]
    single = sum(h.single for h in houses)
    bridged, runs = (sum(h.kept(gap) for h in houses) / single for gap in (MAX_SIGHTING_GAP, 0))
    assert sum(h.times_seen for h in houses) == sum(h.kept(MAX_SIGHTING_GAP) for h in houses)  # the facts use it
    assert single >= 12 and bridged >= 0.8 and bridged - runs >= 0.4, (single, bridged, runs)
