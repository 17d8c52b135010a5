"""``memgym report`` on run folders of every kind, and the main table an eval ends with."""

from __future__ import annotations

import json

import pytest

from memgym.cli import main
from memgym.core.errors import RecordError
from memgym.core.results import RunStore, run_name
from memgym.pipelines.reporting import main_tables, render_tables


def _runs(root):
    """A DialogMem eval (two memories), a VoxMem eval and an AMemOps eval under ``root``."""
    for memory, hits in (("dialogue", [1, 1, 0, 1]), ("frames", [0, 0, 1, 0])):
        store = RunStore.open(root, "eval-dialogmem", {"memory": memory}, name=f"dm6-abc/{memory}")
        for i, hit in enumerate(hits):
            store.append(f"e|n{i}", {"task": "navigation", "geodesic_success": float(hit), "spl": 0.5 * hit})
        store.append("e|q0", {"task": "qa", "token_f1": 0.25})
        store.append("e|q1", {"task": "qa", "error": "judge unreachable"})
    vox = RunStore.open(root, "eval-voxmem", {"v": 1}, name="cascaded-structured-abc")
    for i, (budget, correct) in enumerate([(8192, True), (8192, False), (16384, True)]):
        vox.append(f"k{i}", {"memory": "cascaded", "model": "structured", "budget": budget, "correct": correct})
    am = RunStore.open(root, "amemops_eval", {"a": 1}, name="gdn2-abc")
    queries = [{"query_type": "latest", "correct": 1}, {"query_type": "absent", "correct": 0}]
    am.append("gdn2|0|2|s0", {"model": "gdn2", "seed": 0, "checkpoint": 2, "stream": "s0", "queries": queries})
    return root


def test_report_tabulates_every_kind_with_intervals(tmp_path, capsys):
    root = _runs(tmp_path)
    assert main(["report", str(root / "eval-dialogmem" / "dm6-abc")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| system | geodesic_success | spl | token_f1 |"
    assert out[2].startswith("| dialogue | 75.0 [") and out[2].endswith(
        "(4) | 37.5 [12.5, 50.0] (4) | 25.0 [25.0, 25.0] (1) |"
    )
    assert out[3].startswith("| frames | 25.0 [")
    assert main(["report", str(root / "eval-voxmem" / "cascaded-structured-abc")]) == 0
    out = capsys.readouterr().out
    assert "| system | correct budget=8192 | correct budget=16384 |" in out
    assert "| cascaded/structured | 50.0 [0.0, 100.0] (2) | 100.0 [100.0, 100.0] (1) |" in out
    assert main(["report", str(root)]) == 0  # a folder of runs: one table per evaluation, under its folder
    out = capsys.readouterr().out
    assert "amemops_eval/gdn2-abc (amemops_eval):" in out and "eval-dialogmem/dm6-abc (eval-dialogmem):" in out
    assert "| gdn2 @ 2 | 100.0 [100.0, 100.0] (1) | 0.0 [0.0, 0.0] (1) |" in out  # latest, absent (as asked)
    assert main(["report", str(root / "eval-voxmem"), "--metrics", "budget", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "source,job,system,metric,mean,low,high,n" and len(rows) == 3
    assert rows[1].endswith(",eval-voxmem,cascaded/structured,budget budget=8192,8192.0,8192.0,8192.0,2")


def test_report_choices_and_errors(tmp_path, capsys):
    store = RunStore.open(tmp_path, "eval", {"m": 1}, name="r")
    store.append("a", {"type": "x", "acc": 1.0})
    store.append("b", {"type": "x", "acc": 0.0})
    assert main(["report", str(store.folder), "--by", "type"]) == 0  # another job: its numeric columns
    assert "| x | 0.500 [0.000, 1.000] (2) |" in capsys.readouterr().out
    assert main(["report", str(store.folder), "--metrics", "acc", "--by", "typ"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no column 'typ' (did you mean 'type'?)" in err[0]
    assert main(["report", str(tmp_path / "eval" / "r" / "results.jsonl")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordError, match="holds no memgym run folder"):
        main_tables(tmp_path / "empty")


def test_eval_prints_its_main_table_and_report(tmp_path, monkeypatch, capsys):
    from memgym.core.benchmark import Benchmark
    from memgym.core.registry import BENCHMARKS

    root = _runs(tmp_path)
    folder = root / "eval-dialogmem" / "dm6-abc"
    (folder / "comparison.md").write_text("# report\n")

    class Done(Benchmark):
        name = "done"

        def eval(self, args):
            return folder

    monkeypatch.setattr(BENCHMARKS, "_entries", {"done": Done})
    monkeypatch.setattr(BENCHMARKS, "_declared", {})
    assert main(["eval", "done"]) == 0
    out = capsys.readouterr().out
    assert "| system | geodesic_success | spl | token_f1 |" in out
    assert out.rstrip().endswith(f"report: {folder / 'comparison.md'}")
    assert out.index("| dialogue |") < out.index("report:")
    assert render_tables(main_tables(folder)) in out


def test_run_folders_carry_a_name_and_old_hash_folders_resume(tmp_path):
    assert run_name(tmp_path, "eval-voxmem", ["cascaded,transcript", "structured"], "0123abcd") == (
        "cascaded_transcript-structured-0123abcd"
    )
    (tmp_path / "eval-voxmem" / "0123abcd").mkdir(parents=True)  # written before names: resumed in place
    assert run_name(tmp_path, "eval-voxmem", ["cascaded"], "0123abcd") == "0123abcd"
    assert run_name(tmp_path, "eval-voxmem", [""], "fedc") == "fedc"
    json.dumps(run_name(tmp_path, "x", ["a" * 100], "d"))
    assert len(run_name(tmp_path, "x", ["a" * 100], "d")) == 48 + 2


def test_a_training_run_says_what_report_reads(tmp_path, capsys):
    RunStore.open(tmp_path, "amemops_train", {"t": 1}, name="gdn2-seed0")
    assert main(["report", str(tmp_path / "amemops_train" / "gdn2-seed0")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a 'amemops_train' run with no result rows; memgym report tabulates" in err[0]
