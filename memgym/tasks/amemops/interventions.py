"""AMemOps state interventions (paper: "State interventions", section 3.4, Fig. 4b,c): which
queries an edit can be scored on, and the loss table and plot of the scored edits.

**Edit plans** (:func:`edit_plans`, pure functions of a stream record). A *source* is an identity
with non-query events (targets, interferers, distractors); its *binding* is its latest such event.
Query events only cue a source (fixed -3 dB, centre pan) and never establish or refresh a binding.
For a target source ``T`` the edit happens right after ``T``'s final occurrence: the model has
seen frames ``0 .. e-1`` where ``e`` is that event's end frame (exclusive), and no later frame.
A query (task item) about source ``X`` is *eligible* when

* it starts at or after ``e`` (a query whose window overlaps the edit, or that ended before it,
  is not), and
* ``X`` has at least one event before the query's read frame, and every such event ends at or
  before ``e``: the binding was established before the edit and not refreshed between the edit
  and the query. Absent-source queries never qualify.

Eligible queries about ``T`` are *target* queries, the rest *other-source* queries. Target
sources per stream are chosen deterministically: **every source that has at least one eligible
target query** and a final occurrence of at least ``rank`` frames (the key subspace needs that
many key frames), in order of edit frame. The most-overlapping control draws from the other
sources' final occurrences before the edit (latest event ending at or before ``e``, at least
``rank`` frames long).

**Losses** (:func:`loss_table`). Result rows have one query under one edit::

    {"model", "checkpoint", "seed", "stream", "target", "edit", "edit_type", "query", "role", "correct"}

with ``edit`` one of ``none``, ``target``, ``random0..``, ``overlap`` (``edit_type`` drops the
draw number) and ``role`` ``target`` or ``other``. A query's loss under an edit type is its
no-edit correctness minus its mean correctness over that type's edits (the random draws
averaged), in percentage points. As in the AMemOps statistics, losses are averaged within
streams (over every target of the stream), then non-empty streams and seeds are weighted equally;
the 95% bootstrap intervals draw streams once for all models and edit types (paired) and seeds
independently per model.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.figures import save_figure
from memgym.core.statistics import Interval, percentile_interval
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent

EDIT_TYPES: tuple[str, ...] = ("target", "random", "overlap")
"""Edits scored against the unedited run, in table order."""

ROLES: tuple[str, ...] = ("target", "other")


@dataclasses.dataclass(frozen=True)
class Occurrence:
    """A source's event used for a key subspace: frames ``onset .. end-1``."""

    identity: str
    onset: int
    end: int


@dataclasses.dataclass(frozen=True)
class EditPlan:
    """One target's edit in one stream.

    Attributes:
        target: the target source's final occurrence; the edit happens at frame ``target.end``
            (after frames ``0 .. target.end - 1``).
        target_queries: item ids of eligible queries about the target.
        other_queries: item ids of eligible queries about other sources.
        others: other sources' final occurrences before the edit (most-overlapping control pool).
    """

    target: Occurrence
    target_queries: tuple[str, ...]
    other_queries: tuple[str, ...]
    others: tuple[Occurrence, ...]

    @property
    def edit_frame(self) -> int:
        return self.target.end

    def roles(self) -> dict[str, str]:
        """Eligible query id -> ``"target"`` or ``"other"``."""
        return {q: "target" for q in self.target_queries} | {q: "other" for q in self.other_queries}


def source_events(stream: AMemOpsStream) -> dict[str, list[StreamEvent]]:
    """Non-query events of each source, in onset order."""
    events: dict[str, list[StreamEvent]] = defaultdict(list)
    for event in sorted(stream.events, key=lambda e: e.onset_frame):
        if event.role != "query":
            events[event.identity].append(event)
    return dict(events)


def query_is_eligible(item_annotations: dict[str, Any], events: Sequence[StreamEvent], edit_frame: int) -> bool:
    """Whether a query (``identity``, ``onset_frame``, ``end_frame`` annotations; ``end_frame`` is its
    last, read frame) can be scored after an edit at ``edit_frame``, given its source's events."""
    onset, read = int(item_annotations["onset_frame"]), int(item_annotations["end_frame"])
    if onset < edit_frame:
        return False
    before = [e for e in events if e.onset_frame <= read]
    return bool(before) and all(e.end_frame <= edit_frame for e in before)


