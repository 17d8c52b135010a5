"""VoxMem result tables from per-item rows: cells x budgets, subtypes, refusals, evidence position.

Rows are the ``results.jsonl`` rows of ``memgym eval voxmem``: each has ``model``, ``memory``,
``budget``, ``evidence``, ``operation``, ``subtype``, ``status`` (``ok`` / ``over_context`` /
``error``), ``correct`` (1/0; over-context items count 0, errors are left out), ``refused``,
``false_refusal`` and ``evidence_position`` (early / middle / late third of the history).
Accuracies are percentages; intervals are 95 % percentile bootstraps over items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.figures import label_line_ends, legend_outside, save_figure, system_styles
from memgym.core.results import to_markdown
from memgym.core.statistics import bootstrap_mean
from memgym.datasets.voxmem.taxonomy import CELLS, EVIDENCE_TYPES, OPERATIONS

POSITIONS = ("early", "middle", "late")


def scored(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows that count for accuracy (answered or over context; errors left out)."""
    return [r for r in rows if r.get("status") in ("ok", "over_context") and r.get("correct") is not None]


def _groups(rows: Iterable[dict[str, Any]], keys: Sequence[str]) -> dict[tuple, list[dict[str, Any]]]:
    out: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(tuple(row.get(k) for k in keys), []).append(row)
    return dict(sorted(out.items(), key=lambda item: tuple(_order(v) for v in item[0])))


def _order(value: Any) -> tuple[int, float, str]:
    """Sort key of a group value: numbers (budgets) by size, before anything else by its text."""
    return (0, float(value), "") if isinstance(value, int | float) else (1, 0.0, str(value))


def _percent(rows: Sequence[dict[str, Any]]) -> float | None:
    return 100.0 * float(np.mean([r["correct"] for r in rows])) if rows else None


def cell_grid(rows: Sequence[dict[str, Any]]) -> str:
    """4 x 4 Markdown grid (evidence x operation) of accuracy and item count; the cell that is not
    part of the paper's VoxMem (semantics x IE) reads ``(not a cell)`` unless the run holds items of
    it (a build that named it), a cell without items ``-``."""
    lines = ["| evidence | " + " | ".join(OPERATIONS) + " |", "| --- |" + " ---: |" * len(OPERATIONS)]
    for evidence in EVIDENCE_TYPES:
        cells = []
        for operation in OPERATIONS:
            members = [r for r in rows if r["evidence"] == evidence and r["operation"] == operation]
            if (evidence, operation) not in CELLS and not members:
                cells.append("(not a cell)")
            elif not members:
                cells.append("-")
            else:
                cells.append(f"{_percent(members):.1f} (n={len(members)})")
        lines.append(f"| {evidence} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def budget_table(
    rows: Sequence[dict[str, Any]], rng: np.random.Generator, n_resamples: int = 2000
) -> list[dict[str, Any]]:
    """Accuracy with a bootstrap CI per (model, memory, budget), plus over-context and error counts."""
    table = []
    for (model, memory, budget), members in _groups(rows, ("model", "memory", "budget")).items():
        counted = scored(members)
        values = [100.0 * r["correct"] for r in counted]
        interval = bootstrap_mean(values, rng=rng, n_resamples=n_resamples) if counted else None
        table.append(
            {
                "model": model,
                "memory": memory,
                "budget": budget,
                "n": len(counted),
                "accuracy": interval.format(1) if interval else "-",
                "over_context": sum(r.get("status") == "over_context" for r in members),
                "errors": sum(r.get("status") == "error" for r in members),
            }
        )
    return table


