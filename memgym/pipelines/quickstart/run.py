"""``memgym run quickstart [workers=N]``: the three benchmarks' comparisons at a small size, then
``memgym findings`` over the runs, in ``RUNS/quickstart/report.md``."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from memgym.core.benchmark import JobArgs, ReportSection, benchmark_info
from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.core.loading import load_target
from memgym.core.registry import BENCHMARKS
from memgym.pipelines.quickstart.jobs import Done, Job, run_jobs
from memgym.pipelines.quickstart.report import findings_section, findings_summary, render_report
from memgym.pipelines.quickstart.section import Section
from memgym.plugin_table import BENCHMARK_INFO

SECTIONS: tuple[Section, ...] = tuple(
    load_target(info.quickstart, f"quickstart section of benchmark '{name}'")
    for name, info in ((name, benchmark_info(name)) for name in BENCHMARK_INFO)
    if info.quickstart
)
"""The built-in sections memgym's benchmarks declare (:attr:`~memgym.core.benchmark.BenchmarkInfo.quickstart`),
in report order (a benchmark that is not registered is left out)."""
START_ORDER = ("voxmem generate", "amemops train", "dialogmem", "voxmem eval", "amemops eval")
"""Jobs start in this order of name prefixes when workers are free. Measured CPU seconds (2 cores
under load, docs/quickstart.md): VoxMem generate 61-87 + eval 52-55, the three AMemOps trainings
45-58 each + eval 5-6, DialogMem generate 3-4 + eval 57-59; on two workers this order ends within
a few seconds of an even split."""


@dataclasses.dataclass(frozen=True)
class QuickstartConfig:
    """``memgym run quickstart`` keys."""

    workers: int = dataclasses.field(
        default=0,
        metadata={
            "help": "processes running the jobs side by side (0: one per CPU, at most 4; 1: in this process)",
            "min": 0,
        },
    )


def _workers(config: QuickstartConfig) -> int:
    return config.workers or max(1, min(len(os.sched_getaffinity(0)), 4))


def _ordered(jobs: Sequence[Job]) -> list[Job]:
    """``jobs`` in :data:`START_ORDER` (stable within a prefix; prerequisites keep coming first)."""

    def rank(job: Job) -> int:
        return next((i for i, prefix in enumerate(START_ORDER) if job.name.startswith(prefix)), len(START_ORDER))

    return sorted(jobs, key=rank)


class Progress:
    """Prints one line per job event (:data:`~memgym.pipelines.quickstart.jobs.Events`)."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}

    def __call__(self, kind: str, job: Job, done: Done | None) -> None:
        if kind == "start":
            self.started[job.name] = time.perf_counter()
            print(f"  started  {job.name}: {job.command()}", flush=True)
        elif kind == "running":
            print(f"  running  {job.name} ({time.perf_counter() - self.started[job.name]:.0f} s)", flush=True)
        elif kind == "skip" and done is not None:
            print(f"  skipped  {job.name}: {done.error}", flush=True)
        elif done is not None:
            state = "FAILED  " if done.error else "finished"
            print(f"  {state} {job.name} in {done.wall_s:.0f} s ({done.cpu_s:.0f} s CPU)", flush=True)
            for line in done.warnings:
                print(line, file=sys.stderr, flush=True)
            if done.error:
                print(done.error.rstrip(), file=sys.stderr, flush=True)


def _section_report(section: Section, folder: Path, done: dict[str, Done], names: list[str]) -> ReportSection:
    """The section read from its outputs, with its jobs' times; a failed section says why."""
    errors = [f"{name}:\n{done[name].error}" for name in names if done[name].error]
    wall = sum(done[name].wall_s for name in names)
    cpu = sum(done[name].cpu_s for name in names)
    timing = f"\n_{len(names)} jobs, {wall:.0f} s of job time, {cpu:.0f} s CPU_\n"
    if errors:
        return ReportSection(section.benchmark, "**failed**:\n\n```\n" + "\n\n".join(errors) + "\n```\n" + timing)
    try:
        result = section.report(folder)
    except (OSError, ValueError, KeyError) as exc:  # an output the section reads is missing or changed
        return ReportSection(section.benchmark, f"**failed** reading its outputs: {exc!r}\n" + timing)
    return ReportSection(result.title, result.markdown + timing, result.plots)


