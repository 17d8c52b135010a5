"""The linking diagnosis: stratified subset, probes' confirm step, the sweep end to end and resume."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from memgym.agents.agent import form_episode, run_episode
from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.backends.throughput import Throughput
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError
from memgym.core.results import RunStore
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.pipelines.dialogmem.evaluation import build_env, build_memory, item_rows
from memgym.pipelines.dialogmem.link_sweep import stratified_subset, sweep, sweep_levels
from memgym.pipelines.dialogmem.memory_measures import LinkLog, Localisation
from memgym.pipelines.structured_reasoner import StructuredReasoner
from tests.pipelines.dialogmem.test_evaluation import EVAL


@pytest.fixture(scope="module")
def dataset(dialogmem_small) -> Path:
    """The session's small dataset (tests/conftest.py), generated with ``SMALL``."""
    return dialogmem_small


def test_stratified_subset_is_proportional_capped_and_seeded(dataset):
    episodes = list(Dataset.load(dataset))
    keys, counts = stratified_subset(episodes, 4, 1000, seed=0)
    navigation = [c for c in counts if c["task"] == "navigation"]
    qa = [c for c in counts if c["task"] == "qa"]
    assert sum(c["n"] for c in navigation) == 4 and sum(c["n"] for c in qa) == sum(c["available"] for c in qa)
    total = sum(c["available"] for c in navigation)
    for c in navigation:  # largest remainders: within one item of the proportional share
        assert abs(c["n"] - 4 * c["available"] / total) < 1
    assert len(keys) == len(set(keys)) == 4 + sum(c["n"] for c in qa)
    assert stratified_subset(episodes, 4, 1000, seed=0) == (keys, counts)
    assert sweep_levels(10) == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100] and sweep_levels(40) == [0, 40, 80, 100]


class Unknown:
    """A reasoner that names the categories asked for but never confirms an entry."""

    def generate(self, messages, max_new_tokens=32):
        text = messages[-1].text_only()
        return StructuredReasoner().generate(messages) if text.startswith("CATEGORIES") else "unknown"


def play(dataset: Path, tmp_path: Path, memory_name: str, reasoner) -> tuple[list[dict], set[str]]:
    """The navigation rows of the first episode and the annotated objects its memory holds an entry for."""
    # exact perception: under simulated errors the entry's facts may no longer fit the instruction,
    # and the reasoner rightly declines it (the paper's small oracle shortfall)
    overrides = (f"dataset={dataset}", f"memory={memory_name}", "visual.perception=exact", *EVAL)
    config = load_config(DialogMemEvalConfig, overrides=overrides)
    episode = next(iter(Dataset.load(dataset)))
    memory = build_memory(config)
    env = build_env(config, memory, {})
    played = run_episode(env, ReasonerAgent(memory, reasoner), episode=episode)
    located = Localisation(episode, memory.measures(episode).get("entry_objects", {}))
    rows = [row for _, row in item_rows(episode, played.answers, located)]
    return [r for r in rows if r["task"] == "navigation"], set(memory.entries_of_objects()[1])


@pytest.mark.parametrize("probe", ["3dmem+oracle_selection", "3dmem+oracle_position"])
def test_oracle_probes_need_the_reasoner_to_confirm_the_entry(dataset, tmp_path, probe):
    rows, held = play(dataset, tmp_path, probe, StructuredReasoner())
    # the reasoner confirms the supplied entry of every target the memory holds; a target the map
    # never formed an entry for (too few pixels at this camera) has none to confirm, and is declined
    confirmed = [r for r in rows if r["prediction"].startswith("OBJECT ")]
    assert [r["object_id"] in held for r in rows] == [r in confirmed for r in rows]
    assert all(r in confirmed or r["prediction"] == "unknown" for r in rows) and len(confirmed) >= 0.8 * len(rows)
    if probe == "3dmem+oracle_position":
        assert all(r["geodesic_success"] for r in confirmed)
    refused, _ = play(dataset, tmp_path, probe, Unknown())
    assert refused and not any(r["geodesic_success"] for r in refused)  # not granted success


