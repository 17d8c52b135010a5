import json
import subprocess
import sys

import pytest

from memgym.cli import build_parser, main
from memgym.core.results import RunStore


def test_every_subcommand_has_help(capsys):
    for command in ["list", "generate", "train", "eval", "render", "run", "report"]:
        with pytest.raises(SystemExit) as exit_info:
            build_parser().parse_args([command, "--help"])
        assert exit_info.value.code == 0
        assert "usage: memgym" in capsys.readouterr().out


def job_help(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def help_rows(out: str) -> dict[str, list[str]]:
    """key -> [type, default, help...] of the key table in ``--help`` output."""
    return {
        line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  ") and "  " in line[2:]
    }


def test_job_help_lists_the_benchmarks_keys_and_accepted_names(capsys):
    code, out, _ = job_help(capsys, "eval", "dialogmem")
    assert code == 0 and out.startswith("usage: memgym eval")
    assert "keys of 'memgym eval dialogmem' (DialogMemEvalConfig" in out
    rows = help_rows(out)
    assert rows["camera.width"][:2] == ["int", "256"] and "(a value from 1 to 4096)" in " ".join(rows["camera.width"])
    assert rows["reasoner.backend"][:2] == ["str", "'structured'"]
    assert rows["qa_scorer"][:2] == ["str", "'token_f1'"]
    scorers = next(line for line in out.splitlines() if line.startswith("registered scorers"))
    assert scorers.endswith(": exact_match, llm_match, token_f1")  # the scorers of qa items
    memories = next(line for line in out.splitlines() if line.startswith("registered memories"))
    assert "dialogue" in memories and "3dmem+clip" in memories and "full_history" not in memories
    assert "gdn2" not in memories.split(": ")[1].split(", ")
    reasoners = next(line for line in out.splitlines() if line.startswith("registered reasoners"))
    assert reasoners.endswith("hf, hf_audio, openai, structured")

    code, out, _ = job_help(capsys, "eval", "voxmem")
    assert (
        code == 0
        and "memories=[...]) it takes: cascaded, cascaded_evidence_only, evidence_only, full_history, no_history, oracle_tags, transcript"
        in out
    )
    code, out, _ = job_help(capsys, "eval", "amemops")
    assert "keys of 'memgym eval amemops' with intervention=true (AMemOpsInterventionConfig" in out
    assert "it takes: attention, attention_rope, gdn, gdn2, kda, mamba2, no_erase" in out
    code, out, _ = job_help(capsys, "generate", "amemops")
    assert help_rows(out)["stream.library.kind"][0].startswith("{'synthetic_env'")
    code, out, _ = job_help(capsys, "render", "voxmem")
    assert code == 0 and out.rstrip().endswith("'memgym render voxmem' is not implemented.")


def test_job_help_of_an_unknown_benchmark_is_one_line(capsys):
    code, out, err = job_help(capsys, "eval", "no-such-bench")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "memgym: error: unknown benchmark 'no-such-bench'; registered: amemops, dialogmem, voxmem"
    ]


