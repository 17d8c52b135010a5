"""End to end on one small generated scene: generate -> eval, resume, and per-item errors."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import re
import zlib
from pathlib import Path

import pytest
from fake_openai import FakeEndpoint
from runtime_scorers import AnswerLength, registered
from small_houses import SMALL_HOUSES

from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError, MemgymError, RegistryError
from memgym.core.outcome import watch_job
from memgym.core.seeding import config_hash, hashed_dict
from memgym.datasets.dialogmem.statistics import dataset_statistics
from memgym.datasets.dialogmem.task_specs import available_content, matches
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.pipelines.dialogmem.evaluation import evaluate
from memgym.pipelines.dialogmem.generation import DialogMemGenerateConfig, generate, scene_specs

SMALL = ("scenes=1", *SMALL_HOUSES)
LEGACY = ("house.clutter=none", "construction.unique_cues=false")  # the houses and items before clutter
EVAL = ("camera.width=32", "camera.height=24")


@pytest.fixture(scope="module")
def dataset(dialogmem_small) -> Path:
    """The session's small dataset (tests/conftest.py), generated with ``SMALL``."""
    return dialogmem_small


def run_eval(dataset: Path, runs: Path, *extra: str) -> Path:
    return evaluate(JobArgs(overrides=(f"dataset={dataset}", *EVAL, *extra), runs_dir=runs, progress=False))


def rows(run: Path, memory: str = "dialogue") -> list[dict]:
    return [json.loads(line) for line in (run / memory / "results.jsonl").read_text().splitlines()]


def test_generate_writes_episodes_stats_and_is_deterministic(dataset, tmp_path):
    episodes = Dataset.load(dataset)
    assert len(episodes) == 1 and episodes[0].items and episodes[0].dialogue
    assert "qa_verbalised_%" in dataset.with_name("episodes.stats.md").read_text()
    assert not dataset.with_name("episodes.jsonl.partial").exists()
    again = generate(JobArgs(overrides=SMALL, out=tmp_path / "again.jsonl", progress=False))
    assert again.read_text() == dataset.read_text()


def test_generate_reports_category_shortcuts_and_keeps_the_filter(dataset, tmp_path):
    """The printed and tabled share of navigation items whose target is the only observed object of
    its category (or of its category in its room), recounted here; no kept item's cues fit another
    observed object of its category."""
    episode = Dataset.load(dataset)[0]
    summary = dataset_statistics([episode])["summary"][0]
    observed = {o.object_id: o.category for o in episode.traversal.observations}
    rooms = {m.object_id: m.value for m in episode.memory if m.key == "room" and m.version == 0}
    content = available_content(list(episode.memory), set(observed))
    navigation = [i for i in episode.items if i.task == "navigation"]
    unique = room_unique = 0
    for item in navigation:
        target = item.annotations["object_id"]
        same = [o for o, c in observed.items() if c == observed[target]]
        unique += len(same) == 1
        room_unique += sum(rooms.get(o) == rooms[target] for o in same) == 1
        cues = [content[target][k] for k in item.annotations["cue_keys"]]
        assert not [o for o in same if o != target and matches(cues, content[o])], item.prompt
    assert summary["navigation_category_unique_%"] == pytest.approx(100 * unique / len(navigation))
    assert summary["navigation_category_room_unique_%"] == pytest.approx(100 * room_unique / len(navigation))
    assert summary["observed_objects_per_episode"] == len(observed)
    assert "navigation_category_unique_%" in dataset.with_name("episodes.stats.md").read_text()
    # the same small house without clutter, items sampled as before it: the category decides more
    legacy = generate(JobArgs(overrides=(*SMALL, *LEGACY), out=tmp_path / "legacy.jsonl", progress=False))
    before = dataset_statistics(Dataset.load(legacy))["summary"][0]
    assert before["navigation_category_unique_%"] >= summary["navigation_category_unique_%"] + 15
    assert before["observed_objects_per_episode"] < summary["observed_objects_per_episode"]


