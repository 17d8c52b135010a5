import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest

from memgym.core.errors import RecordError
from memgym.core.results import RESULTS_VERSION, RunStore, aggregate, to_csv, to_markdown


@dataclasses.dataclass(frozen=True)
class Cfg:
    model: str = "m"
    n: int = 6


def test_open_creates_snapshot_and_resumes(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg(), seeds=[0, 1])
    for name in ("manifest.json", "config.yaml", "environment.json"):
        assert (store.folder / name).is_file()
    assert json.loads((store.folder / "environment.json").read_text())["seeds"] == [0, 1]
    store.append("a", {"score": 1.0})
    store.append("b", {"score": 0.0})
    again = RunStore.open(tmp_path, "eval", Cfg())
    assert again.done_keys() == {"a", "b"}
    assert [r["score"] for r in again.rows()] == [1.0, 0.0]


def test_duplicate_key_is_refused(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg())
    store.append("a", {"x": 1})
    with pytest.raises(RecordError, match="already recorded"):
        store.append("a", {"x": 2})


def test_append_many_writes_a_batch_or_nothing_on_a_repeated_key(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg())
    store.append_many([("a", {"x": 1}), ("b", {"x": 2})])
    for batch in ([("c", {"x": 3}), ("a", {"x": 4})], [("d", {}), ("d", {})]):
        with pytest.raises(RecordError, match="already recorded"):
            store.append_many(batch)
    again = RunStore.open(tmp_path, "eval", Cfg())
    assert [(r["key"], r["x"]) for r in again.rows()] == [("a", 1), ("b", 2)]


def test_resume_after_kill_skips_done_items_and_loses_nothing(tmp_path):
    """A run killed mid-way resumes: finished items are kept, only the rest are computed."""
    script = textwrap.dedent(
        f"""
        import dataclasses, os, sys
        from memgym.core.results import RunStore

        @dataclasses.dataclass(frozen=True)
        class Cfg:
            model: str = "m"
            n: int = 6

        store = RunStore.open({str(tmp_path)!r}, "eval", Cfg())
        def work(i):
            if i == 3 and os.environ.get("CRASH"):
                os._exit(1)  # killed without cleanup
            return {{"value": i * i}}
        done = store.done_keys()
        for i in range(6):
            if f"item{{i}}" not in done:
                store.append(f"item{{i}}", work(i))
        """
    )
    crashed = subprocess.run([sys.executable, "-c", script], env={"CRASH": "1", "PATH": ""}, check=False)
    assert crashed.returncode == 1
    assert RunStore.open(tmp_path, "eval", Cfg()).done_keys() == {"item0", "item1", "item2"}
    subprocess.run([sys.executable, "-c", script], check=True)
    rows = RunStore.open(tmp_path, "eval", Cfg()).rows()
    assert [r["key"] for r in rows] == [f"item{i}" for i in range(6)]
    assert [r["value"] for r in rows] == [i * i for i in range(6)]


def test_half_written_last_line_is_dropped_not_fatal(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg())
    store.append("a", {"x": 1})
    with store.results_path.open("a") as handle:
        handle.write('{"key": "b", "x"')
    again = RunStore.open(tmp_path, "eval", Cfg())
    assert again.done_keys() == {"a"}
    again.append("b", {"x": 2})
    assert RunStore.open(tmp_path, "eval", Cfg()).done_keys() == {"a", "b"}


def test_corrupt_middle_line_names_file_and_line(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg())
    store.append("a", {"x": 1})
    store.results_path.write_text("garbage\n" + store.results_path.read_text())
    with pytest.raises(RecordError, match=r"results.jsonl:1: corrupt"):
        RunStore.open(tmp_path, "eval", Cfg())


def test_incompatible_version_or_config_is_refused_and_untouched(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg(), name="run")
    store.append("a", {"x": 1})
    before = store.results_path.read_text()
    with pytest.raises(RecordError, match="different config"):
        RunStore.open(tmp_path, "eval", Cfg(n=7), name="run")
    manifest = json.loads((store.folder / "manifest.json").read_text())
    manifest["memgym_results"] = RESULTS_VERSION + 1
    (store.folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RecordError, match="version"):
        RunStore.open(tmp_path, "eval", Cfg(), name="run")
    assert store.results_path.read_text() == before


def test_aggregate_by_annotation_columns():
    rows = [
        {"type": "social", "model": "a", "acc": 1.0},
        {"type": "social", "model": "a", "acc": 0.0},
        {"type": "episodic", "model": "a", "acc": 1.0},
        {"type": "episodic", "model": "a", "acc": None},
    ]
    table = aggregate(rows, ["type"], ["acc"])
    assert table == [{"type": "episodic", "n": 2, "acc": 1.0}, {"type": "social", "n": 2, "acc": 0.5}]
    markdown = to_markdown(table)
    assert markdown.splitlines()[0] == "| type | n | acc |"
    assert "| social | 2 | 0.500 |" in markdown
    assert to_csv(table).splitlines() == ["type,n,acc", "episodic,2,1.0", "social,2,0.5"]


def test_errored_items_are_retried_and_keep_their_earlier_errors(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg())
    store.append_many([("a", {"score": 1.0}), ("b", {"error": "timeout", "score": None})])
    assert store.done_keys() == {"a"} and store.recorded_keys() == {"a", "b"}
    store.append("b", {"error": "refused", "score": None})
    store.append("b", {"score": 0.5})
    with pytest.raises(RecordError, match="already recorded"):
        store.append("b", {"score": 0.0})
    for rows in (store.rows(), RunStore.open(tmp_path, "eval", Cfg()).rows()):
        assert [(r["key"], r["score"], r.get("earlier_errors")) for r in rows] == [
            ("a", 1.0, None),
            ("b", 0.5, ["timeout", "refused"]),
        ]


def test_duplicate_rows_are_read_once_keeping_the_first(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg())
    store.append_many([("a", {"x": 1}), ("b", {"x": 2})])
    with store.results_path.open("a") as handle:
        handle.write('{"key": "a", "x": 9}\n')
    assert [(r["key"], r["x"]) for r in RunStore(store.folder, "").rows()] == [("a", 1), ("b", 2)]


def test_readers_do_not_write_and_manifests_must_be_objects(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg(), name="run")
    store.append("a", {"x": 1})
    with store.results_path.open("a") as handle:
        handle.write('{"key": "b"')  # a writer mid-line
    reader = RunStore(store.folder, "")
    assert [r["key"] for r in reader.rows()] == ["a"] and store.results_path.read_text().endswith('"b"')
    with pytest.raises(RecordError, match="reading only"):
        reader.append("c", {})
    (store.folder / "manifest.json").write_text("[1]")
    with pytest.raises(RecordError, match="expected a JSON object, got a list"):
        RunStore.open(tmp_path, "eval", Cfg(), name="run")


def test_a_run_folder_has_one_writing_process(tmp_path):
    store = RunStore.open(tmp_path, "eval", Cfg(), name="run")
    assert RunStore.open(tmp_path, "eval", Cfg(), name="run").folder == store.folder  # same process: shared
    script = (
        f"from memgym.core.results import RunStore; RunStore.open({str(tmp_path)!r}, 'eval', {{'n': 1}}, name='run')"
    )
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert f"being written by another memgym process (pid {os.getpid()})" in other.stderr
    del store
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert "being written" not in other.stderr  # released with the store (the config differs: refused later)
