"""End to end on one small generated scene: generate -> eval, resume, and per-item errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError
from memgym.core.seeding import config_hash
from memgym.pipelines.dialogmem_jobs import DialogMemGenerateConfig, evaluate, generate

SMALL = (
    "scenes=1",
    "first_house_seed=5",
    "house.min_rooms=3",
    "house.max_rooms=4",
    "traversal.min_goals=2",
    "traversal.max_goals=3",
    "camera.width=32",
    "camera.height=24",
)
EVAL = ("camera.width=32", "camera.height=24")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dialogmem") / "episodes.jsonl"
    return generate(JobArgs(overrides=SMALL, out=out, progress=False))


def run_eval(dataset: Path, runs: Path, *extra: str) -> Path:
    return evaluate(JobArgs(overrides=(f"dataset={dataset}", *EVAL, *extra), runs_dir=runs, progress=False))


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_generate_writes_episodes_stats_and_is_deterministic(dataset, tmp_path):
    episodes = Dataset.load(dataset)
    assert len(episodes) == 1 and episodes[0].items and episodes[0].dialogue
    assert "qa_verbalised_%" in dataset.with_name("episodes.stats.md").read_text()
    assert not dataset.with_name("episodes.jsonl.partial").exists()
    again = generate(JobArgs(overrides=SMALL, out=tmp_path / "again.jsonl", progress=False))
    assert again.read_text() == dataset.read_text()


def test_generate_resumes_from_its_partial_file(dataset, tmp_path):
    out = tmp_path / "episodes.jsonl"
    first = generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False)).read_text().splitlines()
    expected = list(Dataset.load(out))
    digest = config_hash(load_config(DialogMemGenerateConfig, overrides=(*SMALL, "scenes=2")))
    partial = out.with_name("episodes.jsonl.partial")
    partial.write_text(json.dumps({"config_hash": digest}) + "\n" + first[0] + "\n" + first[1][:50])  # 2nd cut
    assert list(Dataset.load(generate(JobArgs(overrides=(*SMALL, "scenes=2"), out=out, progress=False)))) == expected


def test_eval_end_to_end_and_resume(dataset, tmp_path):
    run = run_eval(dataset, tmp_path, "execute_navigation=true")
    items = Dataset.load(dataset)[0].items
    result = rows(run)
    assert [r["key"] for r in result] == [f"{i.item_id.split('/')[0]}|{i.item_id}" for i in items]
    navigation = [r for r in result if r["task"] == "navigation"]
    qa = [r for r in result if r["task"] == "qa"]
    assert all(r["geodesic_success"] == 0.0 and r["spl"] == 0.0 for r in navigation)
    assert all(0.0 <= r["token_f1"] <= 1.0 and "content_type" in r and "verbalised" in r for r in qa)
    assert "by content type" in (run / "results.md").read_text()
    # Interrupt: keep the first half of the rows (and a torn line), then re-run the same command.
    lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
    (run / "results.jsonl").write_text("".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:20])
    again = run_eval(dataset, tmp_path, "execute_navigation=true")
    assert again == run and rows(again) == result


def test_endpoint_failures_become_item_errors(dataset, tmp_path):
    run = run_eval(
        dataset,
        tmp_path,
        "reasoner.backend=openai",
        "reasoner.model=m",
        "reasoner.base_url=http://127.0.0.1:9/v1",
        "reasoner.max_retries=0",
        "reasoner.timeout_s=0.5",
    )
    result = rows(run)
    assert len(result) == len(Dataset.load(dataset)[0].items)
    assert all("cannot connect" in r["error"] or "connection" in r["error"] for r in result)
    assert f"{len(result)} item(s) with errors" in (run / "results.md").read_text()


def test_bad_datasets_are_reported_per_item(dataset, tmp_path):
    line = dataset.read_text().splitlines()[0]
    record = json.loads(line)
    dangling = json.loads(line)
    dangling["data"]["episode_id"] = "dangling"
    dangling["data"]["dialogue"][0]["spec"]["referenced"] = ["ghost_1"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(record), json.dumps(record), json.dumps(dangling)]) + "\n")
    run = run_eval(bad, tmp_path)
    result = rows(run)
    errors = [r for r in result if r.get("error")]
    assert any("duplicated episode id" in r["error"] for r in errors)
    assert sum("ghost_1" in r["error"] for r in errors) == len(dangling["data"]["items"])
    scored = [r for r in result if not r.get("error")]
    assert len(scored) == len(record["data"]["items"])


def test_llm_match_without_a_model_is_a_config_error(dataset, tmp_path):
    with pytest.raises(ConfigError, match="judge"):
        run_eval(dataset, tmp_path, "qa_scorer=llm_match", "judge.backend=structured")