def test_generate_resumes_from_its_partial_file(dataset, tmp_path, capsys):
    out = tmp_path / "episodes.jsonl"
    first = generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False)).read_text().splitlines()
    expected = list(Dataset.load(out))
    digest = config_hash(load_config(DialogMemGenerateConfig, overrides=(*SMALL, "scenes=2")))
    partial = out.with_name("episodes.jsonl.partial")
    header = {"config_hash": digest, "house_clutter": "hm3d_v2"}
    # a partial file of a build before clutter existed has the same hash but holds other houses
    partial.write_text(json.dumps({"config_hash": digest}) + "\n" + first[0] + "\n")
    with pytest.raises(MemgymError, match="written by another config"):
        generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False))
    # nor is one of a build before construction.max_sighting_gap (its annotation counted runs of frames)
    earlier_config = hashed_dict(load_config(DialogMemGenerateConfig, overrides=(*SMALL, "scenes=2")))
    del earlier_config["construction"]["max_sighting_gap"]
    earlier = {**header, "config_hash": config_hash(earlier_config)}
    partial.write_text(json.dumps(earlier) + "\n" + first[0] + "\n")
    with pytest.raises(MemgymError, match="written by another config"):
        generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False))
    partial.write_text(json.dumps(header) + "\n" + first[0] + "\n" + first[1][:50])  # 2nd cut
    with pytest.raises(KeyboardInterrupt), _interrupt_after_traversals(1):
        generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False))  # stops again mid-episode
    assert partial.read_text().endswith("\n")  # the torn line was dropped before appending
    assert list(Dataset.load(generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False)))) == expected
    assert "target the only observed object of its category: " in capsys.readouterr().out


@contextlib.contextmanager
def _interrupt_after_traversals(count: int):
    """Raise KeyboardInterrupt in the traversal generator after ``count`` calls."""
    from memgym.pipelines.dialogmem import generation

    original = generation.generate_traversal
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) >= count:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    generation.generate_traversal = interrupted
    try:
        yield
    finally:
        generation.generate_traversal = original


def test_eval_end_to_end_and_resume(dataset, tmp_path):
    run = run_eval(dataset, tmp_path, "execute_navigation=true")
    items = Dataset.load(dataset)[0].items
    result = rows(run)
    assert [r["key"] for r in result] == [f"{i.item_id.split('/')[0]}|{i.item_id}" for i in items]
    navigation = [r for r in result if r["task"] == "navigation"]
    qa = [r for r in result if r["task"] == "qa"]
    assert all(r["geodesic_success"] == 0.0 and r["spl"] == 0.0 for r in navigation)
    assert all(0.0 <= r["token_f1"] <= 1.0 and "content_type" in r and "verbalised" in r for r in qa)
    assert "by content type" in (run / "dialogue" / "results.md").read_text()
    # Interrupt: keep the first half of the rows (and a torn line), then re-run the same command.
    results = run / "dialogue" / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:20])
    again = run_eval(dataset, tmp_path, "execute_navigation=true")
    assert again == run and rows(again) == result


def test_endpoint_failures_become_item_errors(dataset, tmp_path):
    with watch_job() as outcome:
        run_eval(
            dataset,
            tmp_path,
            "reasoner.backend=openai",
            "reasoner.model=m",
            "reasoner.base_url=http://127.0.0.1:9/v1",
            "reasoner.max_retries=0",
            "reasoner.timeout_s=0.5",
        )
    with pytest.raises(MemgymError, match=r"all \d+ items of .*results.jsonl failed"):  # every item failed: exit 2
        outcome.finish()
    (run,) = (tmp_path / "eval-dialogmem").iterdir()
    result = rows(run)
    assert len(result) == len(Dataset.load(dataset)[0].items)
    assert all("cannot connect" in r["error"] or "connection" in r["error"] for r in result)
    assert f"{len(result)} item(s) with errors" in (run / "dialogue" / "results.md").read_text()
    assert f"dialogue {len(result)}" in (run / "comparison.md").read_text()