def test_oracle_selection_supplies_the_target_entry_alone(dataset):
    config = load_config(DialogMemEvalConfig, overrides=(f"dataset={dataset}", "memory=3dmem+oracle_selection", *EVAL))
    episode = next(iter(Dataset.load(dataset)))
    memory = build_memory(config)
    env = build_env(config, memory, {})
    form_episode(env, ReasonerAgent(memory, StructuredReasoner()), episode=episode)
    matched, entry = memory.entries_of_objects()
    for item in episode.items:
        evidence = memory.retrieve(item.prompt)
        target = item.annotations["object_id"]
        if target in entry:
            assert [e.id for e in evidence.entries] == [entry[target]] and matched[entry[target]] == target
            estimated = next(i.location for i in memory.objects.instances if i.id == entry[target])
            assert evidence.entries[0].location == estimated  # 3D-Mem's estimate, not the annotation
        else:
            assert evidence.entries == ()


def run_sweep(dataset: Path, runs: Path, *extra: str) -> Path:
    overrides = (
        f"dataset={dataset}",
        *EVAL,
        "sweep=link_quality",
        "sweep_step=100",
        "name=diag",
        "memories=[dialogue]",
        *extra,
    )
    return sweep(JobArgs(overrides=overrides, runs_dir=runs, progress=False))


