"""The comparison of ``memgym eval dialogmem memories=[...]``: several memories on the same items.

From each memory's result rows (:mod:`memgym.pipelines.dialogmem.evaluation`) it computes, per memory,
the mean score with a percentile bootstrap interval (:func:`memgym.core.statistics.bootstrap_mean`,
items resampled) of

* navigation: geodesic success, and execution success and SPL when they were measured;
* QA: LLM-match (0-100) when a judge scored the items, token F1 otherwise,

overall and per slice of the item annotations: ``content_type``, ``verbalised`` (QA only: the
answer is stated in the dialogue) and ``updated`` (QA: the answer fact changed after it was first
stated; navigation: an identifying cue did). Scores are percentages. Items whose row holds an
``error`` (or no value for the metric) do not count; each memory's error count is reported.

A perception table follows (:func:`perception_rows`): per memory, the 3D location error of the
navigation answers against the target's annotated centre (median and 90th percentile, m; over
every localised answer, and over the answers whose picked entry shows the target, where the error
is that of the memory's 3D estimate alone) and the instance merges and splits of its object map
against the annotation, summed over episodes.

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

from memgym.core.figures import legend_outside, save_figure, system_styles
from memgym.core.results import to_csv, to_markdown
from memgym.core.statistics import bootstrap_mean

NAVIGATION_METRICS = ("geodesic_success", "execution_success", "spl")
SLICES = {"navigation": ("content_type", "updated"), "qa": ("content_type", "verbalised", "updated")}
"""Annotation columns each task is broken down by (besides ``overall``)."""


def qa_metric(rows: Sequence[dict[str, Any]]) -> str:
    """``llm_match`` when any QA row holds an LLM-match score, else ``token_f1`` when any holds
    token F1 (or none holds a score), else ``reward``: the 0-1 score of another registered scorer
    (``qa_scorer=exact_match``)."""
    qa = [r for r in rows if r.get("task") == "qa"]
    for metric in ("llm_match", "token_f1"):
        if any(r.get(metric) is not None for r in qa):
            return metric
    return "reward" if any(r.get("reward") is not None for r in qa) else "token_f1"


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
                        cell = {"memory": memory, "task": task, "slice": column, "group": group, "metric": metric}
                        values = [_percent(metric, r[metric]) for r in rows if _in_cell(r, task, metric, column, group)]
                        table.append(_with_interval(cell, values, seed, n_resamples))
    return table


def _in_cell(row: dict[str, Any], task: str, metric: str, column: str, group: str) -> bool:
    """Whether result ``row`` scores ``metric`` on a ``task`` item of ``group`` in ``column``."""
    in_group = column == "overall" or str(row.get(column)) == group
    return row.get("task") == task and row.get(metric) is not None and in_group


def _with_interval(cell: dict[str, Any], values: list[float], seed: int, n_resamples: int) -> dict[str, Any]:
    """``cell`` with ``n`` and the bootstrap mean and interval of ``values`` (None without values),
    drawn from the cell's own labelled stream."""
    cell["n"] = len(values)
    if values:
        rng = labelled_rng(seed, cell["memory"], cell["task"], cell["slice"], cell["group"], cell["metric"])
        interval = bootstrap_mean(values, rng=rng, n_resamples=n_resamples)
        cell.update(mean=interval.estimate, low=interval.low, high=interval.high)
    else:
        cell.update(mean=None, low=None, high=None)
    return cell


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


