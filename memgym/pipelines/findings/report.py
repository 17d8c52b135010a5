"""``memgym findings``: every claim of :mod:`.claims` decided on the given runs, written as
``findings.md``, ``findings.csv``, ``findings.json`` and ``findings.png`` (our effects with their
95% intervals beside the papers' values)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.core.benchmark import benchmark_info, benchmark_of_job
from memgym.core.errors import RegistryError
from memgym.core.figures import save_figure
from memgym.core.outputs import write_text_atomic
from memgym.core.results import to_csv, to_markdown
from memgym.pipelines.findings.claims import CLAIMS, Claim, Measured, Tables
from memgym.pipelines.findings.runs import RunFolder, find_runs
from memgym.pipelines.findings.verdicts import decide

COLUMNS = (
    "benchmark",
    "claim",
    "paper",
    "ours",
    "effect_pp",
    "low",
    "high",
    "n",
    "verdict",
    "detail",
    "by_construction",
    "runs",
)


def finding_rows(runs: Sequence[RunFolder], claims: Sequence[Claim] = CLAIMS) -> list[dict[str, Any]]:
    """One row per claim (:data:`COLUMNS`), in the order of ``claims``."""
    tables = Tables.of(runs)
    rows = []
    for claim in claims:
        outcome = claim.measure(tables)
        row: dict[str, Any] = {
            "id": claim.id,
            "benchmark": claim.benchmark,
            "claim": claim.sentence,
            "paper": claim.paper,
            "paper_effect": claim.paper_effect,
        }
        reason = claim.by_construction(tables) if claim.by_construction is not None else ""
        row["by_construction"] = reason
        if isinstance(outcome, Measured):
            effect = outcome.effect
            decision = decide(
                effect, claim.kind, margin=claim.margin, min_items=claim.min_items, min_seeds=claim.min_seeds
            )
            detail = decision.reason + (f"; about {decision.needed} units would decide it" if decision.needed else "")
            verdict = decision.verdict
            if reason and verdict != "undecided":
                verdict, detail = "by construction", f"the interval reads {decision.verdict}, but {reason}"
            row.update(
                ours=outcome.ours,
                effect_pp=round(effect.estimate, 2),
                low=round(effect.low, 2),
                high=round(effect.high, 2),
                n=effect.n,
                verdict=verdict,
                detail=detail,
                runs=";".join(outcome.runs),
            )
        else:
            row.update(
                ours="", effect_pp=None, low=None, high=None, n=0, verdict="not measured", detail=outcome, runs=""
            )
        rows.append(row)
    return rows


def markdown(rows: Sequence[dict[str, Any]], runs: Sequence[RunFolder]) -> str:
    """``findings.md``: the table, then the runs it read and the rules."""
    shown = [
        {
            "benchmark": r["benchmark"],
            "claim": r["claim"],
            "paper": r["paper"],
            "ours (pp, 95% CI)": ""
            if r["effect_pp"] is None
            else f"{r['effect_pp']:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}], n={r['n']}; {r['ours']}",
            "verdict": r["verdict"],
            "why": r["detail"],
        }
        for r in rows
    ]
    counts = {v: sum(r["verdict"] == v for r in rows) for v in dict.fromkeys(r["verdict"] for r in rows)}
    return "\n".join(
        [
            "# memgym findings",
            "",
            "Each paper claim against the runs read. Effects are in percentage points with 95% bootstrap "
            "intervals over the paired units (items; AMemOps: streams). Verdict rules: docs/findings.md. "
            "A verdict speaks for these runs at their scale only.",
            "",
            "Verdicts: " + ", ".join(f"{v} {c}" for v, c in counts.items()),
            "",
            to_markdown(shown),
            "## Runs read",
            "",
            "Paths are relative to this folder.",
            "",
            *[f"- {r.benchmark}: `{r.path}` ({len(r.rows)} rows)" for r in runs],
            "",
        ]
    )


def plot(rows: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Measured effects with their intervals (dots, bars) beside the paper's effects (crosses)."""
    measured = [r for r in rows if r["effect_pp"] is not None]
    if not measured:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {
        "reproduced": "tab:green",
        "not reproduced": "tab:orange",
        "reversed": "tab:red",
        "undecided": "tab:gray",
        "by construction": "tab:purple",
    }
    names = [_readable(row) for row in measured]
    lines = sum(name.count("\n") + 1 for name in names)
    fig, ax = plt.subplots(figsize=(11, 0.17 * lines + 0.12 * len(measured) + 1.0))
    for y, row in enumerate(measured):
        colour = colours.get(row["verdict"], "black")
        ax.errorbar(
            row["effect_pp"],
            y,
            xerr=[[row["effect_pp"] - row["low"]], [row["high"] - row["effect_pp"]]],
            fmt="o",
            color=colour,
            capsize=3,
        )
        if row["paper_effect"] is not None:
            ax.plot(row["paper_effect"], y, "x", color="black")
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(measured)), names, fontsize=7.5)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("effect (pp): ours with 95% CI (coloured by verdict), paper (x)")
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=c, label=v) for v, c in colours.items()]
    handles.append(plt.Line2D([], [], marker="x", linestyle="", color="black", label="paper"))
    fig.legend(handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110, tight=True)


