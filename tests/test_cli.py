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


def test_list_shows_registries(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "scorer:" in out and "exact_match" in out and "benchmark:" in out


def test_unknown_benchmark_is_one_line_and_exit_2(capsys):
    assert main(["generate", "no-such-bench"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error: unknown benchmark 'no-such-bench'")


def test_malformed_override_is_exit_2(capsys):
    assert main(["eval", "no-such-bench", "oops"]) == 2
    assert "not a key=value override" in capsys.readouterr().err


def test_report_aggregates_a_run_folder(tmp_path, capsys):
    store = RunStore.open(tmp_path, "eval", {"m": 1}, name="r")
    store.append("a", {"type": "x", "acc": 1.0})
    store.append("b", {"type": "x", "acc": 0.0})
    assert main(["report", str(store.folder), "--by", "type", "--metrics", "acc"]) == 0
    assert "| x | 2 | 0.500 |" in capsys.readouterr().out
    assert main(["report", str(tmp_path), "--metrics", "acc"]) == 2


def test_console_entry_point_runs_as_module():
    result = subprocess.run([sys.executable, "-m", "memgym", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "generate" in result.stdout
