"""The plugin packages of docs/plugins.md (``examples/``), installed the way Python finds an
installed distribution's entry points, keep memgym.testing's contracts and run in an evaluation.

Installing: each example's folder goes on ``sys.path`` with a ``<name>.dist-info`` (``METADATA``
and the ``entry_points.txt`` written from its pyproject.toml's ``[project.entry-points]``), which
``importlib.metadata`` reads exactly as it reads a pip-installed distribution (writing it takes
milliseconds; ``pip install --no-deps --no-build-isolation --no-index --target`` of one example
took 5.4 s wall, 1.3 s CPU, on the loaded 2-core machine; tests/core/test_registry.py covers a real
pip install of a plugin). Playing DialogMem episodes and evaluating is slow.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium
import pytest

from memgym.agents.agent import run_episode
from memgym.core.benchmark import JobArgs
from memgym.core.episode import TaskItem
from memgym.core.registry import ALL_REGISTRIES, BENCHMARKS, MEMORIES, SCORERS
from memgym.testing import MemoryContract, ScorerCase, ScorerContract, check_memory, check_scorer, harness_for
from memgym.testing.harness_dialogmem import ENV_CONFIG

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def install(example: Path, site: Path) -> None:
    """Make ``example`` importable and its entry points found, as an installed distribution."""
    project = tomllib.loads((example / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) for group, points in groups.items()]
    (info / "entry_points.txt").write_text("\n".join(lines))


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """The examples installed for this module; their names are forgotten afterwards."""
    site = tmp_path_factory.mktemp("site")
    folders = [
        EXAMPLES / name for name in ("memgym_example_memory", "memgym_example_scorer", "memgym_example_benchmark")
    ]
    for folder in folders:
        install(folder, site)
    before = {registry.kind: set(registry._entries) for registry in ALL_REGISTRIES}
    sys.path[:0] = [str(site), *map(str, folders)]
    yield site
    del sys.path[: len(folders) + 1]
    for registry in ALL_REGISTRIES:
        for name in set(registry._entries) - before[registry.kind]:  # the examples' names, not memgym's
            if registry._entries[name].__module__.startswith("memgym_example_"):  # imported on first use here
                del registry._entries[name]
    for module in [m for m in sys.modules if m.startswith("memgym_example_")]:
        sys.modules.pop(module, None)


def test_the_examples_are_found_by_entry_point_without_importing_them(examples):
    assert MEMORIES.locate("keyword_dialogue") == (
        "memgym_example_memory:KeywordDialogueMemory",
        "memgym-example-memory",
    )
    assert SCORERS.locate("reference_words") == ("memgym_example_scorer:ReferenceWordsScorer", "memgym-example-scorer")
    assert "memgym_example_memory" not in sys.modules and "memgym_example_scorer" not in sys.modules


def test_a_memory_or_scorer_is_two_files_and_a_benchmark_five():
    for name in ("memgym_example_memory", "memgym_example_scorer"):
        folder = EXAMPLES / name
        assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == [f"{name}.py", "pyproject.toml"]
    package = EXAMPLES / "memgym_example_benchmark"
    files = sorted(
        str(p.relative_to(package)) for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    code = ["__init__.py", "benchmark.py", "env.py", "memory.py"]
    assert files == [*(f"memgym_example_benchmark/{name}" for name in code), "pyproject.toml"]


def test_the_example_benchmark_runs_through_the_registry_and_the_driver(examples, tmp_path, capsys):
    """``memgym generate digits`` / ``memgym eval digits`` dispatch to the plugin by entry point; the
    driver folds ``memory=``, resumes, and ``memgym view`` finds the run's benchmark by its job."""
    import json

    from memgym.cli import main
    from memgym.core.benchmark import benchmark_info
    from memgym.viewer.detect import detect

    assert BENCHMARKS.locate("digits")[1] == "memgym-example-benchmark"
    data = tmp_path / "digits.jsonl"
    assert main(["generate", "digits", "episodes=6", "length=8", "questions=4", "--out", str(data)]) == 0
    runs = ["--runs-dir", str(tmp_path)]
    for span in (8, 3):
        assert (
            main(["eval", "digits", f"dataset={data}", "memory=digit_span", f"span={span}", f"name=s{span}", *runs])
            == 0
        )
    full, short = (
        [json.loads(line) for line in (tmp_path / "eval-digits" / f"s{s}" / "results.jsonl").open()] for s in (8, 3)
    )
    assert len(full) == len(short) == 24 and all(row["exact_match"] == 1.0 for row in full)
    recent = [row["reward"] for row in short if row["from_end"] < 3]
    older = [row["reward"] for row in short if row["from_end"] >= 3]
    assert recent and older and min(recent) == 1.0 and max(older) == 0.0  # a span of 3 forgets the rest
    before = (tmp_path / "eval-digits" / "s3" / "results.jsonl").read_text()
    assert main(["eval", "digits", f"dataset={data}", "memories=[digit_span]", "span=3", "name=s3", *runs]) == 0
    assert (tmp_path / "eval-digits" / "s3" / "results.jsonl").read_text() == before  # resumed: nothing replayed
    assert "| digit_span | 0 |" in (tmp_path / "eval-digits" / "s3" / "results.md").read_text()
    assert main(["eval", "digits", f"dataset={data}", "memory=digit_span", "memories=[digit_span]", *runs]) == 2
    capsys.readouterr()
    assert main(["report", str(tmp_path / "eval-digits" / "s3")]) == 0  # the RunKind its info declares
    report = capsys.readouterr().out  # memory x reward per digits said after the one asked, in percent
    assert report.startswith("| system | reward from_end=0 |") and "| digit_span | 100.0 [100.0, 100.0] (" in report
    assert benchmark_info("digits").title == "Digits"
    assert detect(tmp_path / "eval-digits" / "s3").benchmark == "digits"


