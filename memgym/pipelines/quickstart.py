"""``memgym run quickstart``: every registered benchmark end to end at a small size.

Each benchmark's :meth:`~memgym.core.benchmark.Benchmark.quickstart` writes its own resumable
run folders and plots under ``RUNS/quickstart/`` and returns a report section; the sections are
stitched into ``RUNS/quickstart/report.md``. A benchmark that fails is reported (with its
traceback) and the others still run; the command then exits non-zero.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from memgym.core.benchmark import Benchmark, JobArgs, ReportSection
from memgym.core.errors import MemgymError
from memgym.core.registry import BENCHMARKS


def run_quickstart(args: JobArgs) -> Path:
    """Run all quickstarts; return the path of the written report."""
    report_dir = Path(args.runs_dir) / "quickstart"
    report_dir.mkdir(parents=True, exist_ok=True)
    benches = [(name, cls) for name, cls in BENCHMARKS.items() if "quickstart" in cls.implemented_jobs()]
    if not benches:
        raise MemgymError("no registered benchmark implements a quickstart yet")
    sections: list[ReportSection] = []
    failed: list[str] = []
    for name, cls in benches:
        bench: Benchmark = cls()
        print(f"== quickstart: {name} ==", flush=True)
        start = time.perf_counter()
        try:
            section = bench.quickstart(report_dir, args)
        except Exception as exc:  # one benchmark's failure must not hide the others' results
            failed.append(name)
            detail = traceback.format_exc() if not isinstance(exc, MemgymError) else str(exc)
            section = ReportSection(name, f"**failed**:\n\n```\n{detail}\n```\n")
            print(detail, flush=True)
        elapsed = time.perf_counter() - start
        sections.append(ReportSection(section.title, section.markdown + f"\n_{elapsed:.1f} s_\n", section.plots))
    sections.append(findings_section(report_dir))
    report = report_dir / "report.md"
    report.write_text(render_report(sections), encoding="utf-8")
    if failed:
        raise MemgymError(f"quickstart failed for {', '.join(failed)}; see {report}")
    return report


def findings_section(report_dir: Path) -> ReportSection:
    """``memgym findings`` over the quickstart's own runs (written to ``report_dir/findings``)."""
    from memgym.pipelines.findings.report import write_findings

    try:
        report = write_findings([report_dir], report_dir / "findings")
    except MemgymError as exc:
        return ReportSection("findings", f"not written: {exc}\n")
    table = report.read_text(encoding="utf-8").split("\n", 2)[2]
    note = (
        "The papers' claims against the runs above, **at quickstart scale** (a few items, short "
        "training): most verdicts are 'undecided' or 'not measured' with the count or run that would "
        "decide them. `memgym view` on this folder opens the table with links to each run.\n\n"
    )
    return ReportSection(
        "findings", note + table, ("findings/findings.png",) if (report.parent / "findings.png").is_file() else ()
    )


def render_report(sections: list[ReportSection]) -> str:
    """Markdown of the whole report: one heading per section, plots as images."""
    lines = ["# memgym quickstart report", ""]
    for section in sections:
        lines += [f"## {section.title}", "", section.markdown.rstrip(), ""]
        lines += [f"![{Path(p).stem}]({p})" for p in section.plots]
        lines.append("")
    return "\n".join(lines)