def _bar_heights(mine: dict[Any, dict[str, Any]], ticks: Sequence[Any]) -> tuple[list[float], list[float], list[float]]:
    """``(means, error below, error above)`` of one memory's bars at ``ticks`` from its cells
    ``mine`` (tick -> cell; a missing cell or mean is 0, a missing bound no error)."""
    means = [mine[t]["mean"] or 0.0 if t in mine else 0.0 for t in ticks]
    lows = [m - (mine[t]["low"] if t in mine and mine[t]["low"] is not None else m) for t, m in zip(ticks, means)]
    highs = [(mine[t]["high"] if t in mine and mine[t]["high"] is not None else m) - m for t, m in zip(ticks, means)]
    return means, lows, highs


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
    styles = system_styles(memories)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    width = 0.8 / max(1, len(memories))
    for axis, (task, cells, label) in zip(axes, panels):
        ticks = list(dict.fromkeys(c[label] for c in cells))
        for offset, memory in enumerate(memories):
            means, lows, highs = _bar_heights({c[label]: c for c in cells if c["memory"] == memory}, ticks)
            positions = np.arange(len(ticks)) + offset * width
            style = styles[memory]
            axis.bar(
                positions,
                means,
                width,
                yerr=[lows, highs],
                capsize=2,
                label=memory,
                color=style["color"],
                hatch=style["hatch"],
                edgecolor="white",
                linewidth=0.3,
                error_kw={"linewidth": 0.8},
            )
        axis.set_xticks(np.arange(len(ticks)) + width * (len(memories) - 1) / 2)
        axis.set_xticklabels(ticks, rotation=30, ha="right")
        metric = cells[0]["metric"] if cells else ""
        axis.set_title("navigation (%)" if task == "navigation" else f"QA: {metric} (%)")
        axis.set_ylim(0, 105)
    fig.tight_layout()
    legend_outside(fig, list(axes), title="memory")
    return save_figure(fig, path, dpi=100, tight=True)


def perception_rows(
    rows_by_memory: Mapping[str, Sequence[dict[str, Any]]], maps: Mapping[str, Mapping[str, Mapping[str, int]]]
) -> list[dict[str, Any]]:
    """One row per memory: location error of its navigation answers (``n``, median, p90 in m, over
    all localised answers and over ``target picks``) and its map's instances, merges, splits and
    mislabelled instances summed over episodes (``maps``: memory -> episode id -> counts; ``-``
    where a memory has none)."""
    out = []
    for memory, rows in rows_by_memory.items():
        nav = [r for r in rows if r.get("task") == "navigation" and r.get("location_error") is not None]
        line: dict[str, Any] = {"memory": memory}
        for name, chosen in (("all", nav), ("target picks", [r for r in nav if r.get("picked_target")])):
            errors = np.array([float(r["location_error"]) for r in chosen])
            line[f"{name} n"] = len(errors)
            line[f"{name} median m"] = f"{np.median(errors):.2f}" if len(errors) else "-"
            line[f"{name} p90 m"] = f"{np.percentile(errors, 90):.2f}" if len(errors) else "-"
        episodes = maps.get(memory, {})
        for key in ("instances", "merges", "splits", "mislabelled"):
            line[key] = sum(int(e.get(key, 0)) for e in episodes.values()) if episodes else "-"
        out.append(line)
    return out


def write_comparison(
    folder: Path,
    rows_by_memory: Mapping[str, Sequence[dict[str, Any]]],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    maps: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
) -> list[dict[str, Any]]:
    """Write ``comparison.md`` (with the perception table; ``maps``: memory -> episode id -> map
    counts), ``comparison.csv`` and ``comparison.png`` into ``folder``; returns the table."""
    table = comparison_rows(rows_by_memory, seed=seed, n_resamples=n_resamples)
    errors = {m: sum(1 for r in rows if r.get("error")) for m, rows in rows_by_memory.items()}
    folder.mkdir(parents=True, exist_ok=True)
    perception = (
        "\n## Perception: 3D location error of navigation answers (m) and map errors\n\n"
        "`all`: every localised answer; `target picks`: answers whose entry shows the target in most of "
        "its views (the error of the 3D estimate alone). Map: instances with annotated sources, merges "
        "(instances showing two or more objects), splits (extra instances of one object), mislabelled "
        "instances; summed over episodes.\n\n" + to_markdown(perception_rows(rows_by_memory, maps or {}))
    )
    (folder / "comparison.md").write_text(comparison_markdown(table, errors) + perception, encoding="utf-8")
    (folder / "comparison.csv").write_text(to_csv(table), encoding="utf-8")
    plot_comparison(table, folder / "comparison.png")
    return table