def _plugin_sections(names: Sequence[str], report_dir: Path, args: JobArgs) -> tuple[list[ReportSection], list[str]]:
    """Registered benchmarks without a built-in section run their own ``quickstart`` here."""
    sections, failed = [], []
    for name in names:
        print(f"== quickstart: {name} ==", flush=True)
        start = time.perf_counter()
        try:
            section = BENCHMARKS.get(name)().quickstart(report_dir, args)
        except Exception as exc:  # one benchmark's failure must not hide the others' results
            failed.append(name)
            detail = str(exc) if isinstance(exc, MemgymError) else traceback.format_exc()
            section = ReportSection(name, f"**failed**:\n\n```\n{detail}\n```\n")
            print(detail, file=sys.stderr, flush=True)
        elapsed = time.perf_counter() - start
        sections.append(ReportSection(section.title, section.markdown + f"\n_{elapsed:.1f} s_\n", section.plots))
    return sections, failed


def _benchmarks_to_run(registered: list[str]) -> tuple[list[Section], list[str]]:
    """The built-in sections of the ``registered`` benchmarks, and the plugin benchmarks that
    implement a quickstart.

    Raises:
        MemgymError: there are none.
    """
    sections = [s for s in SECTIONS if s.benchmark in registered]
    builtin = {s.benchmark for s in SECTIONS}
    plugins = [n for n in registered if n not in builtin and "quickstart" in BENCHMARKS.get(n).implemented_jobs()]
    if not sections and not plugins:
        raise MemgymError("no registered benchmark implements a quickstart yet")
    return sections, plugins


def run_quickstart(args: JobArgs) -> Path:
    """Run the quickstart (module docstring); return the path of the written report.

    Raises:
        MemgymError: no benchmark to run, a bad key, or a section failed (after the report is written).
    """
    config = load_config(QuickstartConfig, path=args.config_path, overrides=args.overrides)
    workers = _workers(config)
    report_dir = Path(args.runs_dir) / "quickstart"
    report_dir.mkdir(parents=True, exist_ok=True)
    sections, plugins = _benchmarks_to_run(BENCHMARKS.names())
    started = time.perf_counter()
    print(f"memgym quickstart into {report_dir} ({workers} worker{'s' * (workers > 1)}); it shows:", flush=True)
    for section in sections:
        print(f"- {section.benchmark}: {section.shows}", flush=True)
    own = {s.benchmark: s.jobs(report_dir / s.benchmark) for s in sections}
    done = run_jobs(_ordered([j for jobs in own.values() for j in jobs]), workers, Progress(), progress=args.progress)
    reports = []
    for section in sections:
        names = [j.name for j in own[section.benchmark]]
        reports.append(_section_report(section, report_dir / section.benchmark, done, names))
    failed = [s.benchmark for s in sections if any(done[j.name].error for j in own[s.benchmark])]
    plugin_reports, plugin_failed = _plugin_sections(plugins, report_dir, args)
    scale = [s.scale(report_dir / s.benchmark) for s in sections if s.benchmark not in failed]
    reports += [*plugin_reports, findings_section(report_dir, scale)]
    report = report_dir / "report.md"
    report.write_text(render_report(reports), encoding="utf-8")
    print(f"\nmemgym findings over these runs ({time.perf_counter() - started:.0f} s in all):", flush=True)
    print(findings_summary(report_dir), flush=True)
    if failed or plugin_failed:
        raise MemgymError(f"quickstart failed for {', '.join(failed + plugin_failed)}; see {report}")
    return report
