"""The comparison of ``memgym eval dialogmem memories=[...]``: several memories on the same items.

From each memory's result rows (:mod:`memgym.pipelines.dialogmem_jobs`) it computes, per memory,
the mean score with a percentile bootstrap interval (:func:`memgym.core.statistics.bootstrap_mean`,
items resampled) of

* navigation: geodesic success, and execution success and SPL when they were measured;
* QA: LLM-match (0-100) when a judge scored the items, token F1 otherwise,

overall and per slice of the item annotations: ``content_type``, ``verbalised`` (QA only: the
answer is stated in the dialogue) and ``updated`` (QA: the answer fact changed after it was first
stated; navigation: an identifying cue did). Scores are percentages. Items whose row holds an
``error`` (or no value for the metric) do not count; each memory's error count is reported.

Each interval's generator is seeded from ``(seed, memory, task, slice, group, metric)``, so a
table does not depend on the order of memories or rows. Outputs (:func:`write_comparison`):
``comparison.md`` (one table per task and slice: memories as columns, ``mean [low, high] (n)``
cells), ``comparison.csv`` (long form: one row per memory, task, slice, group and metric) and
``comparison.png`` (grouped bars per memory with the intervals as error bars: navigation metrics;
QA overall and per content type).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.results import to_csv, to_markdown
from memgym.core.statistics import bootstrap_mean

NAVIGATION_METRICS = ("geodesic_success", "execution_success", "spl")
SLICES = {"navigation": ("content_type", "updated"), "qa": ("content_type", "verbalised", "updated")}
"""Annotation columns each task is broken down by (besides ``overall``)."""


def qa_metric(rows: Sequence[dict[str, Any]]) -> str:
    """``llm_match`` when any QA row holds an LLM-match score, else ``token_f1``."""
    return "llm_match" if any(r.get("llm_match") is not None for r in rows if r.get("task") == "qa") else "token_f1"


def _percent(metric: str, value: Any) -> float:
    return float(value) if metric == "llm_match" else 100.0 * float(value)


def labelled_rng(seed: int, *labels: Any) -> np.random.Generator:
    """A generator seeded from ``seed`` and the labels (order-free across cells and runs)."""
    digest = hashlib.sha256("|".join(str(v) for v in labels).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def comparison_rows(
    rows_by_memory: Mapping[str, Sequence[dict[str, Any]]], *, seed: int = 0, n_resamples: int = 2000
) -> list[dict[str, Any]]:
    """Long-form table: ``memory, task, slice, group, metric, n, mean, low, high`` (percent).

    ``slice`` is ``overall`` (group ``all``) or an annotation column (group: its value). A cell
    with no scored item has ``n = 0`` and no numbers.
    """
    every = [r for rows in rows_by_memory.values() for r in rows]
    metrics = {"navigation": [m for m in NAVIGATION_METRICS if any(r.get(m) is not None for r in every)]}
    metrics["qa"] = [qa_metric(every)]
    table = []
    for task, columns in SLICES.items():
        task_rows = [r for r in every if r.get("task") == task]
        for column in ("overall", *columns):
            groups = ["all"] if column == "overall" else sorted({str(r.get(column)) for r in task_rows})
            for group in groups:
                for metric in metrics[task]:
                    for memory, rows in rows_by_memory.items():
                        values = [
                            _percent(metric, r[metric])
                            for r in rows
                            if r.get("task") == task
                            and r.get(metric) is not None
                            and (column == "overall" or str(r.get(column)) == group)
                        ]
                        cell = {"memory": memory, "task": task, "slice": column, "group": group, "metric": metric}
                        cell["n"] = len(values)
                        if values:
                            rng = labelled_rng(seed, memory, task, column, group, metric)
                            interval = bootstrap_mean(values, rng=rng, n_resamples=n_resamples)
                            cell.update(mean=interval.estimate, low=interval.low, high=interval.high)
                        else:
                            cell.update(mean=None, low=None, high=None)
                        table.append(cell)
    return table


def comparison_markdown(table: Sequence[dict[str, Any]], errors: Mapping[str, int]) -> str:
    """One Markdown table per (task, metric, slice): groups as rows, memories as columns."""
    memories = list(dict.fromkeys(c["memory"] for c in table))
    parts = ["# DialogMem memory comparison\n", "Means in percent with 95% bootstrap intervals and item counts.\n"]
    keys = list(dict.fromkeys((c["task"], c["metric"], c["slice"]) for c in table))
    for task, metric, column in keys:
        cells = [c for c in table if (c["task"], c["metric"], c["slice"]) == (task, metric, column)]
        groups = list(dict.fromkeys(c["group"] for c in cells))
        lines = []
        for group in groups:
            line = {column if column != "overall" else "items": group}
            for memory in memories:
                cell = next(c for c in cells if c["group"] == group and c["memory"] == memory)
                line[memory] = (
                    "-"
                    if cell["mean"] is None
                    else f"{cell['mean']:.1f} [{cell['low']:.1f}, {cell['high']:.1f}] ({cell['n']})"
                )
            lines.append(line)
        title = f"## {task}: {metric}" + ("" if column == "overall" else f" by {column}")
        parts += [title + "\n", to_markdown(lines)]
    parts.append("Items with errors (not scored): " + ", ".join(f"{m} {n}" for m, n in errors.items()) + ".\n")
    return "\n".join(parts)


def plot_comparison(table: Sequence[dict[str, Any]], path: Path) -> Path:
    """Grouped bars per memory with interval error bars: navigation metrics (left), QA overall and
    per content type (right). Writes a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    memories = list(dict.fromkeys(c["memory"] for c in table))
    panels = [
        ("navigation", [c for c in table if c["task"] == "navigation" and c["slice"] == "overall"], "metric"),
        ("qa", [c for c in table if c["task"] == "qa" and c["slice"] in ("overall", "content_type")], "group"),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    width = 0.8 / max(1, len(memories))
    for axis, (task, cells, label) in zip(axes, panels):
        ticks = list(dict.fromkeys(c[label] for c in cells))
        for offset, memory in enumerate(memories):
            mine = {c[label]: c for c in cells if c["memory"] == memory}
            means = [mine[t]["mean"] or 0.0 if t in mine else 0.0 for t in ticks]
            lows = [
                m - (mine[t]["low"] if t in mine and mine[t]["low"] is not None else m) for t, m in zip(ticks, means)
            ]
            highs = [
                (mine[t]["high"] if t in mine and mine[t]["high"] is not None else m) - m for t, m in zip(ticks, means)
            ]
            positions = np.arange(len(ticks)) + offset * width
            axis.bar(positions, means, width, yerr=[lows, highs], capsize=2, label=memory)
        axis.set_xticks(np.arange(len(ticks)) + width * (len(memories) - 1) / 2)
        axis.set_xticklabels(ticks, rotation=30, ha="right")
        metric = cells[0]["metric"] if cells else ""
        axis.set_title("navigation (%)" if task == "navigation" else f"QA: {metric} (%)")
        axis.set_ylim(0, 125)  # room for the legend above 100
        axis.legend(fontsize=8, ncol=2, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_comparison(
    folder: Path, rows_by_memory: Mapping[str, Sequence[dict[str, Any]]], *, seed: int = 0, n_resamples: int = 2000
) -> list[dict[str, Any]]:
    """Write ``comparison.md``, ``comparison.csv`` and ``comparison.png`` into ``folder``; returns the table."""
    table = comparison_rows(rows_by_memory, seed=seed, n_resamples=n_resamples)
    errors = {m: sum(1 for r in rows if r.get("error")) for m, rows in rows_by_memory.items()}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "comparison.md").write_text(comparison_markdown(table, errors), encoding="utf-8")
    (folder / "comparison.csv").write_text(to_csv(table), encoding="utf-8")
    plot_comparison(table, folder / "comparison.png")
    return table
