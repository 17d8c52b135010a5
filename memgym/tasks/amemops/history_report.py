"""The matched-history report files (``history_contrasts.md``/``.csv``, ``history_accuracy.png``)
of a :class:`~memgym.tasks.amemops.history.HistoryReport` (the statistics are in
:mod:`memgym.tasks.amemops.history`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.figures import save_figure
from memgym.core.results import RunStore
from memgym.tasks.amemops.history import (
    LOADS,
    OPERATIONS,
    PRIMARY_MODELS,
    Cell,
    ContrastResult,
    HistoryReport,
    history_report,
    rank,
)


def _format(result: ContrastResult | None, which: str = "interval") -> str:
    if result is None:
        return "-"
    interval = getattr(result, which)
    if interval is None:
        return f"{result.estimate:.1f}" if which == "interval" else "-"
    return interval.format(1)


def _markdown_table(header: Sequence[str], lines: Iterable[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(x) for x in line) + " |" for line in lines]
    return out + [""]


def _by_condition(results: Sequence[ContrastResult], columns: Sequence[str]) -> list[list[Any]]:
    """One line per condition (labels except ``operation``), one column per operation."""
    grouped: dict[tuple, dict[str, ContrastResult]] = {}
    for result in results:
        labels = result.labels
        key = tuple(labels[k] for k in ("model", "checkpoint", "recordings", "earlier", "delay_s", "load"))
        grouped.setdefault(key, {})[labels["operation"]] = result
    return [
        [*key[:4], f"{key[4]:g}", key[5], *(_format(ops.get(op)) for op in columns)] for key, ops in grouped.items()
    ]


def report_markdown(report: HistoryReport, *, model_order: Sequence[str] = ()) -> str:
    """``history_contrasts.md``: primary contrasts (with notes), update gaps, earlier-event control
    differences (when the set has controls), Fig. 3 accuracies."""
    order = {m: i for i, m in enumerate(model_order)}

    def ordered(results: Sequence[ContrastResult]) -> list[ContrastResult]:
        return sorted(results, key=lambda r: order.get(r.labels["model"], len(order)))

    seeds = ", ".join(f"{m} {n}" for m, n in sorted(report.seeds.items(), key=lambda kv: order.get(kv[0], len(order))))
    lines = [
        "# Matched event histories",
        "",
        f"{report.templates} templates; seeds: {seeds}. {report.n_resamples} bootstrap resamples: templates "
        "paired across models and conditions, seeds drawn independently per model; 95% percentile intervals.",
        "",
        "## Primary history contrasts (pp)",
        "",
        "Original recordings, earlier target present. Update gap = accuracy on updated minus no-update "
        "queries; advantage = reference's update gap minus the baseline's; each effect is the change of the "
        "advantage with delay (averaged over loads) or load (averaged over delays). Simultaneous: estimate ± "
        "the 95th percentile of the maximum absolute centred bootstrap error over a checkpoint's contrasts.",
        "",
    ]
    if report.primary:
        lines += _markdown_table(
            ("model", "baseline", "checkpoint", "effect", "estimate [95% CI]", "simultaneous 95% CI"),
            (
                [r.labels["model"], r.labels["baseline"], r.labels["checkpoint"], r.labels["effect"]]
                + [_format(r), _format(r, "simultaneous")]
                for r in report.primary
            ),
        )
    lines += [f"* {note}" for note in report.notes] + ([""] if report.notes else [])
    gap_header = ("model", "checkpoint", "recordings", "earlier", "delay (s)", "load")
    lines += ["## Update gaps (pp) against no update", ""]
    lines += _markdown_table(
        (*gap_header, "updated - no-update", "retained - no-update"),
        _by_condition(ordered(report.gaps), ("updated", "retained")),
    )
    if report.controls:
        lines += ["## Earlier target against earlier-event controls (pp)", ""]
        lines += _markdown_table(
            (*gap_header[:3], "control", *gap_header[4:], *(f"{op.replace('_', '-')} - control" for op in OPERATIONS)),
            _by_condition(ordered(report.controls), OPERATIONS),
        )
    if report.previous:
        lines += ["## Update errors that gave the previous value (seeds pooled)", ""]
        lines += _markdown_table(
            (*gap_header[:4], "delay (s)", "load", "errors", "previous value", "share (%)"),
            (
                [*p.cell[:4], f"{p.cell.delay_s:g}", p.cell.load, p.errors, p.previous, f"{p.share:.1f}"]
                for p in sorted(report.previous, key=lambda p: order.get(p.cell.model, len(order)))
            ),
        )
    lines += ["## Accuracy (%) by operation (Fig. 3)", ""]
    lines += _markdown_table(
        (*gap_header, *(op.replace("_", "-") for op in OPERATIONS)),
        _by_condition(ordered(report.accuracy), OPERATIONS),
    )
    return "\n".join(lines)


CSV_COLUMNS: tuple[str, ...] = (
    "table",
    "model",
    "baseline",
    "checkpoint",
    "effect",
    "recordings",
    "earlier",
    "operation",
    "delay_s",
    "load",
    "estimate",
    "low",
    "high",
    "simultaneous_low",
    "simultaneous_high",
)


def report_csv(report: HistoryReport) -> str:
    """``history_contrasts.csv``: one line per reported number (tables ``primary``, ``update_gap``,
    ``earlier_control``, ``accuracy`` in percent or pp; ``previous_value_share`` in percent), empty
    fields where a column does not apply."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for result in (*report.primary, *report.gaps, *report.controls, *report.accuracy):
        line = dict(result.labels, estimate=f"{result.estimate:.4f}")
        for prefix, interval in (("", result.interval), ("simultaneous_", result.simultaneous)):
            if interval is not None:
                line[f"{prefix}low"], line[f"{prefix}high"] = f"{interval.low:.4f}", f"{interval.high:.4f}"
        writer.writerow(line)
    for p in report.previous:
        writer.writerow(dict(p.cell._asdict(), table="previous_value_share", estimate=f"{p.share:.4f}"))
    return buffer.getvalue()