def test_bad_datasets_are_reported_per_item(dataset, tmp_path, capsys):
    from memgym.cli import main

    line = dataset.read_text().splitlines()[0]
    record = json.loads(line)
    dangling = json.loads(line)
    dangling["data"]["episode_id"] = "dangling"
    dangling["data"]["dialogue"][0]["spec"]["referenced"] = ["ghost_1"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(record), json.dumps(record), json.dumps(dangling)]) + "\n")
    args = ["eval", "dialogmem", f"dataset={bad}", *EVAL, "--runs-dir", str(tmp_path), "--no-progress"]
    assert main(args) == 0  # some items were scored: finished, with one warning line
    (run,) = (tmp_path / "eval-dialogmem").iterdir()
    result = rows(run)
    errors = [r for r in result if r.get("error")]
    assert any("duplicated episode id" in r["error"] for r in errors)
    assert sum("ghost_1" in r["error"] for r in errors) == len(dangling["data"]["items"])
    scored = [r for r in result if not r.get("error")]
    assert len(scored) == len(record["data"]["items"])
    warning = capsys.readouterr().err.strip().splitlines()
    assert warning == [
        f"memgym: warning: {len(errors)} of {len(result)} items failed (first: {errors[0]['error']}); "
        "re-run the same command to retry them"
    ]


def test_llm_match_without_a_model_is_a_config_error(dataset, tmp_path):
    with pytest.raises(ConfigError, match="judge"):
        run_eval(dataset, tmp_path, "qa_scorer=llm_match", "judge.backend=structured")


def test_cli_eval_and_bad_keys(dataset, tmp_path, capsys):
    from memgym.cli import main

    args = ["eval", "dialogmem", f"dataset={dataset}", *EVAL, "--runs-dir", str(tmp_path), "--no-progress"]
    assert main(args) == 0
    assert main(["eval", "dialogmem", "memroy=dialogue", "--runs-dir", str(tmp_path)]) == 2
    assert "unknown key 'memroy'" in capsys.readouterr().err
    assert main(["eval", "dialogmem", f"dataset={tmp_path / 'none.jsonl'}", "--runs-dir", str(tmp_path)]) == 2
    assert "memgym generate dialogmem" in capsys.readouterr().err
    assert main(["eval", "dialogmem", f"dataset={dataset}", "memory=no_such_memory", "--runs-dir", str(tmp_path)]) == 2
    assert "unknown memory 'no_such_memory'" in capsys.readouterr().err


def test_generate_from_hm3d_layout(tmp_path):
    """A generated house exported in the HM3D file layout (with GOAT-style annotations) is read back."""
    from memgym.scenes.hm3d import export_hm3d
    from memgym.scenes.procedural import HouseConfig, generate_house

    house = generate_house(7, HouseConfig(min_rooms=3, max_rooms=3))
    export_hm3d(house, tmp_path / "hm3d" / "00001-house7", "house7")
    overrides = ("source=hm3d", f"hm3d_path={tmp_path / 'hm3d'}", *SMALL[4:])
    out = generate(JobArgs(overrides=overrides, out=tmp_path / "hm3d.jsonl", progress=False))
    episode = Dataset.load(out)[0]
    assert episode.traversal.scene.backend == "hm3d" and episode.items and episode.dialogue
    with pytest.raises(ConfigError, match="hm3d_path"):
        generate(JobArgs(overrides=("source=hm3d",), out=tmp_path / "x.jsonl", progress=False))
    with pytest.raises(ConfigError, match="goat_path"):
        generate(JobArgs(overrides=(*overrides, f"goat_path={tmp_path}"), out=tmp_path / "y.jsonl", progress=False))
    # Annotations in a separate GOAT-style folder, named by scene id.
    goat = tmp_path / "goat"
    goat.mkdir()
    (tmp_path / "hm3d" / "00001-house7" / "house7.objects.json.gz").rename(goat / "house7.json.gz")
    out = generate(JobArgs(overrides=(*overrides, f"goat_path={goat}"), out=tmp_path / "goat.jsonl", progress=False))
    assert Dataset.load(out)[0].traversal.scene.options["annotations"] == str(goat / "house7.json.gz")