def plan_edit(stream: AMemOpsStream, target: str, *, rank: int = 3) -> EditPlan | None:
    """The edit of ``target`` in ``stream`` (module docstring), or None when it has no eligible
    target query or its final occurrence is shorter than ``rank`` frames.

    Raises:
        ValueError: ``target`` has no non-query event in the stream.
    """
    events = source_events(stream)
    if target not in events:
        raise ValueError(f"stream {stream.episode_id}: source '{target}' has no event to edit")
    final = events[target][-1]
    if final.frames < rank:
        return None
    edit = final.end_frame
    roles: dict[str, list[str]] = {"target": [], "other": []}
    for item in stream.items:
        identity = item.annotations["identity"]
        if query_is_eligible(item.annotations, events.get(identity, []), edit):
            roles["target" if identity == target else "other"].append(item.item_id)
    if not roles["target"]:
        return None
    others = []
    for identity, own in events.items():
        finished = [e for e in own if e.end_frame <= edit]
        if identity != target and finished and finished[-1].frames >= rank:
            others.append(Occurrence(identity, finished[-1].onset_frame, finished[-1].end_frame))
    return EditPlan(
        target=Occurrence(target, final.onset_frame, final.end_frame),
        target_queries=tuple(roles["target"]),
        other_queries=tuple(roles["other"]),
        others=tuple(sorted(others, key=lambda o: (o.end, o.identity))),
    )


def edit_plans(stream: AMemOpsStream, *, rank: int = 3) -> list[EditPlan]:
    """Every target's edit plan in ``stream`` (sources with an eligible target query), by edit frame."""
    plans = [plan_edit(stream, source, rank=rank) for source in source_events(stream)]
    return sorted((p for p in plans if p is not None), key=lambda p: (p.edit_frame, p.target.identity))


# ----- losses ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LossCell:
    """Loss (pp, no edit minus edit) of one model × checkpoint × edit type on one query role.

    Attributes:
        loss: the loss with its bootstrap interval (pp).
        baseline: accuracy (%) of the same queries without an edit.
        streams: non-empty streams.
        queries: eligible (stream, target, query) units.
    """

    loss: Interval
    baseline: float
    streams: int
    queries: int


