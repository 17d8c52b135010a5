"""AMemOps accuracy broken down by a per-query condition, with bootstrap intervals (Fig. 2a).

:func:`pitch_difference_report` bins the per-query rows (:mod:`memgym.tasks.amemops.tables`) by
``pitch_difference``, the semitones between a query's recording and the recording of the
source's latest earlier event (instrument libraries only), and writes per bin:

* accuracy (%) per model and checkpoint: seeds averaged within each stream, then streams
  averaged; 95% percentile interval from resampling streams
  (:func:`memgym.core.statistics.bootstrap_mean`);
* paired differences against the first model (:func:`~memgym.tasks.amemops.tables.difference_markdown`:
  streams paired, seeds independent), e.g. GDN2 without against with its convolution.

:func:`recording_contrast_report` gives paired differences between recording controls (original
vs fixed, cycle-2 vs cycle-4), overall and gain- and pan-specific. :func:`contrast_report` gives
contrasts between groups of models, each side averaged (the width control of Fig. 4a: widened
models, unmatched attention, contrasts averaged over RoPE settings).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.figures import legend_outside, save_figure, system_styles
from memgym.core.statistics import Interval, bootstrap_mean, percentile_interval
from memgym.tasks.amemops.tables import (
    QUERY_TYPES,
    _stream_scores,
    averaged_contrast,
    difference_markdown,
    paired_difference,
)

PITCH_BINS: tuple[tuple[int, int | None, str], ...] = (
    (0, 0, "0"),
    (1, 4, "1-4"),
    (5, 11, "5-11"),
    (12, 23, "12-23"),
    (24, None, "24+"),
)
"""``(low, high, label)`` semitone bins (inclusive; ``None``: no upper end)."""


def pitch_bin(difference: int | None) -> str | None:
    """Label of the :data:`PITCH_BINS` bin holding ``difference`` (None: no pitch difference)."""
    if difference is None:
        return None
    for low, high, label in PITCH_BINS:
        if difference >= low and (high is None or difference <= high):
            return label
    raise ValueError(f"pitch difference must be >= 0, got {difference}")


def binned_rows(rows: Sequence[dict[str, Any]], *, query_types: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Rows that have a pitch difference (and one of ``query_types`` if given), with
    ``query_type`` replaced by their pitch bin label (so the per-type tools work per bin)."""
    out = []
    for row in rows:
        label = pitch_bin(row.get("pitch_difference"))
        if label is not None and (query_types is None or row["query_type"] in query_types):
            out.append({**row, "query_type": label})
    return out


def bin_accuracy(
    rows: Sequence[dict[str, Any]], *, rng: np.random.Generator, n_resamples: int = 10_000
) -> Interval | None:
    """Accuracy (%) of one model/checkpoint's rows: per-stream accuracy averaged over seeds, then
    over streams, with the stream-resampling interval (None without rows)."""
    per_seed: dict[tuple[str, Any], list[float]] = defaultdict(list)
    for row in rows:
        per_seed[str(row["stream"]), row["seed"]].append(float(row["correct"]))
    per_stream: dict[str, list[float]] = defaultdict(list)
    for (stream, _), values in per_seed.items():
        per_stream[stream].append(sum(values) / len(values))
    if not per_stream:
        return None
    scores = [100.0 * sum(v) / len(v) for _, v in sorted(per_stream.items())]
    if n_resamples <= 0:  # no interval asked for: a degenerate one at the estimate
        mean = float(np.mean(scores))
        return Interval(mean, mean, mean)
    return bootstrap_mean(scores, rng=rng, n_resamples=n_resamples)