def test_hm3d_scene_stems_accept_basis_glb(tmp_path):
    """HM3D v0.2 folders hold X.basis.glb: one stem per scene, whichever mesh file(s) it has."""
    for name in ("00001-A/A.glb", "00001-A/A.basis.glb", "00001-A/A.semantic.glb", "00002-B/B.basis.glb"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "goat").mkdir()
    (tmp_path / "goat" / "B.json.gz").write_bytes(b"")
    config = DialogMemGenerateConfig(source="hm3d", hm3d_path=str(tmp_path), scenes=5)
    assert [s.path for s in scene_specs(config)] == [str(tmp_path / "00001-A/A"), str(tmp_path / "00002-B/B")]
    config = dataclasses.replace(config, goat_path=str(tmp_path / "goat"), scenes=2)
    with pytest.raises(ConfigError, match=r"no A.json.gz or A.json"):
        scene_specs(config)
    (tmp_path / "goat" / "A.json").write_bytes(b"")
    assert scene_specs(config)[1].options["annotations"] == str(tmp_path / "goat" / "B.json.gz")


@pytest.fixture
def judge_server():
    """A chat-completions endpoint that rates 4, or replies garbage for questions starting with "What"."""
    endpoint = FakeEndpoint(respond=lambda prompt: "maybe" if "Question: What" in prompt else "4")
    yield endpoint.base_url, endpoint.prompts
    endpoint.close()


def test_qa_scorer_takes_a_scorer_registered_at_runtime(dataset, tmp_path):
    """The env scores every QA answer once with it; the rows hold its metrics."""
    AnswerLength.calls = 0
    with registered("test_answer_length", AnswerLength):
        run = run_eval(dataset, tmp_path, "qa_scorer=test_answer_length")
    qa = [r for r in rows(run) if r["task"] == "qa"]
    assert qa and AnswerLength.calls == len(qa)
    assert all(r["answer_chars"] == len(r["prediction"]) and "token_f1" not in r for r in qa)
    assert all("answer_chars" not in r for r in rows(run) if r["task"] == "navigation")
    assert "## QA by verbalised / updated" in (run / "dialogue" / "results.md").read_text()


def test_llm_match_judge_scores_caches_and_records_unparseable_replies(dataset, tmp_path, judge_server):
    url, calls = judge_server
    judge = ("qa_scorer=llm_match", "judge.backend=openai", "judge.model=judge", f"judge.base_url={url}")
    run = run_eval(dataset, tmp_path, *judge)
    qa = [r for r in rows(run) if r["task"] == "qa"]
    assert qa and len(calls) == len(qa)
    assert {row["prompt"].startswith("What") for row in qa} == {True, False}
    for row in qa:
        if row["prompt"].startswith("What"):
            assert "not a rating" in row["error"] and row.get("llm_match") is None
        else:
            assert row["llm_match"] == 75.0 and row["judge_rating"] == 4
    cached = (run / "dialogue" / "judge_cache.jsonl").read_text().splitlines()
    assert len(cached) == sum(1 for r in qa if "llm_match" in r)
    assert "## qa: llm_match" in (run / "comparison.md").read_text()
    # Resume after losing every result row: judged items come from the cache, failures are asked again.
    (run / "dialogue" / "results.jsonl").write_text("")
    calls.clear()
    run_eval(dataset, tmp_path, *judge)
    assert len(calls) == sum(1 for r in qa if r["prompt"].startswith("What"))