def _query_losses(rows: Sequence[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """Per (model, checkpoint, edit type, role, seed, stream, target, query): the loss (0-1)."""
    correct: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        unit = (r["model"], r["checkpoint"], r["role"], r["seed"], str(r["stream"]), r["target"], r["query"])
        correct[unit][r["edit_type"]].append(float(r["correct"]))
    losses = {}
    for unit, by_type in correct.items():
        if "none" not in by_type:
            raise ValueError(f"no unedited result for {unit}; every edited query needs its 'none' row")
        base = by_type["none"][0]
        for edit_type in EDIT_TYPES:
            if edit_type in by_type:
                model, checkpoint, role, *rest = unit
                losses[(model, checkpoint, edit_type, role, *rest)] = {
                    "loss": base - float(np.mean(by_type[edit_type])),
                    "base": base,
                }
    return losses


def _stream_matrix(
    losses: dict[tuple, dict[str, Any]], key: tuple, seeds: Sequence[Any], streams: Sequence[str], field: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(seeds, streams)`` per-stream means of ``field`` and the ``(streams,)`` non-empty mask."""
    totals = np.zeros((len(seeds), len(streams)))
    counts = np.zeros((len(seeds), len(streams)))
    seed_index, stream_index = {s: i for i, s in enumerate(seeds)}, {s: j for j, s in enumerate(streams)}
    for unit, value in losses.items():
        if unit[:4] == key:
            i, j = seed_index[unit[4]], stream_index[unit[5]]
            totals[i, j] += value[field]
            counts[i, j] += 1
    present = counts.sum(axis=0) > 0
    if np.any(counts[:, present] == 0):
        raise ValueError(f"{key}: every seed must answer the same streams")
    return np.divide(totals, counts, out=np.zeros_like(totals), where=counts > 0), present


def loss_table(
    rows: Sequence[dict[str, Any]], *, rng: np.random.Generator, n_resamples: int = 10_000, level: float = 0.95
) -> dict[tuple[str, Any, str, str], LossCell]:
    """``(model, checkpoint, edit type, role) -> LossCell`` from per-query result rows."""
    losses = _query_losses(rows)
    streams = sorted({str(r["stream"]) for r in rows})
    keys = sorted({u[:4] for u in losses}, key=lambda k: tuple(str(x) for x in k))
    seeds = {m: sorted({r["seed"] for r in rows if r["model"] == m}, key=str) for m in {r["model"] for r in rows}}
    stream_draws = rng.integers(0, len(streams), size=(n_resamples, len(streams)))
    seed_draws = {m: rng.integers(0, len(s), size=(n_resamples, len(s))) for m, s in sorted(seeds.items())}
    table = {}
    for key in keys:
        model = key[0]
        values, present = _stream_matrix(losses, key, seeds[model], streams, "loss")
        base, _ = _stream_matrix(losses, key, seeds[model], streams, "base")
        weight = present.astype(float)
        estimate = 100.0 * values[:, present].mean()
        drawn = weight[stream_draws]  # (R, n_streams)
        per_seed = (values[:, stream_draws] * drawn[None]).sum(axis=2)  # (seeds, R)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_seed = per_seed / drawn.sum(axis=1)[None]
        stats = 100.0 * np.take_along_axis(per_seed.T, seed_draws[model], axis=1).mean(axis=1)
        stats = stats[np.isfinite(stats)]
        table[key] = LossCell(
            loss=percentile_interval(stats, estimate, level),
            baseline=100.0 * base[:, present].mean(),
            streams=int(present.sum()),
            queries=len({u[5:] for u in losses if u[:4] == key}),
        )
    return table


def loss_markdown(table: dict[tuple[str, Any, str, str], LossCell], *, model_order: Sequence[str] = ()) -> str:
    """Markdown: one row per model × checkpoint × edit type, target and other-source loss (pp)."""
    order = {m: i for i, m in enumerate(model_order)}
    groups = sorted(
        {(k[0], k[1], k[2]) for k in table},
        key=lambda g: (order.get(g[0], len(order)), g[0], str(g[1]), EDIT_TYPES.index(g[2])),
    )
    lines = [
        "**State interventions: accuracy loss (pp, no edit minus edit), 95% bootstrap CI "
        "(streams paired, seeds independent)**",
        "",
        "| model | checkpoint | edit | target loss | other-source loss | target acc. no edit | "
        "other acc. no edit | target queries | other queries |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for model, checkpoint, edit_type in groups:
        cells = [table.get((model, checkpoint, edit_type, role)) for role in ROLES]
        loss = ["-" if c is None else c.loss.format(1) for c in cells]
        base = ["-" if c is None else f"{c.baseline:.1f}" for c in cells]
        count = ["0" if c is None else f"{c.queries} ({c.streams} streams)" for c in cells]
        lines.append(f"| {model} | {checkpoint} | {edit_type} | " + " | ".join([*loss, *base, *count]) + " |")
    return "\n".join(lines) + "\n"


def plot_losses(table: dict[tuple[str, Any, str, str], LossCell], path: Path) -> Path:
    """Fig. 4b,c-style scatter: x other-source loss, y target loss (pp), one point per model ×
    checkpoint × edit type with its 95% intervals as error bars; writes ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    markers = {"target": "o", "random": "s", "overlap": "^"}
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    runs = sorted({(k[0], k[1]) for k in table}, key=lambda r: (r[0], str(r[1])))
    colours = plt.get_cmap("tab10")
    for i, (model, checkpoint) in enumerate(runs):
        for edit_type in EDIT_TYPES:
            target, other = (
                table.get((model, checkpoint, edit_type, "target")),
                table.get((model, checkpoint, edit_type, "other")),
            )
            if target is None or other is None:
                continue
            x, y = other.loss, target.loss
            ax.errorbar(
                x.estimate,
                y.estimate,
                xerr=[[x.estimate - x.low], [x.high - x.estimate]],
                yerr=[[y.estimate - y.low], [y.high - y.estimate]],
                marker=markers[edit_type],
                color=colours(i % 10),
                capsize=2,
                linewidth=0.8,
                label=f"{model} @ {checkpoint}" if edit_type == "target" else None,
            )
    for edit_type, marker in markers.items():
        ax.plot([], [], marker=marker, color="black", linestyle="none", label=f"{edit_type} edit")
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.axvline(0, color="grey", linewidth=0.5)
    ax.set_xlabel("other-source accuracy loss (pp)")
    ax.set_ylabel("target accuracy loss (pp)")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=120)
