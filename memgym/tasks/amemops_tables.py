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
optionally per ``query_type × attribute``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

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
    """Grouped bar chart (query types × models) of an :func:`accuracy_table`; writes ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(query_types)), 3.6))
    width = 0.8 / max(1, len(table))
    positions = np.arange(len(query_types))
    for i, row in enumerate(table):
        values = [row.get(q) if row.get(q) is not None else np.nan for q in query_types]
        ax.bar(
            positions + (i - (len(table) - 1) / 2) * width, values, width, label=f"{row['model']} @ {row['checkpoint']}"
        )
    ax.set_xticks(positions, [q.replace("_", "-") for q in query_types])
    ax.set_ylabel("query-weighted accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, ncols=2, loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