ITEM = TaskItem(item_id="q0", task="qa", prompt="Which mug is Amelia's?", answer="the red mug")


class TestReferenceWords(ScorerContract):
    """The scorer contract as the example's own tests would run it (the mixin)."""

    def make_scorer(self):
        return SCORERS.get("reference_words")()

    def cases(self):
        other = TaskItem(item_id="q1", task="qa", prompt="Where are the keys?", answer="on the shelf")
        return [ScorerCase(ITEM, gold="It is the red mug.", wrong="the blue cup"), ScorerCase(other, "shelf", "")]


@pytest.mark.usefixtures("examples")
class TestReferenceWordsInstalled(TestReferenceWords):
    pass


del TestReferenceWords  # collected only with the examples installed


@pytest.mark.slow  # plays DialogMem episodes
def test_the_example_memory_keeps_the_memory_contract(examples):
    check_memory("keyword_dialogue")

    class TestKeywordDialogue(MemoryContract):  # the mixin form the example's own tests would use
        memory_name = "keyword_dialogue"

    TestKeywordDialogue().test_isolates_episodes()


@pytest.mark.slow  # generates (once per session) and evaluates a small DialogMem dataset
def test_the_example_memory_runs_in_memgym_eval_dialogmem(examples, dialogmem_small, tmp_path):
    import json

    from memgym.pipelines.dialogmem.evaluation import evaluate

    overrides = (
        f"dataset={dialogmem_small}",
        "memories=[dialogue,keyword_dialogue]",
        "camera.width=32",
        "camera.height=24",
    )
    run = evaluate(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    rows = [json.loads(line) for line in (run / "keyword_dialogue" / "results.jsonl").read_text().splitlines()]
    assert rows and not any(row.get("error") for row in rows)
    assert "| keyword_dialogue |" in (run / "comparison.md").read_text()


@pytest.mark.slow  # evaluates a small DialogMem dataset (generated once per session)
def test_the_example_scorer_scores_memgym_eval_dialogmem(examples, dialogmem_small, tmp_path):
    import json

    from memgym.pipelines.dialogmem.evaluation import evaluate

    overrides = (f"dataset={dialogmem_small}", "qa_scorer=reference_words", "camera.width=32", "camera.height=24")
    run = evaluate(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    rows = [json.loads(line) for line in (run / "dialogue" / "results.jsonl").read_text().splitlines()]
    qa = [row for row in rows if row["task"] == "qa"]
    assert qa and all(0.0 <= row["reference_words"] <= 1.0 and not row.get("error") for row in qa)


@pytest.mark.slow  # plays a DialogMem episode
def test_the_example_scorer_scores_the_envs_questions(examples):
    """``memgym/DialogMem-v0`` scores its questions with the scorer its config names
    (``task_scorers.qa=reference_words``), in the evaluation loop (``run_episode``)."""
    harness = harness_for(MEMORIES.get("dialogue"))
    episode = harness.episodes()[0]
    check_scorer(
        SCORERS.get("reference_words")(), [ScorerCase(i, i.answer, "") for i in episode.items if i.task == "qa"]
    )
    config = {**ENV_CONFIG, "task_scorers": {"qa": "reference_words"}}
    env = gymnasium.make("memgym/DialogMem-v0", config=config, max_episode_steps=-1)
    agent = harness.agent(MEMORIES.get("dialogue")())
    played = run_episode(env, agent, episode=episode)
    qa = [score for item, score in zip(episode.items, played.scores) if item.task == "qa"]
    assert qa and all("reference_words" in score and 0.0 <= score["reward"] <= 1.0 for score in qa)
