"""The eval's perception settings: hashes of run stores, the memories built, the perception table."""

from __future__ import annotations

import dataclasses

from memgym.core.config import load_config
from memgym.core.seeding import config_hash
from memgym.pipelines.dialogmem.comparison import perception_rows
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig, store_config
from memgym.pipelines.dialogmem.evaluation import build_memory


def test_visual_stores_hash_the_resolved_perception_and_others_keep_theirs():
    default = load_config(DialogMemEvalConfig, overrides=("memory=dialogue",))
    assert store_config(default) is default and config_hash(default) == "baf0848c987aa2ee"  # memory=dialogue
    cg = dataclasses.replace(default, memory="conceptgraph")
    simulated = store_config(cg)
    assert simulated.visual.perception == "simulated" and config_hash(simulated) != config_hash(cg)
    exact = load_config(DialogMemEvalConfig, overrides=("memory=conceptgraph", "visual.perception=exact"))
    assert store_config(exact) is exact
    assert len({config_hash(cg), config_hash(simulated), config_hash(exact)}) == 3
    rates = load_config(DialogMemEvalConfig, overrides=("memory=conceptgraph", "visual.noise.confusion=0.3"))
    assert config_hash(store_config(rates)) != config_hash(simulated)
    snapshots = store_config(dataclasses.replace(exact, memory="3dmem"))  # and 3D-Mem's relation source
    assert snapshots.visual.snapshot_relations == "image" and config_hash(snapshots) != config_hash(exact)


def test_memories_are_built_with_the_perception_asked_for():
    config = load_config(DialogMemEvalConfig, overrides=("memory=3dmem", "visual.noise.split=0.2"))
    memory = build_memory(config)
    assert memory.options["perception"] == "simulated" and memory.sensor is not None
    assert memory.detector.name == "simulated" and memory.detector.noise.split == 0.2
    exact = build_memory(dataclasses.replace(config, visual=dataclasses.replace(config.visual, perception="exact")))
    assert exact.sensor is None and exact.detector.name == "gt"


def test_perception_table_reports_location_error_and_map_counts():
    rows = {
        "a": [
            {"task": "navigation", "location_error": e, "picked_target": e < 1} for e in (0.1, 0.2, 0.3, 0.4, 2.0, 3.0)
        ]
        + [{"task": "navigation"}, {"task": "qa", "location_error": 9.0}],
        "b": [{"task": "qa"}],
    }
    maps = {"a": {"e1": {"instances": 5, "merges": 1, "splits": 2, "mislabelled": 0}, "e2": {"instances": 3}}}
    a, b = perception_rows(rows, maps)
    assert a["all n"] == 6 and a["all median m"] == "0.35" and a["all p90 m"] == "2.50"
    assert a["target picks n"] == 4 and a["target picks median m"] == "0.25"
    assert (a["instances"], a["merges"], a["splits"]) == (8, 1, 2)
    assert b["all n"] == 0 and b["all median m"] == "-" and b["splits"] == "-"


def test_run_stores_record_what_each_memory_resolves_through_its_own_protocol_method():
    config = DialogMemEvalConfig()
    assert store_config(dataclasses.replace(config, memory="dialogue")) == dataclasses.replace(
        config, memory="dialogue"
    )
    frames = store_config(dataclasses.replace(config, memory="frames")).visual
    snapshot = store_config(dataclasses.replace(config, memory="3dmem+vlm")).visual
    assert (frames.perception, frames.snapshot_relations) == ("simulated", "")
    assert (snapshot.perception, snapshot.snapshot_relations) == ("simulated", "image")