@pytest.mark.slow  # every sweep variant evaluated; in 'make test'
def test_sweep_end_to_end_and_resume(dataset, tmp_path):
    folder = run_sweep(dataset, tmp_path)
    subset = json.loads((folder / "subset.json").read_text())
    levels = list(csv.DictReader((folder / "link_quality.csv").open()))
    assert [(r["mode"], float(r["level"])) for r in levels] == [
        ("missing", 0.0),
        ("missing", 100.0),
        ("wrong", 0.0),
        ("wrong", 100.0),
    ]
    assert [float(r["link_quality"]) for r in levels] == [0.0, 100.0, 0.0, 100.0]
    missing0 = LinkLog(folder / "sweep" / "controlled-missing-000" / "links.json").total()
    wrong0 = LinkLog(folder / "sweep" / "controlled-wrong-000" / "links.json").total()
    assert missing0.linked == 0 and wrong0.linked > 0 and wrong0.correct == 0
    for name in ("3dmem", "3dmem+vlm", "3dmem+oracle_position", "controlled-wrong-100", "dialogue"):
        rows = [json.loads(x) for x in (folder / "sweep" / name / "results.jsonl").read_text().splitlines()]
        assert sorted(r["key"] for r in rows) == sorted(subset["items"]) and not any(r.get("error") for r in rows)
    table3 = (folder / "table3.md").read_text()
    assert "| 3dmem+oracle_position | probe |" in table3 and "3dmem+clip skipped" in table3
    for output in ("comparison.md", "comparison.csv", "link_quality.md"):
        assert (folder / output).stat().st_size > 0
    for picture in ("link_quality.png", "comparison.png"):
        assert (folder / picture).read_bytes().startswith(b"\x89PNG")
    again = run_sweep(dataset, tmp_path / "again")  # deterministic: a fresh run writes the same tables
    for output in ("link_quality.csv", "table3.md", "comparison.csv", "subset.json"):
        assert (again / output).read_text() == (folder / output).read_text()
    before = {p: p.read_text() for p in folder.glob("sweep/*/results.jsonl")}
    # interrupted: one variant lost its last rows; the re-run redoes exactly those
    partial = folder / "sweep" / "controlled-wrong-000" / "results.jsonl"
    lines = partial.read_text().splitlines(keepends=True)
    partial.write_text("".join(lines[: len(lines) // 2]))
    assert run_sweep(dataset, tmp_path) == folder
    after = {p: p.read_text() for p in folder.glob("sweep/*/results.jsonl")}
    strip = lambda text: sorted(  # noqa: E731
        json.dumps({k: v for k, v in json.loads(x).items() if k != "time"}, sort_keys=True) for x in text.splitlines()
    )
    assert {p: strip(t) for p, t in after.items()} == {p: strip(t) for p, t in before.items()}
    assert np.isclose(float(list(csv.DictReader((folder / "link_quality.csv").open()))[3]["link_quality"]), 100.0)

    smaller = run_sweep(dataset, tmp_path, "subset_qa=3", "subset_navigation=2")  # the same stores, a smaller subset
    levels = list(csv.DictReader((smaller / "link_quality.csv").open()))
    assert {(r["n_qa"], r["n_navigation"]) for r in levels} == {("3", "2")}
    assert {p: strip(p.read_text()) for p in folder.glob("sweep/*/results.jsonl")} == {
        p: strip(t) for p, t in before.items()
    }  # nothing new to evaluate


def test_linked_memories_get_the_link_options():
    config = load_config(
        DialogMemEvalConfig, overrides=("memory=3dmem+controlled", "link.quality=30", "link.mode=wrong", "link.seed=4")
    )
    linker = build_memory(config).linker
    assert (linker.quality, linker.mode, linker.seed) == (30.0, "wrong", 4)
    with pytest.raises(ConfigError, match="link.clip_model"):
        build_memory(dataclasses.replace(config, memory="3dmem+clip"))
    with pytest.raises(ConfigError):
        load_config(DialogMemEvalConfig, overrides=("link.mode=sometimes",))


@pytest.mark.slow  # every sweep variant evaluated; in 'make test'
def test_sweep_with_the_clip_linker(dataset, tmp_path):
    from tests.support.tiny_hf_models import build_tiny_clip

    clip = build_tiny_clip(tmp_path / "clip")
    folder = run_sweep(dataset, tmp_path, "subset_qa=2", "subset_navigation=2")
    folder = run_sweep(dataset, tmp_path, "subset_qa=2", "subset_navigation=2", f"link.clip_model={clip}")  # adds clip
    table3 = (folder / "table3.md").read_text()
    assert "skipped" not in table3
    line = next(x for x in table3.splitlines() if x.startswith("| 3dmem+clip | linker |"))
    quality = float(line.split("|")[7])
    counts = LinkLog(folder / "sweep" / "3dmem+clip" / "links.json").total()
    assert counts.linked == counts.turns > 0 and round(counts.quality, 1) == quality  # top-1: every turn linked


class CountingReasoner(StructuredReasoner):
    """The structured reasoner counting its replies the way local models do (one token each way)."""

    calls = 0

    def __init__(self) -> None:
        super().__init__()
        self.throughput = Throughput()

    def generate(self, messages, *, max_new_tokens: int = 256) -> str:
        CountingReasoner.calls += 1
        self.throughput.add(1, 1, 0.0, 0.0)
        return super().generate(messages, max_new_tokens=max_new_tokens)


def test_sweep_records_every_reply_in_the_variants_environment(dataset, tmp_path, monkeypatch):
    import memgym.backends.config
    import memgym.pipelines.dialogmem.evaluation

    for module in (memgym.backends.config, memgym.pipelines.dialogmem.evaluation):
        monkeypatch.setattr(module, "build_reasoner", lambda config: CountingReasoner())
    CountingReasoner.calls = 0
    folder = run_sweep(dataset, tmp_path, "subset_qa=2", "subset_navigation=1")
    counted = [
        json.loads(p.read_text()).get("throughput", {}).get("reasoner", {}).get("replies", 0)
        for p in folder.glob("sweep/*/environment.json")
    ]
    assert CountingReasoner.calls > 0 and sum(counted) == CountingReasoner.calls  # none lost, none twice
    assert sum(c > 0 for c in counted) > 1  # each variant's replies in its own run


def test_the_shared_formation_gives_each_variant_the_rows_of_its_own_formation(dataset, tmp_path):
    """The sweep's fast path (one 3dmem formation per episode, copied into each variant, answers
    after rewind_use) against each variant played alone through the eval's env loop, item by item."""
    from memgym.pipelines.dialogmem.evaluation import evaluate_memory, item_key
    from memgym.pipelines.dialogmem.link_sweep import SharedFormation, Variant

    config = load_config(DialogMemEvalConfig, overrides=(f"dataset={dataset}", *EVAL))
    episode = next(iter(Dataset.load(dataset)))
    variants = [  # a linked variant and a probe (a baseline's path is the linked one's without links)
        Variant("controlled-wrong-050", "3dmem+controlled", "controlled", "wrong", 50.0),
        Variant("3dmem+oracle_position", "3dmem+oracle_position", "probe"),
    ]
    only = {item_key(episode, i) for i in episode.items}
    shared = {v.name: RunStore.open(tmp_path, "shared", v.config(config), name=v.name) for v in variants}
    assert SharedFormation(config, variants, tmp_path / "judge.jsonl").play(episode, shared, only)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "time"} for r in rows]  # noqa: E731
    for v in variants:
        alone = RunStore.open(tmp_path, "alone", v.config(config), name=v.name)
        evaluate_memory(v.config(config), alone, [episode], [], False)
        assert strip(shared[v.name].rows()) == strip(alone.rows()), v.name
        links = [LinkLog(store.folder / "links.json").load() for store in (shared[v.name], alone)]
        assert links[0] == links[1] and links[0], v.name