def _write_or_audit(prompt: str) -> str:
    """'yes' to an audit, residents to an invention request, else the realiser prompt's content as a line."""
    if prompt.startswith("A dialogue line must"):
        return "yes"
    if prompt.startswith("Invent"):
        count = int(re.match(r"Invent (\d+) people", prompt).group(1))
        names = ("Zoe", "Yan", "Xia", "Wim")[:count]
        return json.dumps([{"name": n, "relationship": "roommate", "style": "formal"} for n in names])
    content = re.search(r"nothing else about any object: (.*)\.\nRules", prompt, re.S).group(1)
    speaker = re.search(r"spoken by (\w+),", prompt).group(1)
    return f'{speaker}: "{content[0].upper()}{content[1:]}."\n(extra line)'


@pytest.fixture
def writer_server():
    """An endpoint that writes utterances from the realiser prompt's content and audits with 'yes'."""
    endpoint = FakeEndpoint(respond=_write_or_audit)
    yield endpoint.base_url, endpoint.prompts
    endpoint.close()


def test_llm_realiser_and_audit_through_an_endpoint(tmp_path, writer_server):
    url, prompts = writer_server
    writer = (
        "realiser=llm",
        "audit=true",
        "profiles=llm",
        "writer.backend=openai",
        "writer.model=w",
        f"writer.base_url={url}",
    )
    out = generate(JobArgs(overrides=(*SMALL, *writer), out=tmp_path / "llm.jsonl", progress=False))
    episode = Dataset.load(out)[0]
    assert episode.annotations["realiser"] == "llm" and episode.dialogue
    assert {r.name for r in episode.residents} <= {"Zoe", "Yan", "Xia", "Wim"}
    audits = [p for p in prompts if p.startswith("A dialogue line must")]
    assert len(audits) == len(episode.dialogue)  # every kept line was audited once
    assert all(":" not in t.text.split()[0] for t in episode.dialogue)  # speaker prefixes were cleaned
    with pytest.raises(ConfigError, match="writer.backend"):
        generate(JobArgs(overrides=(*SMALL, "realiser=llm"), out=tmp_path / "x.jsonl", progress=False))


def test_oracle_probe_with_the_structured_reasoner_solves_every_item(dataset, tmp_path):
    run = run_eval(dataset, tmp_path, "memory=oracle", "execute_navigation=true")
    result = rows(run, "oracle")
    assert result and all(not r.get("error") for r in result)
    for row in result:
        if row["task"] == "qa":
            assert row["token_f1"] == 1.0, (row["prompt"], row["prediction"], row["reference"])
        else:
            assert row["geodesic_success"] == 1.0 and row["execution_success"] == 1.0, row


def test_memories_are_compared_on_the_same_items_and_resume_per_memory(dataset, tmp_path):
    single = run_eval(dataset, tmp_path, "memories=[dialogue]", "execute_navigation=true", "name=cmp")
    first = (single / "dialogue" / "results.jsonl").read_text()
    run = run_eval(dataset, tmp_path, "memories=[dialogue,oracle]", "execute_navigation=true", "name=cmp")
    assert run == single and (run / "dialogue" / "results.jsonl").read_text() == first  # not evaluated again
    dialogue, oracle = rows(run, "dialogue"), rows(run, "oracle")
    assert [r["key"] for r in dialogue] == [r["key"] for r in oracle]
    assert all("updated" in r and "content_type" in r for r in dialogue)
    table = list(csv.DictReader((run / "comparison.csv").open()))
    overall = {(c["memory"], c["metric"]): c for c in table if c["slice"] == "overall"}
    assert set(overall) == {
        (m, k) for m in ("dialogue", "oracle") for k in ("geodesic_success", "execution_success", "spl", "token_f1")
    }
    assert float(overall["oracle", "geodesic_success"]["mean"]) == 100.0
    assert float(overall["oracle", "token_f1"]["low"]) == 100.0  # every item right: a degenerate interval
    assert float(overall["dialogue", "geodesic_success"]["high"]) == 0.0  # dialogue stores no poses
    qa_types = {r["content_type"] for r in dialogue if r["task"] == "qa"}
    assert {c["group"] for c in table if c["slice"] == "content_type" and c["task"] == "qa"} == qa_types
    assert {c["slice"] for c in table if c["task"] == "qa"} == {"overall", "content_type", "verbalised", "updated"}
    markdown = (run / "comparison.md").read_text()
    assert "## navigation: geodesic_success by content_type" in markdown and "| dialogue | oracle |" in markdown
    assert (run / "comparison.png").read_bytes().startswith(b"\x89PNG")
    before = (run / "comparison.csv").read_text()
    run_eval(dataset, tmp_path, "memories=[oracle,dialogue]", "execute_navigation=true", "name=cmp")
    again = sorted(before.splitlines()[1:])
    assert sorted((run / "comparison.csv").read_text().splitlines()[1:]) == again  # order-free intervals