def grouped_accuracy(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """Accuracy (%) and n per group of ``keys``."""
    return [
        {**dict(zip(keys, values)), "n": len(members), "accuracy": _percent(members)}
        for values, members in _groups(scored(rows), keys).items()
    ]


def refusal_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (model, memory): refusal rate on AR items (= their accuracy), false refusals on
    answerable items, and how often replies were empty."""
    table = []
    for (model, memory), members in _groups([r for r in rows if r.get("status") == "ok"], ("model", "memory")).items():
        ar = [r for r in members if r["operation"] == "AR"]
        answerable = [r for r in members if r["operation"] != "AR"]
        table.append(
            {
                "model": model,
                "memory": memory,
                "AR items": len(ar),
                "refused AR (%)": 100.0 * np.mean([r["refused"] for r in ar]) if ar else None,
                "answerable items": len(answerable),
                "false refusals (%)": 100.0 * np.mean([r["false_refusal"] for r in answerable]) if answerable else None,
                "empty replies (%)": 100.0 * np.mean([r.get("reply_class") == "empty" for r in members]),
            }
        )
    return table


def evidence_position(history_index: Sequence[int], n_sessions: int) -> str:
    """``early`` / ``middle`` / ``late``: the third of the history holding the evidence sessions' mean index."""
    if not history_index or n_sessions <= 1:
        return "middle"
    share = float(np.mean(history_index)) / (n_sessions - 1)
    return POSITIONS[min(2, int(share * 3))]


def plot_accuracy_vs_budget(rows: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Accuracy vs budget per evidence type, one panel per (model, memory); None without rows."""
    counted = scored(rows)
    if not counted:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = _groups(counted, ("model", "memory"))
    cols = min(3, len(panels))
    rows_n = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.4 * rows_n), squeeze=False)
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    styles = system_styles(EVIDENCE_TYPES)
    for axis, ((model, memory), members) in zip(axes.flat, panels.items()):
        budgets = sorted({int(r["budget"]) for r in members})
        axis.set_xscale("log", base=2)
        axis.set_ylim(-5, 105)
        ends = []  # lines often coincide (all right, all wrong): each is labelled at its end
        for evidence in EVIDENCE_TYPES:
            points = [
                (b, _percent([r for r in members if r["evidence"] == evidence and int(r["budget"]) == b]))
                for b in budgets
            ]
            points = [(b / 1024, a) for b, a in points if a is not None]
            if points:
                style = styles[evidence]
                axis.plot(*zip(*points), marker=style["marker"], color=style["color"], label=evidence, alpha=0.85)
                ends.append((evidence, *points[-1], style["color"]))
        axis.set_xticks([b / 1024 for b in budgets], [f"{b // 1024}K" for b in budgets])
        axis.set_xlim(min(budgets) / 1024 / 1.3, max(budgets) / 1024 * 1.3)
        label_line_ends(axis, ends)
        axis.set_title(f"{memory} / {model}", fontsize=9)
        axis.set_xlabel("context budget")
        axis.set_ylabel("accuracy (%)")
    fig.tight_layout()
    legend_outside(fig, axes, title="evidence")
    return save_figure(fig, path, dpi=100, tight=True)


def results_markdown(rows: Sequence[dict[str, Any]], rng: np.random.Generator, n_resamples: int = 2000) -> str:
    """Every table of the module docstring as one Markdown document."""
    parts = ["# VoxMem evaluation\n"]
    for (model, memory), members in _groups(scored(rows), ("model", "memory")).items():
        parts += [f"## accuracy per cell: {memory} / {model} (all budgets, %)\n", cell_grid(members)]
    parts += [
        "## accuracy per budget (%, 95% bootstrap CI over items)\n",
        to_markdown(budget_table(rows, rng, n_resamples)),
        "## accuracy by evidence type and budget (%)\n",
        to_markdown(grouped_accuracy(rows, ("model", "memory", "evidence", "budget")), digits=1),
        "## accuracy by operation and subtype (%)\n",
        to_markdown(grouped_accuracy(rows, ("model", "memory", "operation", "subtype")), digits=1),
        "## refusals\n",
        to_markdown(refusal_table(rows), digits=1),
        "## answerable items by evidence position in the history (%)\n",
        to_markdown(
            grouped_accuracy(
                [r for r in rows if r["operation"] != "AR"], ("model", "memory", "budget", "evidence_position")
            ),
            digits=1,
        ),
    ]
    errors = [r for r in rows if r.get("status") == "error"]
    parts.append(f"\n{len(errors)} item(s) failed with an error (column 'error' of results.jsonl).\n")
    return "\n".join(parts)