def plot_history(report: HistoryReport, path: Path, *, model_order: Sequence[str] = ()) -> Path:
    """Fig. 3 style bars: one panel per (recordings, delay, load) with the earlier target present,
    operations on the x axis, one bar per model (and checkpoint) with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = [r for r in report.accuracy if r.labels["earlier"] == "target"]
    panels = sorted(
        {(r.labels["recordings"], r.labels["delay_s"], r.labels["load"]) for r in results},
        key=lambda p: (p[0], p[1], rank(p[2], LOADS)),
    )
    order = {m: i for i, m in enumerate(model_order)}
    series = sorted(
        {(r.labels["model"], r.labels["checkpoint"]) for r in results}, key=lambda s: (order.get(s[0], len(order)), s)
    )
    ncols = min(2, max(1, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.0 * nrows), squeeze=False, sharey=True)
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(OPERATIONS))
    lookup = {tuple(r.labels[k] for k in Cell._fields): r for r in results}
    for ax, (recordings, delay, load) in zip(axes.flat, panels):
        for i, (model, checkpoint) in enumerate(series):
            found = [lookup.get((model, checkpoint, recordings, "target", op, delay, load)) for op in OPERATIONS]
            values = np.array([np.nan if r is None else r.estimate for r in found])
            errors = np.array(
                [
                    [0.0, 0.0]
                    if r is None or r.interval is None
                    else [r.estimate - r.interval.low, r.interval.high - r.estimate]
                    for r in found
                ]
            ).T
            offset = (i - (len(series) - 1) / 2) * width
            ax.bar(positions + offset, values, width, yerr=errors, capsize=2, label=f"{model} @ {checkpoint}")
        ax.set_title(f"{recordings}, {delay:g} s, {load} load", fontsize=9)
        ax.set_xticks(positions, [op.replace("_", "-") for op in OPERATIONS])
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("accuracy (%)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), fontsize=7, loc="lower center", ncols=min(4, len(series)))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return save_figure(fig, path, dpi=120)


def write_history_report(
    store: RunStore,
    rows: Sequence[dict[str, Any]],
    *,
    model_order: Sequence[str],
    primary_models: Sequence[str] = PRIMARY_MODELS,
    n_resamples: int = 10_000,
) -> str:
    """Write ``history_contrasts.md``, ``history_contrasts.csv`` and ``history_accuracy.png`` into
    the eval folder (seeded, so re-running on the same rows gives the same files); returns the
    markdown."""
    report = history_report(rows, rng=np.random.default_rng(0), n_resamples=n_resamples, primary_models=primary_models)
    text = report_markdown(report, model_order=model_order)
    store.write_text("history_contrasts.md", text)
    store.write_text("history_contrasts.csv", report_csv(report))
    plot_history(report, store.folder / "history_accuracy.png", model_order=model_order)
    return text