def test_list_shows_registries(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "scorer:" in out and "exact_match" in out and "benchmark:" in out


def test_list_shows_what_each_memory_reads(capsys):
    from memgym.plugin_table import MEMORY_READS, MEMORY_TABLE

    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("memory:")
    section = out[start + 1 : next(i for i in range(start + 1, len(out)) if not out[i].startswith("  "))]
    lines = {line.split()[0]: line for line in section}
    assert set(MEMORY_TABLE) <= set(lines)
    for name, (target, _) in MEMORY_TABLE.items():
        assert lines[name].split()[1] == target
        assert lines[name].endswith(f"  reads: {' '.join(sorted(MEMORY_READS[name]))}")
    assert lines["oracle"].endswith("reads: truth") and lines["gdn2"].endswith("reads: audio")
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["memory reads"] == {name: sorted(words) for name, words in MEMORY_READS.items()}
    assert listing["memory"]["3dmem"] == MEMORY_TABLE["3dmem"][0]  # the JSON's name -> module:attr is unchanged


def test_unknown_benchmark_is_one_line_and_exit_2(capsys):
    assert main(["generate", "no-such-bench"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error: unknown benchmark 'no-such-bench'")


def test_malformed_override_is_exit_2(capsys):
    assert main(["eval", "no-such-bench", "oops"]) == 2
    assert "not a key=value override" in capsys.readouterr().err


@pytest.mark.parametrize(
    "job, benchmark, key",
    [
        ("generate", "amemops", "seed"),
        ("generate", "voxmem", "seed"),
        ("generate", "dialogmem", "seed"),
        ("train", "amemops", "seed"),
        ("eval", "amemops", "seeds"),
        ("eval", "voxmem", "seed"),
        ("eval", "dialogmem", "bootstrap_seed"),
    ],
)
@pytest.mark.parametrize("seed", [2**64, -1])
def test_a_seed_out_of_range_is_one_line_and_leaves_nothing(tmp_path, capsys, job, benchmark, key, seed):
    value = f"[{seed}]" if key == "seeds" else str(seed)
    assert main([job, benchmark, f"{key}={value}", "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error:") and f"{key}" in err[0], err
    assert not (tmp_path / "runs").exists()


def test_report_aggregates_a_run_folder(tmp_path, capsys):
    store = RunStore.open(tmp_path, "eval", {"m": 1}, name="r")
    store.append("a", {"type": "x", "acc": 1.0})
    store.append("b", {"type": "x", "acc": 0.0})
    assert main(["report", str(store.folder), "--by", "type", "--metrics", "acc"]) == 0
    assert "| x | 0.500 [0.000, 1.000] (2) |" in capsys.readouterr().out
    assert main(["report", str(tmp_path), "--metrics", "acc"]) == 0  # the folder above the run works too
    assert "| acc |" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nowhere"), "--metrics", "acc"]) == 2


def test_console_entry_point_runs_as_module():
    result = subprocess.run([sys.executable, "-m", "memgym", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "generate" in result.stdout


def _register_quick_only(monkeypatch, fail: bool = False):
    from memgym.core.benchmark import Benchmark, ReportSection
    from memgym.core.registry import BENCHMARKS

    class QuickOnly(Benchmark):
        name = "quick-only"
        description = "test benchmark"

        def quickstart(self, report_dir, args):
            if fail:
                raise RuntimeError("boom")
            (report_dir / "plot.png").write_bytes(b"png")
            return ReportSection("Quick only", "| a |\n| --- |\n| 1 |\n", ("plot.png",))

    monkeypatch.setattr(BENCHMARKS, "_entries", {"quick-only": QuickOnly})
    monkeypatch.setattr(BENCHMARKS, "_declared", {})
    return QuickOnly


def test_unimplemented_job_says_so_and_exits_2(monkeypatch, capsys):
    _register_quick_only(monkeypatch)
    assert main(["train", "quick-only"]) == 2
    assert "'memgym train quick-only' is not implemented yet" in capsys.readouterr().err
    assert main(["list", "--describe"]) == 0
    assert "[jobs: quickstart]" in capsys.readouterr().out


def test_quickstart_writes_report(monkeypatch, tmp_path, capsys):
    _register_quick_only(monkeypatch)
    assert main(["run", "quickstart", "--runs-dir", str(tmp_path)]) == 0
    report = (tmp_path / "quickstart" / "report.md").read_text()
    assert "## Quick only" in report and "![plot](plot.png)" in report
    assert "quickstart report:" in capsys.readouterr().out


def test_quickstart_failure_is_reported_and_nonzero(monkeypatch, tmp_path, capsys):
    _register_quick_only(monkeypatch, fail=True)
    assert main(["run", "quickstart", "--runs-dir", str(tmp_path)]) == 2
    assert "RuntimeError: boom" in (tmp_path / "quickstart" / "report.md").read_text()


def test_options_may_come_anywhere_after_the_command():
    ns = build_parser().parse_args(
        ["eval", "dialogmem", "--config", "good.yaml", "dataset=d.jsonl", "--no-progress", "--runs-dir", "r", "a=b"]
    )
    assert (ns.benchmark, ns.overrides, str(ns.config), str(ns.runs_dir), ns.no_progress) == (
        "dialogmem",
        ["dataset=d.jsonl", "a=b"],
        "good.yaml",
        "r",
        True,
    )
    ns = build_parser().parse_args(["run", "quickstart", "--runs-dir", "r", "workers=1"])
    assert (ns.name, ns.overrides, str(ns.runs_dir)) == ("quickstart", ["workers=1"], "r")
    ns = build_parser().parse_args(["findings", "a", "--out", "o", "b"])
    assert [str(p) for p in ns.paths] == ["a", "b"] and str(ns.out) == "o"


def test_version(capsys):
    from memgym import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.strip() == f"memgym {__version__}"


def test_list_takes_kinds_singular_or_plural(capsys):
    assert main(["list", "memory"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("memory:\n") and "scorer:" not in out and "dialogue" in out
    assert main(["list", "scorers", "envs", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert list(listing) == ["env", "scorer"]
    assert set(listing["env"]) == {"amemops", "dialogmem", "voxmem"}  # every benchmark's env
    assert main(["list", "memorys"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown kind 'memorys' (did you mean 'memory'" in err[0]


def test_unknown_names_and_keys_get_a_did_you_mean(capsys):
    assert main(["eval", "dialogmem", "memories=[dialog]", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error: unknown memory 'dialog' (did you mean 'dialogue'")
    assert main(["eval", "dialogmem", "camera.widht=64"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown key 'camera.widht' (did you mean 'width'?); allowed keys:" in err


def test_list_describe_is_plain_text(capsys):
    assert main(["list", "--describe", "memory", "scorer", "scene"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out and ":class:" not in out and ":meth:" not in out
    assert "module docstring" not in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "retrieve returns audio_history_messages of all sessions." in lines["full_history"]
    assert lines["cascaded"].split(None, 1)[1].startswith("cascaded: ASR")  # the module docstring's summary