def test_memories_config_errors(dataset, tmp_path):
    with pytest.raises(ConfigError, match="not both"):
        run_eval(dataset, tmp_path, "memory=oracle", "memories=[dialogue]")
    with pytest.raises(ConfigError, match="twice"):
        run_eval(dataset, tmp_path, "memories=[dialogue,dialogue]")
    with pytest.raises(RegistryError, match="unknown memory 'nope'"):
        run_eval(dataset, tmp_path, "memories=[dialogue,nope]")


def test_visual_memories_get_the_eval_camera_and_options():
    from memgym.core.config import load_config
    from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
    from memgym.pipelines.dialogmem.evaluation import build_memory

    config = load_config(
        DialogMemEvalConfig,
        overrides=(
            "memory=frames",
            "camera.hfov=70",
            "camera.sensor_height=1.1",
            "visual.num_frames=4",
            "visual.stride=3",
        ),
    )
    memory = build_memory(config)
    assert memory.num_frames == 4 and "semantic" in memory.reads
    assert (memory.camera.hfov, memory.camera.sensor_height, memory.options["stride"]) == (70, 1.1, 3)
    frames = build_memory(dataclasses.replace(config, visual=dataclasses.replace(config.visual, detector="none")))
    assert "semantic" not in frames.reads
    assert build_memory(dataclasses.replace(config, memory="3dmem")).options["voxel"] == config.visual.voxel
    assert type(build_memory(dataclasses.replace(config, memory="dialogue"))).__name__ == "DialogueMemory"


def test_visual_memories_are_evaluated_with_semantic_frames(dataset, tmp_path):
    run = run_eval(dataset, tmp_path, "memories=[frames,3dmem+dialogue,3dmem+controlled]", "visual.num_frames=4")
    markdown = (run / "comparison.md").read_text()
    assert "- 3dmem+dialogue: 0.0% (0 of" in markdown and "- 3dmem+controlled: 100.0%" in markdown
    assert "Link quality: 100.0%" in (run / "3dmem+controlled" / "results.md").read_text()
    for memory in ("frames", "3dmem+dialogue"):
        results = rows(run, memory)
        assert results and not any(r.get("error") for r in results)
        navigation = [r for r in results if r["task"] == "navigation"]
        assert navigation and all("geodesic_success" in r for r in navigation)


