"""The quickstart report: the sections stitched into ``report.md``, ending with ``memgym findings``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memgym.core.benchmark import ReportSection
from memgym.core.errors import MemgymError


def findings_section(report_dir: Path, scale: Sequence[str] = ()) -> ReportSection:
    """``memgym findings`` over the quickstart's own runs (written to ``report_dir/findings``),
    labelled with the ``scale`` each benchmark ran at (one line each)."""
    from memgym.pipelines.findings.report import write_findings

    try:
        report = write_findings([report_dir], report_dir / "findings")
    except MemgymError as exc:
        return ReportSection("findings", f"not written: {exc}\n")
    table = report.read_text(encoding="utf-8").split("\n", 2)[2]
    lines = [
        "The papers' claims against the runs above, **at quickstart scale**:",
        "",
        *[f"- {line}" for line in scale],
        "",
        "A claim whose run holds fewer items (AMemOps: streams) than its minimum, or whose interval "
        "spans both verdicts, is 'undecided' with the count that would likely decide it; one the runs "
        "cannot measure is 'not measured' with the command that would. `memgym view` on this folder "
        "opens the table with links to each run.",
        "",
    ]
    plots = ("findings/findings.png",) if (report.parent / "findings.png").is_file() else ()
    return ReportSection("findings", "\n".join(lines) + "\n" + table, plots)


def findings_summary(report_dir: Path) -> str:
    """The findings table in short (claim, our effect, verdict) for the terminal."""
    import json

    path = report_dir / "findings" / "findings.json"
    if not path.is_file():
        return "no findings written (see report.md)"
    rows = json.loads(path.read_text(encoding="utf-8"))["findings"]
    width = max(len(r["claim"]) for r in rows)
    lines = []
    for r in rows:
        ours = (
            "" if r["effect_pp"] is None else f"{r['effect_pp']:+6.1f} [{r['low']:+.1f}, {r['high']:+.1f}] n={r['n']}"
        )
        lines.append(f"  {r['benchmark']:<9} {r['claim']:<{width}}  {ours:<30} {r['verdict']}")
    return "\n".join(lines)


def render_report(sections: Sequence[ReportSection]) -> str:
    """Markdown of the whole report: one heading per section, plots as images."""
    lines = ["# memgym quickstart report", ""]
    for section in sections:
        lines += [f"## {section.title}", "", section.markdown.rstrip(), ""]
        lines += [f"![{Path(p).stem}]({p})" for p in section.plots]
        lines.append("")
    return "\n".join(lines)
