"""AMemOps accuracy tables (Table 2 / Table 3 style) and their plot, from per-query result rows.

A result row is one query answered by one trained model::

    {"model": "gdn2", "checkpoint": 24000, "seed": 0, "stream": "s0007",
     "query_type": "post_update", "attribute": "gain", "correct": 1}

* **Query-weighted accuracy** (Table 2): within each seed, the fraction of correct queries of a
  query type (all streams pooled); then the mean over seeds.
* **Per-stream accuracy** (Table 3): within each seed, the mean over streams of each stream's
  accuracy on that query type (streams without such a query are skipped); then the mean over
  seeds.

Tables have one row per ``(model, checkpoint)`` and one column per query type (in percent), and
optionally per ``query_type × attribute``. :func:`paired_difference` gives model differences in
percentage points with the paired stream / independent seed bootstrap of the AMemOps statistics.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memgym.core.figures import legend_outside, save_figure, system_styles
from memgym.core.statistics import Interval, percentile_interval

QUERY_TYPES: tuple[str, ...] = ("initial", "post_update", "interference", "absent", "retained")
"""Query types of AMemOps in table order."""

ATTRIBUTES: tuple[str, ...] = ("gain", "pan")

Weighting = Literal["query", "stream"]


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def seed_accuracy(rows: Iterable[dict[str, Any]], *, weighting: Weighting = "query") -> float | None:
    """Accuracy (0-1) of one seed's rows: pooled over queries, or averaged per stream first."""
    rows = list(rows)
    if weighting == "query":
        return _mean(float(r["correct"]) for r in rows)
    streams: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        streams[str(r["stream"])].append(float(r["correct"]))
    return _mean(sum(v) / len(v) for v in streams.values())


def accuracy_cell(rows: Iterable[dict[str, Any]], *, weighting: Weighting = "query") -> float | None:
    """Mean over seeds of :func:`seed_accuracy`, in percent (None when there are no rows)."""
    by_seed: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_seed[r["seed"]].append(r)
    mean = _mean(a for a in (seed_accuracy(v, weighting=weighting) for v in by_seed.values()) if a is not None)
    return None if mean is None else 100.0 * mean


def accuracy_table(
    rows: Iterable[dict[str, Any]],
    *,
    weighting: Weighting = "query",
    by_attribute: bool = False,
    query_types: Sequence[str] = QUERY_TYPES,
    model_order: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """One dict per ``(model, checkpoint)``: ``model, checkpoint, seeds,`` then one percent column
    per query type (``post_update`` or, with ``by_attribute``, ``post_update/gain``...)."""
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(str(r["model"]), r["checkpoint"])].append(r)
    order = {name: i for i, name in enumerate(model_order)}
    table = []
    for model, checkpoint in sorted(groups, key=lambda k: (order.get(k[0], len(order)), k[0], str(k[1]))):
        members = groups[(model, checkpoint)]
        row: dict[str, Any] = {"model": model, "checkpoint": checkpoint, "seeds": len({r["seed"] for r in members})}
        for qtype in query_types:
            of_type = [r for r in members if r["query_type"] == qtype]
            if by_attribute:
                for attribute in ATTRIBUTES:
                    cell = [r for r in of_type if r["attribute"] == attribute]
                    row[f"{qtype}/{attribute}"] = accuracy_cell(cell, weighting=weighting)
            else:
                row[qtype] = accuracy_cell(of_type, weighting=weighting)
        table.append(row)
    return table


def previous_share(rows: Iterable[dict[str, Any]]) -> float | None:
    """Percent of the wrong post-update answers among ``rows`` that gave the superseded value (rows
    without ``previous_value`` are not counted); None without such answers."""
    wrong = [r for r in rows if r["query_type"] == "post_update" and not r["correct"] and "previous_value" in r]
    return 100.0 * sum(bool(r["previous_value"]) for r in wrong) / len(wrong) if wrong else None