def test_memories_after_the_first_reuse_its_rendered_frames(dataset, tmp_path, monkeypatch):
    """memories=[a,b] renders each formation frame once (frame_cache=DIR, here a fresh one); another
    process (a fresh set of caches) reads them all from the folder, with the same results."""
    from memgym.pipelines.dialogmem.evaluation import load_episodes
    from memgym.sensors import frame_cache
    from memgym.sensors.camera import RGBDCamera

    rendered = []
    render_batch = RGBDCamera.render_batch

    def counting(self, scene, positions, yaws):
        rendered.append(len(yaws))
        return render_batch(self, scene, positions, yaws)

    monkeypatch.setattr(RGBDCamera, "render_batch", counting)
    folder = tmp_path / "frames"
    run = run_eval(dataset, tmp_path, "memories=[dialogue,oracle]", f"frame_cache={folder}", "name=first")
    episodes, _ = load_episodes(dataset)
    assert sum(rendered) == sum(len(e.traversal.frames) for e in episodes)
    assert len(list(folder.glob("*.npz"))) == len(rendered)
    monkeypatch.setattr(frame_cache, "_SHARED", {})
    calls = len(rendered)
    again = run_eval(dataset, tmp_path, "memories=[dialogue,oracle]", f"frame_cache={folder}", "name=second")
    assert len(rendered) == calls
    for memory in ("dialogue", "oracle"):
        scored = [(r["key"], r.get("reward"), r.get("prediction")) for r in rows(run, memory)]
        assert scored == [(r["key"], r.get("reward"), r.get("prediction")) for r in rows(again, memory)]


@pytest.mark.slow  # a transformers model answers every item; in 'make test'
def test_hf_reasoner_budgets_per_task_and_records_its_throughput(dataset, tmp_path):
    """A tiny random Llama as the reasoner: QA answers get at most 2 tokens, navigation replies 1,
    and the run's environment.json holds the reasoner's token counts and rates."""
    from tiny_hf_models import build_tiny_llama

    model = build_tiny_llama(tmp_path / "llama")
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 4096}))  # the dialogue fits
    budgets = ("answer_tokens.qa=2", "answer_tokens.navigation=1")
    run = run_eval(dataset, tmp_path / "runs", "reasoner.backend=hf", f"reasoner.model={model}", *budgets)
    result = rows(run)
    qa = [r for r in result if r["task"] == "qa"]
    assert qa and len(qa) < len(result) and not any(r.get("error") for r in result)
    assert all(len(r["prediction"].split()) <= 2 for r in qa)
    stats = json.loads((run / "dialogue" / "environment.json").read_text())["throughput"]["reasoner"]
    assert stats["replies"] == len(result) and stats["prompt_tokens"] > 10 * len(result)
    assert stats["generated_tokens"] == 2 * len(qa) + (len(result) - len(qa))  # every reply runs to its budget
    assert stats["prompt_tokens_per_s"] > 0 and stats["generation_seconds"] >= 0


@pytest.mark.parametrize("name", ["gdn2", "cascaded"])
def test_memories_of_other_benchmarks_are_refused_naming_the_ones_dialogmem_takes(name):
    with pytest.raises(ConfigError, match=rf"memory '{name}' reads audio.*DialogMem takes: .*3dmem\+dialogue"):
        load_config(DialogMemEvalConfig, overrides=[f"memory={name}"]).memory_names()


def test_choosing_memories_imports_none_of_them(monkeypatch):
    """The memories DialogMem takes come from the plugin table's reads column: no memgym memory is
    loaded through the registry to decide (a plugin's would be, to read its class)."""
    from memgym.core.registry import MEMORIES
    from memgym.pipelines.dialogmem.eval_config import embodied_memory_names
    from memgym.plugin_table import MEMORY_READS

    get = MEMORIES.get

    def no_builtin(name):
        assert name not in MEMORY_READS, f"memory '{name}' was loaded to choose memories"
        return get(name)

    monkeypatch.setattr(MEMORIES, "get", no_builtin)
    names = embodied_memory_names()
    assert load_config(DialogMemEvalConfig, overrides=["memories=[dialogue,3dmem,oracle]"]).memory_names()
    assert "3dmem+vlm" in names and "oracle" in names and "gdn2" not in names and "cascaded" not in names