def default_out(paths: Sequence[str | Path]) -> Path:
    """Where ``memgym findings`` writes without ``--out``: ``findings/`` beside its runs, in the
    folder the given paths share, or above it while that is a run folder, a DialogMem eval or
    sweep folder or a job's folder (``runs/eval-voxmem/x`` -> ``runs/findings``)."""
    base = Path(os.path.commonpath([Path(p).resolve() for p in paths]))
    while (
        (base / "manifest.json").is_file()
        or base.name == "sweep"
        or benchmark_of_job(base.name) is not None
        or _holds_memory_stores(base.parent.name)
    ):
        base = base.parent
    return base / "findings"


def _holds_memory_stores(job: str) -> bool:
    """Whether ``job`` is the evaluation job of a benchmark whose run folders hold one store per memory."""
    benchmark = benchmark_of_job(job)
    return benchmark is not None and benchmark_info(benchmark).stores_per_memory


def _title(benchmark: str) -> str:
    """A benchmark's name in reports (its ``title``; the name when it is not registered)."""
    try:
        return benchmark_info(benchmark).title or benchmark
    except RegistryError:
        return benchmark


def relative_run(path: str | Path, out: Path) -> str:
    """``path`` relative to the findings folder ``out`` (``../eval-voxmem/x``), so the findings
    resolve from any working folder; absolute when the two share no folder."""
    try:
        return os.path.relpath(Path(path).resolve(), out.resolve())
    except ValueError:
        return str(Path(path).resolve())


def _readable(row: dict[str, Any], width: int = 70) -> str:
    """A claim's axis label: its benchmark and sentence, wrapped to ``width`` characters (two lines at most)."""
    import textwrap

    text = f"{_title(row['benchmark'])}: {row['claim']}"
    return "\n".join(textwrap.wrap(text, width, max_lines=2, placeholder=" …"))


def write_findings(paths: Sequence[str | Path], out: Path | None = None) -> Path:
    """Decide every claim on the runs at or below ``paths``; write the four files into ``out``
    (default :func:`default_out`); return ``out/findings.md``. Run paths are written relative
    to ``out`` (:func:`relative_run`)."""
    runs = find_runs(paths)
    rows = finding_rows(runs)
    out = default_out(paths) if out is None else Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        row["runs"] = ";".join(relative_run(run, out) for run in row["runs"].split(";") if run)
    runs = [dataclasses.replace(run, path=Path(relative_run(run.path, out))) for run in runs]
    write_text_atomic(out / "findings.csv", to_csv([{k: r.get(k) for k in ("id", *COLUMNS)} for r in rows]))
    write_text_atomic(
        out / "findings.json", json.dumps({"findings": rows, "runs": [str(r.path) for r in runs]}, indent=1)
    )
    plot(rows, out / "findings.png")
    report = out / "findings.md"
    write_text_atomic(report, markdown(rows, runs))
    return report