def accuracy_markdown(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    labels: Sequence[str],
    *,
    title: str,
    rng: np.random.Generator,
    n_resamples: int,
) -> tuple[str, dict[tuple[str, Any], list[Interval | None]]]:
    """Markdown of :func:`bin_accuracy` per (model, checkpoint) and bin label, and the intervals."""
    groups: dict[tuple[str, Any, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["model"], row["checkpoint"], row["query_type"]].append(row)
    checkpoints = sorted({r["checkpoint"] for r in rows}, key=str)
    lines = [
        title,
        "",
        "| model | checkpoint | " + " | ".join(labels) + " |",
        "| --- | ---: |" + " ---: |" * len(labels),
    ]
    intervals: dict[tuple[str, Any], list[Interval | None]] = {}
    for model in models:
        for checkpoint in checkpoints:
            cells, found = [], []
            for label in labels:
                group = groups.get((model, checkpoint, label), [])
                interval = bin_accuracy(group, rng=rng, n_resamples=n_resamples)
                found.append(interval)
                shown = interval and (interval.format(1) if n_resamples > 0 else f"{interval.estimate:.1f}")
                cells.append("-" if interval is None else f"{shown} (n={len(group)})")
            if any(found):
                intervals[model, checkpoint] = found
                lines.append(f"| {model} | {checkpoint} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", intervals


def plot_bins(intervals: dict[tuple[str, Any], list[Interval | None]], labels: Sequence[str], path: Path) -> Path:
    """Accuracy per bin, one line with 95% interval bars per (model, checkpoint)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    x = np.arange(len(labels))
    for (model, checkpoint), found in intervals.items():
        points = [(i, v) for i, v in enumerate(found) if v is not None]
        xs = np.array([x[i] for i, _ in points])
        est = np.array([v.estimate for _, v in points])
        err = np.array([[v.estimate - v.low for _, v in points], [v.high - v.estimate for _, v in points]])
        ax.errorbar(xs, est, yerr=err, marker="o", capsize=3, label=f"{model} @ {checkpoint}")
    ax.set_xticks(x, labels)
    ax.set_xlabel("pitch difference to the answer-carrying event (semitones)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, dpi=120)


def pitch_difference_report(
    rows: Sequence[dict[str, Any]], models: Sequence[str], folder: Path, *, n_resamples: int = 10_000
) -> str:
    """Write ``pitch_difference.md`` and ``pitch_difference.png`` into ``folder``; returns the markdown.

    Sections: all queries with a pitch difference, then post-update queries alone; each with
    accuracy per bin and, for two or more models, paired differences against ``models[0]``.
    """
    labels = [label for _, _, label in PITCH_BINS]
    text = "# Accuracy by pitch difference (Fig. 2a)\n\n"
    intervals_all: dict[tuple[str, Any], list[Interval | None]] = {}
    for name, types in (("all queries", None), ("post-update queries", ("post_update",))):
        binned = binned_rows(rows, query_types=types)
        if not binned:
            text += f"No {name} with a pitch difference (instrument libraries only).\n\n"
            continue
        present = [m for m in models if any(r["model"] == m for r in binned)]
        table, intervals = accuracy_markdown(
            binned,
            present,
            labels,
            title=f"**Accuracy (%) of {name} by pitch difference, 95% CI over streams (seeds averaged)**",
            rng=np.random.default_rng(0),
            n_resamples=n_resamples,
        )
        intervals_all = intervals_all or intervals
        text += table + "\n"
        if len(present) >= 2 and n_resamples > 0:
            text += difference_markdown(
                binned, present, rng=np.random.default_rng(1), query_types=labels, n_resamples=n_resamples
            )
            text += "\n"
    (folder / "pitch_difference.md").write_text(text, encoding="utf-8")
    if intervals_all:
        plot_bins(intervals_all, labels, folder / "pitch_difference.png")
    return text


def recording_contrast_report(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    contrasts: Sequence[tuple[str, str]],
    folder: Path,
    *,
    n_resamples: int = 10_000,
) -> str:
    """Write ``recording_contrasts.md`` and ``recording_contrasts.png``; returns the markdown.

    For every contrast ``(A, B)`` (recording controls; rows carry ``recordings``), model and
    checkpoint: the difference ``acc(A) - acc(B)`` in pp per query type, over all queries and for
    gain and pan queries alone, with the paired stream bootstrap of
    :func:`~memgym.tasks.amemops.tables.paired_difference` (the same streams under both controls
    are paired; each control's seeds are resampled independently, which is conservative because the
    same trained models answer both).
    """
    if n_resamples <= 0:
        raise ValueError("recording contrasts need bootstrap_resamples > 0")
    rng = np.random.default_rng(0)
    checkpoints = sorted({r["checkpoint"] for r in rows}, key=str)
    header = (
        "| model | checkpoint | contrast | attribute | " + " | ".join(q.replace("_", "-") for q in QUERY_TYPES) + " |"
    )
    lines = [
        "# Paired differences between recording controls (pp, A - B), 95% bootstrap CI",
        "",
        "Streams paired (the same streams under both controls), seeds resampled per control.",
        "",
        header,
        "| --- | ---: | --- | --- |" + " ---: |" * len(QUERY_TYPES),
    ]
    plotted: dict[str, list[Interval | None]] = {}
    for model in models:
        for checkpoint in checkpoints:
            for a, b in contrasts:
                for attribute in ("all", "gain", "pan"):
                    chosen = [
                        {**r, "model": r["recordings"]}
                        for r in rows
                        if r["model"] == model
                        and r["checkpoint"] == checkpoint
                        and r["recordings"] in (a, b)
                        and attribute in ("all", r["attribute"])
                    ]
                    cells = [paired_difference(chosen, a, b, q, rng=rng, n_resamples=n_resamples) for q in QUERY_TYPES]
                    row = f"| {model} | {checkpoint} | {a} - {b} | {attribute} | "
                    _add_row(lines, plotted, cells, row, f"{model} @ {checkpoint}: {a} - {b}", attribute)
    return _write_differences(lines, plotted, folder, "recording_contrasts")


def _add_row(
    lines: list[str],
    plotted: dict[str, list[Interval | None]],
    cells: list[Interval | None],
    row: str,
    label: str,
    attribute: str,
) -> None:
    """Append the table row ``row`` + ``cells`` (one per query type) unless every cell is empty;
    the ``"all"`` attribute's cells are also the plotted series ``label``."""
    if not any(cells):
        return
    if attribute == "all":
        plotted[label] = cells
    lines.append(row + " | ".join("-" if c is None else c.format(1) for c in cells) + " |")


def _write_differences(lines: list[str], plotted: dict[str, list[Interval | None]], folder: Path, stem: str) -> str:
    """Write ``<stem>.md`` (``lines``) and, if anything was plotted, ``<stem>.png``; returns the markdown."""
    text = "\n".join(lines) + "\n"
    (folder / f"{stem}.md").write_text(text, encoding="utf-8")
    if plotted:
        _plot_differences(plotted, [q.replace("_", "-") for q in QUERY_TYPES], folder / f"{stem}.png")
    return text


def _plot_differences(series: dict[str, list[Interval | None]], labels: Sequence[str], path: Path) -> Path:
    """Differences (pp) with 95% interval bars per query type, one series per label (``a:b``
    shown as ``a - b``); a query type no series has a value for is left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kept = [i for i in range(len(labels)) if any(found[i] is not None for found in series.values())]
    styles = system_styles(list(series))
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(kept) + 1.5), 4.0))
    width = 0.8 / max(len(series), 1)
    for k, (label, found) in enumerate(series.items()):
        points = [(x, found[i]) for x, i in enumerate(kept) if found[i] is not None]
        xs = np.array([x + (k - (len(series) - 1) / 2) * width for x, _ in points])
        est = np.array([v.estimate for _, v in points])
        err = np.array([[v.estimate - v.low for _, v in points], [v.high - v.estimate for _, v in points]])
        style = styles[label]
        ax.errorbar(
            xs, est, yerr=err, fmt=style["marker"], color=style["color"], capsize=3, label=label.replace(":", " - ")
        )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xticks(np.arange(len(kept)), [labels[i] for i in kept])
    ax.set_ylabel("difference (pp)")
    fig.tight_layout()
    legend_outside(fig, ax, fontsize=7)
    return save_figure(fig, path, dpi=120, tight=True)


def _familiarity_cells(
    chosen: list[dict[str, Any]], train_sets: list[str], reference: str, baseline: str, query_type: str
) -> dict[tuple[str, bool], tuple[np.ndarray, np.ndarray]]:
    """``(training set, seen)`` -> the reference's and the baseline's ``(seeds, streams)`` score
    arrays on the streams both were evaluated on.

    Raises:
        ValueError: a training set lacks seen or unseen rows of either model.
    """
    cells: dict[tuple[str, bool], tuple[np.ndarray, np.ndarray]] = {}
    for train_set in train_sets:
        for seen in (True, False):
            mine = [r for r in chosen if r["train_set"] == train_set and r["seen"] == seen]
            ref = [r for r in mine if r["core"] == reference]
            base = [r for r in mine if r["core"] == baseline]
            streams = sorted({r["stream"] for r in ref} & {r["stream"] for r in base})
            if not streams:
                label = "seen" if seen else "unseen"
                raise ValueError(f"training set {train_set}: no {label} {query_type} queries of both models")
            keep = set(streams)
            cells[train_set, seen] = (
                _stream_scores([r for r in ref if r["stream"] in keep], streams),
                _stream_scores([r for r in base if r["stream"] in keep], streams),
            )
    return cells


def familiarity_interaction(
    rows: Sequence[dict[str, Any]],
    reference: str,
    baseline: str,
    *,
    query_type: str = "post_update",
    rng: np.random.Generator,
    n_resamples: int = 10_000,
) -> dict[str, Interval]:
    """The training-familiarity interaction of Fig. 2b, in pp.

    Rows carry ``core`` (the model's memory core), ``train_set`` (what it was trained on),
    ``seen`` (the evaluated source's instruments were in that training set: other recordings of
    them) and ``stream_key`` (stream id unique across evaluation sets). For each training set
    ``T`` and familiarity, the advantage ``A = acc(reference) - acc(baseline)`` on ``query_type``
    (queries averaged per stream, streams then seeds weighted equally). Returned: the mean over
    training sets of ``A(seen)`` and of ``A(unseen)``, and ``I = A(seen) - A(unseen)``. Each
    bootstrap resample draws training sets with replacement, then within each the streams of each
    familiarity (shared by both models) and each model's seeds independently.

    Raises:
        ValueError: a training set lacks seen or unseen rows of either model.
    """
    chosen = [
        {**r, "stream": r["stream_key"]}
        for r in rows
        if r["query_type"] == query_type and r["core"] in (reference, baseline)
    ]
    train_sets = sorted({r["train_set"] for r in chosen})
    if not train_sets:
        raise ValueError(f"no {query_type} queries of {reference} or {baseline}")
    cells = _familiarity_cells(chosen, train_sets, reference, baseline, query_type)

    def advantages(sets: Sequence[str], resample: bool) -> tuple[float, float]:
        out = []
        for seen in (True, False):
            values = []
            for train_set in sets:
                a, b = cells[train_set, seen]
                if resample:
                    columns = rng.integers(0, a.shape[1], a.shape[1])
                    a = a[rng.integers(0, a.shape[0], a.shape[0])][:, columns]
                    b = b[rng.integers(0, b.shape[0], b.shape[0])][:, columns]
                values.append(100.0 * (a.mean() - b.mean()))
            out.append(float(np.mean(values)))
        return out[0], out[1]

    seen, unseen = advantages(train_sets, resample=False)
    stats = np.empty((n_resamples, 3))
    for k in range(n_resamples):
        drawn = [train_sets[i] for i in rng.integers(0, len(train_sets), len(train_sets))]
        s, u = advantages(drawn, resample=True)
        stats[k] = (s, u, s - u)
    return {
        "seen": percentile_interval(stats[:, 0], seen),
        "unseen": percentile_interval(stats[:, 1], unseen),
        "interaction": percentile_interval(stats[:, 2], seen - unseen),
    }


def familiarity_report(
    rows: Sequence[dict[str, Any]], reference: str, baseline: str, folder: Path, *, n_resamples: int = 10_000
) -> str:
    """Write ``familiarity.md`` and ``familiarity.png`` (Fig. 2b): per checkpoint and attribute
    (all, gain, pan), :func:`familiarity_interaction` on post-update queries; returns the markdown."""
    lines = [
        f"# Training familiarity (Fig. 2b): {reference} - {baseline} on post-update queries (pp), 95% CI",
        "",
        "Seen: evaluated on other recordings of the training instruments; unseen: on another instrument set. "
        "Bootstrap over training sets, streams (paired across models) and seeds.",
        "",
        "| checkpoint | attribute | advantage seen | advantage unseen | interaction I |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    plotted: dict[str, list[Interval | None]] = {}
    for checkpoint in sorted({r["checkpoint"] for r in rows}, key=str):
        for attribute in ("all", "gain", "pan"):
            chosen = [r for r in rows if r["checkpoint"] == checkpoint and attribute in ("all", r["attribute"])]
            try:
                result = familiarity_interaction(
                    chosen, reference, baseline, rng=np.random.default_rng(0), n_resamples=n_resamples
                )
            except ValueError as exc:  # e.g. no post-update pan query in some training set's streams
                lines.append(f"| {checkpoint} | {attribute} | - | - | - ({exc}) |")
                continue
            cells = [result[k] for k in ("seen", "unseen", "interaction")]
            lines.append(f"| {checkpoint} | {attribute} | " + " | ".join(c.format(1) for c in cells) + " |")
            if attribute == "all":
                plotted[f"@ {checkpoint}"] = cells
    text = "\n".join(lines) + "\n"
    (folder / "familiarity.md").write_text(text, encoding="utf-8")
    if plotted:
        _plot_differences(plotted, ["advantage seen", "advantage unseen", "interaction I"], folder / "familiarity.png")
    return text


def parse_contrast(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``"gdn2:attention+attention_rope"`` -> ``(("gdn2",), ("attention", "attention_rope"))``: the
    models averaged on each side of ``A:B`` (A minus B).

    Raises:
        ValueError: not two non-empty sides, or a model on both sides.
    """
    sides = text.split(":")
    parsed = tuple(tuple(side.split("+")) for side in sides)
    if len(parsed) != 2 or any(not m for side in parsed for m in side):
        raise ValueError(f"'{text}' must be 'A:B', each side one or more models joined by '+'")
    if set(parsed[0]) & set(parsed[1]):
        raise ValueError(f"'{text}' names a model on both sides")
    return parsed[0], parsed[1]


def contrast_report(
    rows: Sequence[dict[str, Any]], contrasts: Sequence[str], folder: Path, *, n_resamples: int = 10_000
) -> str:
    """Write ``contrasts.md`` and ``contrasts.png`` (e.g. the width control of Fig. 4a); returns the markdown.

    Each contrast ``A:B`` (:func:`parse_contrast`) is the mean accuracy of the models of ``A`` minus
    that of ``B``, in pp per query type, over all queries and for gain and pan queries alone, per
    checkpoint, with the paired bootstrap of :func:`~memgym.tasks.amemops.tables.averaged_contrast`
    (streams drawn once for all models, seeds independently per model). ``gdn2:attention+attention_rope``
    is GDN2's advantage averaged over RoPE settings.
    """
    if n_resamples <= 0:
        raise ValueError("contrasts report bootstrap intervals: n_resamples must be > 0")
    rng = np.random.default_rng(0)
    checkpoints = sorted({r["checkpoint"] for r in rows}, key=str)
    lines = [
        "# Model contrasts (pp, mean of A - mean of B), 95% bootstrap CI",
        "",
        "Streams paired across all models of a contrast, seeds resampled per model.",
        "",
        "| contrast | checkpoint | attribute | " + " | ".join(q.replace("_", "-") for q in QUERY_TYPES) + " |",
        "| --- | ---: | --- |" + " ---: |" * len(QUERY_TYPES),
    ]
    plotted: dict[str, list[Interval | None]] = {}
    for contrast in contrasts:
        plus, minus = parse_contrast(contrast)
        shown_name = f"{' + '.join(plus)} - {' + '.join(minus)}" if len(plus) + len(minus) > 2 else contrast
        for checkpoint in checkpoints:
            for attribute in ("all", "gain", "pan"):
                chosen = [r for r in rows if r["checkpoint"] == checkpoint and attribute in ("all", r["attribute"])]
                cells = [
                    averaged_contrast(chosen, plus, minus, q, rng=rng, n_resamples=n_resamples) for q in QUERY_TYPES
                ]
                row = f"| {shown_name} | {checkpoint} | {attribute} | "
                _add_row(lines, plotted, cells, row, f"{shown_name} @ {checkpoint}", attribute)
    return _write_differences(lines, plotted, folder, "contrasts")