@pytest.mark.slow
def test_the_structured_reasoner_sees_no_ground_truth_through_a_memory(dataset, tmp_path, monkeypatch):
    """Every prompt a memory (not a probe) sends holds only what the memory formed: no scene object
    id, and fact lines only of the keys a visual memory observes or links."""
    import re

    from memgym.backends.structured import parse_facts
    from memgym.pipelines.structured_reasoner import StructuredReasoner

    prompts: list[str] = []
    generate_reply = StructuredReasoner.generate

    def spy(self, messages, **kwargs):
        prompts.append("\n".join(m.text_only() for m in messages))
        return generate_reply(self, messages, **kwargs)

    monkeypatch.setattr(StructuredReasoner, "generate", spy)
    run_eval(dataset, tmp_path, "memories=[dialogue,3dmem+vlm]", "name=nogold")
    episode = Dataset.load(dataset)[0]
    scene_ids = re.compile("|".join(rf"\b{re.escape(m.object_id)}\b" for m in episode.memory))
    observable = {"detected", "near", "on", "color", "room", "times_seen", "order"}
    assert len(prompts) > len(episode.items)
    for prompt in prompts:
        assert not scene_ids.search(prompt), prompt
        assert all(f.key in observable or f.key.startswith("said_") for f in parse_facts([prompt])), prompt


def _copies(dataset: Path, folder: Path, count: int) -> Path:
    """A dataset of ``count`` copies of ``dataset``'s episode under other ids (episodes to play at once)."""
    line = dataset.read_text().splitlines()[0]
    episode_id = Dataset.load(dataset)[0].episode_id
    out = folder / "copies.jsonl"
    out.write_text("".join(line.replace(episode_id, f"{episode_id}c{k}") + "\n" for k in range(count)))
    return out


def _model_reply(prompt) -> str:
    """A rating from 1 to 5 to a judge prompt, else an answer; both a function of the prompt."""
    text = json.dumps(prompt)
    digest = zlib.crc32(text.encode())
    return str(1 + digest % 5) if "Candidate answer:" in text else f"the {('red', 'blue', 'green')[digest % 3]} one"


def _eval_against(endpoint: FakeEndpoint, dataset: Path, runs: Path, concurrency: int) -> Path:
    """An LLM-match eval whose reasoner and judge are ``endpoint``, ``concurrency`` requests each."""
    url = endpoint.base_url
    return run_eval(dataset, runs, "reasoner.backend=openai", "reasoner.model=m", f"reasoner.base_url={url}",
                    f"reasoner.concurrency={concurrency}", "qa_scorer=llm_match", "judge.backend=openai",
                    "judge.model=j", f"judge.base_url={url}", f"judge.concurrency={concurrency}")  # fmt: skip


@pytest.mark.slow  # three evals of two episodes; in 'make test'
def test_an_http_reasoner_plays_episodes_at_once_with_the_same_results(dataset, tmp_path):
    """reasoner.concurrency=2 against a server that takes 20 ms per reply: the server holds
    several requests at once, and results.jsonl (rows, order, scores) is the one of concurrency=1;
    a resumed run completes it to the same file."""
    copies = _copies(dataset, tmp_path, 2)
    results, endpoints = {}, {c: FakeEndpoint(respond=_model_reply, delay_s=0.02) for c in (1, 2)}
    try:
        for concurrency, endpoint in endpoints.items():
            run = _eval_against(endpoint, copies, tmp_path / f"c{concurrency}", concurrency)
            results[concurrency] = (run / "dialogue" / "results.jsonl").read_text()
        rows = [json.loads(line) for line in results[1].splitlines()]
        assert len({r["episode_id"] for r in rows}) == 2 and any(r.get("llm_match") is not None for r in rows)
        assert results[2] == results[1]
        assert endpoints[1].max_in_flight == 1 and endpoints[2].max_in_flight == 2
        stored = run / "dialogue" / "results.jsonl"  # the concurrency=2 run, cut mid-row and resumed
        lines = results[2].splitlines(keepends=True)
        stored.write_text("".join(lines[: len(lines) // 3]) + lines[len(lines) // 3][:20])
        assert _eval_against(endpoints[2], copies, tmp_path / "c2", 2) == run
        assert stored.read_text() == results[1]
    finally:
        for endpoint in endpoints.values():
            endpoint.close()