def seed_table(
    rows: Iterable[dict[str, Any]], *, query_types: Sequence[str] = QUERY_TYPES, model_order: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """One dict per ``(model, checkpoint, seed)``: ``model, checkpoint, seed,`` the query-weighted
    accuracy (%) per query type, and ``previous_share``: the percent of wrong post-update answers
    that gave the superseded value (None without errors or without ``previous_value`` in the rows).
    The seed spread that :func:`accuracy_table` averages away."""
    groups: dict[tuple[str, Any, Any], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(str(r["model"]), r["checkpoint"], r["seed"])].append(r)
    order = {name: i for i, name in enumerate(model_order)}
    table = []
    for model, checkpoint, seed in sorted(groups, key=lambda k: (order.get(k[0], len(order)), k[0], str(k[1]), k[2])):
        members = groups[(model, checkpoint, seed)]
        row: dict[str, Any] = {"model": model, "checkpoint": checkpoint, "seed": seed}
        for qtype in query_types:
            row[qtype] = accuracy_cell([r for r in members if r["query_type"] == qtype])
        row["previous_share"] = previous_share(members)
        table.append(row)
    return table


def table_markdown(table: Sequence[dict[str, Any]], *, title: str = "") -> str:
    """Markdown of an :func:`accuracy_table` (percent with one decimal, ``-`` for empty cells)."""
    if not table:
        return "_no results_\n"
    columns = list(table[0])
    lines = [f"**{title}**", ""] if title else []
    lines.append("| " + " | ".join(c.replace("_", "-") for c in columns) + " |")
    lines.append("|" + "|".join(" --- " if c in ("model",) else " ---: " for c in columns) + "|")
    for row in table:
        cells = []
        for column in columns:
            value = row[column]
            cells.append("-" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_accuracy(table: Sequence[dict[str, Any]], path: Path, *, query_types: Sequence[str] = QUERY_TYPES) -> Path:
    """Grouped bar chart (query types × models) of an :func:`accuracy_table`; writes ``path`` (PNG).
    Query types no model has a value for (none asked in these streams) are left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    query_types = [q for q in query_types if any(row.get(q) is not None for row in table)] or list(query_types)
    labels = [f"{row['model']} @ {row['checkpoint']}" for row in table]
    styles = system_styles(labels)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(query_types) + 1.0), 3.6))
    width = 0.8 / max(1, len(table))
    positions = np.arange(len(query_types))
    for i, (row, label) in enumerate(zip(table, labels)):
        values = [row.get(q) if row.get(q) is not None else np.nan for q in query_types]
        style = styles[label]
        ax.bar(
            positions + (i - (len(table) - 1) / 2) * width, values, width, label=label,
            color=style["color"], hatch=style["hatch"], edgecolor="white", linewidth=0.3,
        )  # fmt: skip
    ax.set_xticks(positions, [q.replace("_", "-") for q in query_types])
    ax.set_ylabel("query-weighted accuracy (%)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    legend_outside(fig, ax, title="model @ checkpoint", fontsize=7)
    return save_figure(fig, path, dpi=120, tight=True)


def _stream_scores(rows: Iterable[dict[str, Any]], streams: Sequence[str]) -> np.ndarray:
    """``(seeds, streams)`` per-stream accuracy (0-1) of one model's rows on the listed streams."""
    seeds = sorted({r["seed"] for r in rows}, key=str)
    column = {s: j for j, s in enumerate(streams)}
    totals = np.zeros((len(seeds), len(streams)))
    counts = np.zeros((len(seeds), len(streams)))
    for r in rows:
        i, j = seeds.index(r["seed"]), column[str(r["stream"])]
        totals[i, j] += float(r["correct"])
        counts[i, j] += 1
    if np.any(counts == 0):
        raise ValueError("every seed must answer the same streams to pair them across models")
    return totals / counts


def paired_difference(
    rows: Sequence[dict[str, Any]],
    model: str,
    reference: str,
    query_type: str,
    *,
    rng: np.random.Generator,
    checkpoint: Any = None,
    n_resamples: int = 10_000,
    level: float = 0.95,
) -> Interval | None:
    """Difference ``model - reference`` in percentage points, with a paired bootstrap interval
    (:func:`averaged_contrast` of one model against one)."""
    return averaged_contrast(
        rows, (model,), (reference,), query_type, rng=rng, checkpoint=checkpoint, n_resamples=n_resamples, level=level
    )


def averaged_contrast(
    rows: Sequence[dict[str, Any]],
    plus: Sequence[str],
    minus: Sequence[str],
    query_type: str,
    *,
    rng: np.random.Generator,
    checkpoint: Any = None,
    n_resamples: int = 10_000,
    level: float = 0.95,
) -> Interval | None:
    """``mean(acc(plus models)) - mean(acc(minus models))`` in percentage points, with a paired
    bootstrap interval (e.g. GDN2 against attention averaged over RoPE settings).

    As in the AMemOps statistics: within each (model, seed) the queries of ``query_type`` are
    averaged per stream, then non-empty streams and seeds are weighted equally. Only streams every
    model answered are used. Each bootstrap resample draws streams once for all models (paired)
    and seeds independently per model.

    Args:
        rows: per-query result rows (module docstring); ``checkpoint`` selects one checkpoint.
    Returns:
        the interval, or None when some model has no query of this type.
    """
    if not plus or not minus:
        raise ValueError("a contrast needs models on both sides")

    def select(name: str) -> list[dict[str, Any]]:
        return [
            r
            for r in rows
            if r["model"] == name
            and r["query_type"] == query_type
            and (checkpoint is None or r["checkpoint"] == checkpoint)
        ]

    chosen = [select(name) for name in (*plus, *minus)]
    streams = sorted(set.intersection(*({str(r["stream"]) for r in mine} for mine in chosen)))
    if not streams:
        return None
    scores = [_stream_scores([r for r in mine if str(r["stream"]) in streams], streams) for mine in chosen]
    signs = np.array([1.0 / len(plus)] * len(plus) + [-1.0 / len(minus)] * len(minus))
    estimate = 100.0 * float(sum(w * s.mean() for w, s in zip(signs, scores)))
    stats = np.empty(n_resamples)
    batch = max(1, 2_000_000 // (len(streams) * max(s.shape[0] for s in scores)))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        stream_idx = rng.integers(0, len(streams), size=(size, len(streams)))
        total = np.zeros(size)
        for weight, model_scores in zip(signs, scores):
            per_seed = model_scores[:, stream_idx].mean(axis=2)  # (seeds, size)
            seed_idx = rng.integers(0, model_scores.shape[0], size=(size, model_scores.shape[0]))
            total += weight * np.take_along_axis(per_seed.T, seed_idx, axis=1).mean(axis=1)
        stats[start : start + size] = 100.0 * total
    return percentile_interval(stats, estimate, level)


def difference_markdown(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    *,
    rng: np.random.Generator,
    query_types: Sequence[str] = QUERY_TYPES,
    n_resamples: int = 10_000,
) -> str:
    """Markdown table of :func:`paired_difference` of every model against ``models[0]``, per
    checkpoint and query type (``estimate [low, high]`` in pp)."""
    reference = models[0]
    checkpoints = sorted({r["checkpoint"] for r in rows}, key=str)
    lines = [
        f"**Paired differences (pp) against {reference}, 95% bootstrap CI (streams paired, seeds independent)**",
        "",
        "| model | checkpoint | " + " | ".join(q.replace("_", "-") for q in query_types) + " |",
        "| --- | ---: |" + " ---: |" * len(query_types),
    ]
    for model in models[1:]:
        for checkpoint in checkpoints:
            cells = []
            for qtype in query_types:
                interval = paired_difference(
                    rows, model, reference, qtype, rng=rng, checkpoint=checkpoint, n_resamples=n_resamples
                )
                cells.append("-" if interval is None else interval.format(1))
            lines.append(f"| {model} | {checkpoint} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
