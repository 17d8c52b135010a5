"""``memgym run quickstart``: its job schedule, its command lines, and the report it stitches.

The full quickstart (about 4 minutes on 2 idle cores) is not run here; these tests check what it
is made of: the jobs run after their prerequisites (in this process and on spawned workers), a
failed job skips the jobs after it and fails its section only, every built-in job is a valid
command line of its benchmark, and the report holds each section, its timing and the findings.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memgym.cli import main
from memgym.core.benchmark import Benchmark, JobArgs, ReportSection
from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.core.registry import BENCHMARKS
from memgym.pipelines.quickstart import run as quickstart_run
from memgym.pipelines.quickstart.jobs import Done, Job, run_jobs
from memgym.pipelines.quickstart.section import Section


def log_runner(job: Job, progress: bool) -> Done:
    """A job stand-in: appends ``start name`` / ``end name`` lines to ``runs_dir/log``; a job named
    ``bad...`` fails."""
    job.runs_dir.mkdir(parents=True, exist_ok=True)
    log = job.runs_dir / "log"
    with log.open("a") as handle:
        handle.write(f"start {job.name}\n")
    time.sleep(0.05)
    with log.open("a") as handle:
        handle.write(f"end {job.name}\n")
    return Done(job.name, 0.05, 0.0, error="boom" if job.name.startswith("bad") else "")


def _chain(tmp_path: Path) -> list[Job]:
    return [
        Job("a", "x", "generate", (), tmp_path),
        Job("bad", "x", "generate", (), tmp_path),
        Job("b", "x", "eval", (), tmp_path, after=("a",)),
        Job("c", "x", "eval", (), tmp_path, after=("b", "bad")),
        Job("d", "x", "eval", (), tmp_path),
        Job("e", "x", "eval", (), tmp_path, after=("c",)),
    ]


@pytest.mark.parametrize("workers", [1, 2])
def test_jobs_run_after_their_prerequisites_and_a_failure_skips_what_needs_it(tmp_path: Path, workers: int) -> None:
    events: list[tuple[str, str]] = []
    done = run_jobs(_chain(tmp_path), workers, lambda kind, job, _: events.append((kind, job.name)), runner=log_runner)
    log = (tmp_path / "log").read_text().splitlines()
    assert log.index("end a") < log.index("start b")  # prerequisites finish first
    assert "start c" not in log and done["c"].error == "not run: 'bad' failed" and ("skip", "c") in events
    assert "start e" not in log and done["e"].error == "not run: 'c' failed"  # skipped after a skipped job
    assert {n for n, d in done.items() if not d.error} == {"a", "b", "d"} and done["bad"].error == "boom"
    if workers == 1:  # in this process: the given order, one at a time
        assert log == ["start a", "end a", "start bad", "end bad", "start b", "end b", "start d", "end d"]


def test_a_job_after_a_later_job_is_refused(tmp_path: Path) -> None:
    jobs = [Job("b", "x", "eval", (), tmp_path, after=("a",)), Job("a", "x", "generate", (), tmp_path)]
    with pytest.raises(ValueError, match="after earlier jobs only"):
        run_jobs(jobs, 1, lambda *_: None, runner=log_runner)


def _config_of(job: Job) -> type:
    configs = BENCHMARKS.get(job.benchmark)().job_configs(job.job)
    return configs[""]


def test_every_builtin_job_is_a_valid_command_line(tmp_path: Path) -> None:
    jobs = [j for s in quickstart_run.SECTIONS for j in s.jobs(tmp_path / s.benchmark)]
    for job in jobs:  # preset= is a command-line key expanded before the config is read
        load_config(_config_of(job), overrides=[o for o in job.overrides if not o.startswith("preset=")])
    ordered = quickstart_run._ordered(jobs)
    assert [j.name for j in ordered][:2] == ["voxmem generate", "amemops train gdn2"]  # the longest chains first
    done = run_jobs(ordered, 1, lambda *_: None, runner=log_runner)  # prerequisites still come first
    assert len(done) == len(jobs) == 7 and not any(d.error for d in done.values())


class _Steps(Benchmark):
    """A benchmark whose jobs write ``out``: generate the text ``made``, eval its upper case."""

    name = "steps"

    def generate(self, args: JobArgs) -> Path:
        args.out.write_text("made")
        return args.out

    def eval(self, args: JobArgs) -> Path:
        source = Path(args.overrides[0].split("=", 1)[1])
        if not source.is_file():
            raise ConfigError(f"{source}: expected a file written by generate")
        args.out.write_text(source.read_text().upper())
        return args.out


def _steps_section(name: str, benchmark: str, fail: bool = False) -> Section:
    def jobs(folder: Path) -> list[Job]:
        folder.mkdir(parents=True, exist_ok=True)
        made, result = folder / "made.txt", folder / "result.txt"
        source = folder / "missing.txt" if fail else made
        return [
            Job(f"{name} generate", benchmark, "generate", (), folder, out=made),
            Job(
                f"{name} eval",
                benchmark,
                "eval",
                (f"source={source}",),
                folder,
                out=result,
                after=(f"{name} generate",),
            ),
        ]

    def report(folder: Path) -> ReportSection:
        return ReportSection(f"{name} section", f"result: {(folder / 'result.txt').read_text()}\n")

    return Section(benchmark, f"what {name} shows", jobs, report, lambda folder: f"{name}: 1 item")


def test_the_report_holds_each_section_and_a_failed_one_says_why(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setattr(BENCHMARKS, "_entries", {"steps": _Steps, "steps2": _Steps})
    monkeypatch.setattr(BENCHMARKS, "_declared", {})
    monkeypatch.setattr(quickstart_run, "SECTIONS", (_steps_section("good", "steps"),))
    assert main(["run", "quickstart", "workers=1", "--runs-dir", str(tmp_path), "--no-progress"]) == 0
    report = (tmp_path / "quickstart" / "report.md").read_text()
    assert "## good section\n\nresult: MADE" in report and "_2 jobs," in report
    assert "## findings\n\nnot written:" in report  # no evaluation run of a paper benchmark here
    out = capsys.readouterr().out
    assert "- steps: what good shows" in out and "finished good eval" in out

    monkeypatch.setattr(
        quickstart_run, "SECTIONS", (_steps_section("bad", "steps2", fail=True), _steps_section("good", "steps"))
    )
    assert main(["run", "quickstart", "workers=1", "--runs-dir", str(tmp_path / "2"), "--no-progress"]) == 2
    report = (tmp_path / "2" / "quickstart" / "report.md").read_text()
    assert (
        "## steps2\n\n**failed**" in report and "memgym: error: " in report and "missing.txt: expected a file" in report
    )
    assert "result: MADE" in report  # the other section still ran
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("memgym: error: quickstart failed for steps2; see ")


@pytest.mark.parametrize("key", ["workers=-1", "worker=2"])
def test_bad_keys_are_one_error_line(tmp_path: Path, key: str, capsys) -> None:
    assert main(["run", "quickstart", key, "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error:") and key.split("=")[0] in err[0]
