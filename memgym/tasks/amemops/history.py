"""AMemOps matched event histories (paper sections 2 and 3.3): Fig. 3 accuracies, update gaps and
the four primary history contrasts, from the per-query rows of ``memgym eval amemops`` on a
``kind=history`` stream set.

A history row is a per-query result row (:mod:`memgym.tasks.amemops.tables`) that also carries
its template and condition::

    {"model": "gdn2", "checkpoint": 24000, "seed": 0, "stream": "history-017-updated-120s-low-...",
     "correct": 1, "template": 17, "operation": "updated", "delay_s": 120.0, "load": "low",
     "earlier": "target", "recordings": "original"}

**Cells.** A cell is one ``(model, checkpoint, recordings, earlier, operation, delay_s, load)``.
As in the paper's Statistics paragraph, within each seed a cell's queries are averaged per
stream (one stream per template and condition), streams weigh equally, then seeds weigh
equally; scores are in percent.

**Bootstrap.** Each resample draws templates with replacement once, shared by every model and
condition (streams paired across models and conditions), and each model's seeds with
replacement, independently per model (shared by that model's checkpoints and conditions). Every
reported number is a linear combination of cell scores (:class:`Contrast`), so one resample of
all cells gives all of them.

**Reported** (differences in percentage points, 95% percentile intervals):

* accuracy of every cell (Fig. 3: operation × delay × load per model);
* update gaps ``updated − no_update`` and ``retained − no_update`` per model, checkpoint,
  recordings, delay and load (earlier target present);
* with earlier-event controls in the set, ``acc(operation, earlier target) − acc(control)`` for
  the ``omitted`` and ``distractor`` controls (section 3.3's conflicting / consistent history);
* the primary history contrasts (original recordings, earlier target present): with
  ``A(d, l) = gap_ref(d, l) − gap_base(d, l)`` the reference model's update-gap advantage over a
  baseline, the delay effect ``mean_l [A(long, l) − A(short, l)]`` and the load effect
  ``mean_d [A(d, high) − A(d, low)]``. For reference ``gdn2`` against ``no_erase`` and
  ``attention`` (no RoPE) these are the paper's four pre-specified interactions; they also get
  simultaneous intervals (``estimate ± h``, ``h`` the 95th percentile of the maximum absolute
  centred bootstrap error over the four).
* the share of update errors that gave the superseded (previous) value, seeds pooled, per model,
  checkpoint and condition (rows carry ``previous_value``; section 3.3's "previous values account
  for 78% of ... update errors").
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from memgym.core.errors import RecordError
from memgym.core.statistics import Interval, percentile_interval, simultaneous_intervals

OPERATIONS: tuple[str, ...] = ("no_update", "updated", "retained")
LOADS: tuple[str, ...] = ("low", "high")
EARLIER: tuple[str, ...] = ("target", "omitted", "distractor")
PRIMARY_MODELS: tuple[str, ...] = ("gdn2", "no_erase", "attention")
"""Reference model, then the baselines of the paper's primary history contrasts."""
ROW_FIELDS: tuple[str, ...] = ("template", "operation", "delay_s", "load", "earlier", "recordings")
LEVEL = 0.95


class Cell(NamedTuple):
    """One model checkpoint under one matched-history condition."""

    model: str
    checkpoint: Any
    recordings: str
    earlier: str
    operation: str
    delay_s: float
    load: str


@dataclasses.dataclass(frozen=True)
class Contrast:
    """``Σ weight · cell score`` (percent or pp) and the labels it is reported under."""

    labels: dict[str, Any]
    weights: dict[Cell, float]


@dataclasses.dataclass(frozen=True)
class ContrastResult:
    """A contrast's estimate with its marginal and (for the primary family) simultaneous interval;
    intervals are None without bootstrap resamples."""

    labels: dict[str, Any]
    estimate: float
    interval: Interval | None
    simultaneous: Interval | None = None


@dataclasses.dataclass(frozen=True)
class CellScores:
    """Per-stream scores of every cell on the templates common to all cells.

    Attributes:
        cells: every cell of the rows, sorted.
        templates: the ``T`` template ids (score columns).
        seeds: per model, its seed ids (score rows).
        scores: per cell, ``(seeds of its model, T)`` accuracy (0-1) per seed and template.
    """

    cells: tuple[Cell, ...]
    templates: tuple[Any, ...]
    seeds: dict[str, tuple[Any, ...]]
    scores: dict[Cell, np.ndarray]


def is_history(rows: Iterable[dict[str, Any]]) -> bool:
    """Whether the rows come from a matched-history stream set (their queries carry ``earlier``)."""
    return any(r.get("earlier") is not None for r in rows)


def _cell(row: dict[str, Any]) -> Cell:
    missing = [k for k in ROW_FIELDS if row.get(k) is None]
    if missing:
        raise RecordError(
            f"history result row (model {row.get('model')}, stream {row.get('stream')}) lacks {missing}; "
            "these rows predate the history analysis: evaluate into a new name="
        )
    return Cell(
        str(row["model"]),
        row["checkpoint"],
        str(row["recordings"]),
        str(row["earlier"]),
        str(row["operation"]),
        float(row["delay_s"]),
        str(row["load"]),
    )


def rank(value: str, order: tuple[str, ...]) -> int:
    """Position of ``value`` in ``order`` (unknown values last), for sorting conditions."""
    return order.index(value) if value in order else len(order)


def _sort_key(cell: Cell) -> tuple:
    earlier, load, operation = rank(cell.earlier, EARLIER), rank(cell.load, LOADS), rank(cell.operation, OPERATIONS)
    return (cell.model, str(cell.checkpoint), cell.recordings, earlier, cell.delay_s, load, operation)


def cell_scores(rows: Iterable[dict[str, Any]]) -> CellScores:
    """Group history rows into cells: ``(seeds, templates)`` per-stream accuracy per cell.

    Templates without a query in some (cell, seed) are dropped (a complete matched-history
    evaluation has none); every seed of a model must have answered every cell of that model.

    Raises:
        RecordError: a row lacks its condition fields.
        ValueError: a seed is missing from a cell, or no template is common to all cells.
    """
    totals: dict[Cell, dict[tuple[Any, Any], list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    model_seeds: dict[str, set] = defaultdict(set)
    for r in rows:
        cell = _cell(r)
        entry = totals[cell][(r["seed"], r["template"])]
        entry[0] += float(r["correct"])
        entry[1] += 1.0
        model_seeds[cell.model].add(r["seed"])
    if not totals:
        raise ValueError("no matched-history rows to analyse")
    seeds = {m: tuple(sorted(s, key=str)) for m, s in model_seeds.items()}
    common: set | None = None
    for cell, entries in totals.items():
        for seed in seeds[cell.model]:
            have = {t for (s, t) in entries if s == seed}
            if not have:
                raise ValueError(f"seed {seed} of {cell.model} has no query in {cell}")
            common = have if common is None else common & have
    templates = tuple(sorted(common or (), key=str))
    if not templates:
        raise ValueError("no template has a query in every matched-history cell: cannot pair streams")
    scores = {}
    for cell, entries in totals.items():
        matrix = np.array([[entries[(s, t)][0] / entries[(s, t)][1] for t in templates] for s in seeds[cell.model]])
        scores[cell] = matrix
    return CellScores(tuple(sorted(totals, key=_sort_key)), templates, seeds, scores)


def resampled_cell_means(
    scores: CellScores, template_counts: np.ndarray, seed_counts: dict[str, np.ndarray]
) -> np.ndarray:
    """``(R, C)`` cell scores (percent) under R resamples given as multiplicities.

    Args:
        template_counts: ``(R, T)`` how often each template is drawn (rows sum to ``T``).
        seed_counts: per model ``(R, S)`` how often each of its seeds is drawn (rows sum to ``S``).
    """
    n_templates = len(scores.templates)
    out = np.empty((template_counts.shape[0], len(scores.cells)))
    for c, cell in enumerate(scores.cells):
        per_seed = scores.scores[cell] @ template_counts.T / n_templates  # (S, R)
        weights = seed_counts[cell.model]  # (R, S)
        out[:, c] = 100.0 * (weights * per_seed.T).sum(axis=1) / weights.shape[1]
    return out


def bootstrap_cells(scores: CellScores, *, rng: np.random.Generator, n_resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """``(estimates (C,), replicates (R, C))`` of every cell score, percent (module docstring)."""
    n_templates = len(scores.templates)
    ones = {m: np.ones((1, len(s))) for m, s in scores.seeds.items()}
    estimates = resampled_cell_means(scores, np.ones((1, n_templates)), ones)[0]
    if n_resamples <= 0:
        return estimates, np.empty((0, len(scores.cells)))
    template_counts = rng.multinomial(n_templates, np.full(n_templates, 1.0 / n_templates), size=n_resamples)
    seed_counts = {
        m: rng.multinomial(len(s), np.full(len(s), 1.0 / len(s)), size=n_resamples).astype(np.float64)
        for m, s in sorted(scores.seeds.items())
    }
    return estimates, resampled_cell_means(scores, template_counts.astype(np.float64), seed_counts)


def evaluate_contrasts(
    contrasts: Sequence[Contrast],
    cells: Sequence[Cell],
    estimates: np.ndarray,
    replicates: np.ndarray,
    *,
    simultaneous: bool = False,
    level: float = LEVEL,
) -> list[ContrastResult]:
    """Estimates and ``level`` percentile intervals of ``contrasts`` from :func:`bootstrap_cells`
    output; with ``simultaneous`` also the simultaneous intervals over all of them."""
    if not contrasts:
        return []
    index = {cell: i for i, cell in enumerate(cells)}
    weights = np.zeros((len(contrasts), len(cells)))
    for k, contrast in enumerate(contrasts):
        for cell, w in contrast.weights.items():
            weights[k, index[cell]] += w
    values = weights @ estimates
    if replicates.shape[0] == 0:
        return [ContrastResult(c.labels, float(v), None) for c, v in zip(contrasts, values)]
    stats = replicates @ weights.T  # (R, K)
    joint = simultaneous_intervals(stats, values, level) if simultaneous else [None] * len(contrasts)
    return [
        ContrastResult(c.labels, float(values[k]), percentile_interval(stats[:, k], values[k], level), joint[k])
        for k, c in enumerate(contrasts)
    ]


def _labels(table: str, cell: Cell, **extra: Any) -> dict[str, Any]:
    return {"table": table, **cell._asdict(), **extra}


def accuracy_contrasts(cells: Sequence[Cell]) -> list[Contrast]:
    """Each cell's accuracy (Fig. 3)."""
    return [Contrast(_labels("accuracy", cell), {cell: 1.0}) for cell in cells]


def gap_contrasts(cells: Sequence[Cell]) -> list[Contrast]:
    """``updated − no_update`` and ``retained − no_update`` for every cell with the earlier target
    present and a matching no-update cell."""
    present = set(cells)
    contrasts = []
    for cell in cells:
        base = cell._replace(operation="no_update")
        if cell.earlier == "target" and cell.operation in ("updated", "retained") and base in present:
            contrasts.append(Contrast(_labels("update_gap", cell), {cell: 1.0, base: -1.0}))
    return contrasts


def earlier_contrasts(cells: Sequence[Cell]) -> list[Contrast]:
    """Section 3.3's history baselines: ``acc(operation, earlier target) − acc(control)`` for each
    earlier-event control (``omitted``, ``distractor``) in the rows, per operation and condition
    (conflicting history: ``updated``; consistent history: ``no_update``). Labels carry the
    control as ``earlier``."""
    present = set(cells)
    contrasts = []
    for cell, control in itertools.product(cells, EARLIER[1:]):
        base = cell._replace(earlier=control)
        if cell.earlier == "target" and base in present:
            contrasts.append(Contrast(_labels("earlier_control", base), {cell: 1.0, base: -1.0}))
    return contrasts


def _advantage(
    reference: str, baseline: str, checkpoint: Any, delay: float, load: str, sign: float
) -> dict[Cell, float]:
    """Weights of ``sign · (gap_reference − gap_baseline)`` at one delay and load (original
    recordings, earlier target), with ``gap = updated − no_update``."""

    def cell(model: str, operation: str) -> Cell:
        return Cell(model, checkpoint, "original", "target", operation, delay, load)

    return {
        cell(reference, "updated"): sign,
        cell(reference, "no_update"): -sign,
        cell(baseline, "updated"): -sign,
        cell(baseline, "no_update"): sign,
    }


def primary_contrasts(
    cells: Sequence[Cell], reference: str, baselines: Sequence[str]
) -> tuple[list[Contrast], list[str]]:
    """Delay and load effects on ``reference``'s update-gap advantage over each baseline (original
    recordings, earlier target), per checkpoint of ``reference``; plus notes on what was skipped."""
    present = set(cells)
    original = [c for c in cells if c.recordings == "original" and c.earlier == "target"]
    checkpoints = sorted({c.checkpoint for c in original if c.model == reference}, key=str)
    if not checkpoints:
        return [], [f"primary contrasts skipped: no {reference} rows on original recordings with the earlier target"]
    contrasts: list[Contrast] = []
    notes: list[str] = []
    for checkpoint, baseline in itertools.product(checkpoints, baselines):
        found, said = _pair_contrasts(original, present, reference, baseline, checkpoint)
        contrasts += found
        notes += said
    return contrasts, notes


def _pair_contrasts(
    original: Sequence[Cell], present: set[Cell], reference: str, baseline: str, checkpoint: Any
) -> tuple[list[Contrast], list[str]]:
    """The delay and load effects on ``reference``'s advantage over ``baseline`` at one checkpoint,
    and notes on the effects skipped (all of them when a cell they need has no rows)."""
    mine = [c for c in original if c.model == reference and c.checkpoint == checkpoint]
    delays = sorted({c.delay_s for c in mine})
    loads = [load for load in LOADS if any(c.load == load for c in mine)]
    pair = f"{reference} vs {baseline} @ {checkpoint}"
    needed = [w for d in delays for load in loads for w in _advantage(reference, baseline, checkpoint, d, load, 1)]
    lacking = [c for c in needed if c not in present]
    if lacking:
        c = lacking[0]
        return [], [f"{pair} skipped: no rows for {c.model} {c.operation} at {c.delay_s:g} s, {c.load} load"]
    labels = {"table": "primary", "model": reference, "baseline": baseline, "checkpoint": checkpoint}
    contrasts: list[Contrast] = []
    notes: list[str] = []
    if len(delays) == 2:
        weights: dict[Cell, float] = {}
        for load, (delay, sign) in itertools.product(loads, zip(delays, (-1.0, 1.0))):
            weights.update(_advantage(reference, baseline, checkpoint, delay, load, sign / len(loads)))
        effect = f"delay {delays[1]:g} s - {delays[0]:g} s"
        contrasts.append(Contrast({**labels, "effect": effect}, weights))
    else:
        notes.append(f"{pair}: the delay effect needs two delays, got {[f'{d:g}' for d in delays]}")
    if loads == list(LOADS):
        weights = {}
        for delay, (load, sign) in itertools.product(delays, zip(LOADS, (-1.0, 1.0))):
            weights.update(_advantage(reference, baseline, checkpoint, delay, load, sign / len(delays)))
        contrasts.append(Contrast({**labels, "effect": "load high - low"}, weights))
    else:
        notes.append(f"{pair}: the load effect needs low and high load, got {loads}")
    return contrasts, notes


# ----- report ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PreviousValueShare:
    """Update errors of one model checkpoint under one condition (seeds pooled) and how many of
    them gave the superseded value."""

    cell: Cell
    errors: int
    previous: int

    @property
    def share(self) -> float:
        """Percent of the errors that gave the previous value (nan without errors)."""
        return 100.0 * self.previous / self.errors if self.errors else float("nan")


@dataclasses.dataclass(frozen=True)
class HistoryReport:
    """Everything :func:`history_report` computes (all results keep their :class:`Contrast` labels)."""

    accuracy: list[ContrastResult]
    gaps: list[ContrastResult]
    controls: list[ContrastResult]
    primary: list[ContrastResult]
    previous: list[PreviousValueShare]
    notes: list[str]
    templates: int
    seeds: dict[str, int]
    n_resamples: int


def previous_value_shares(rows: Iterable[dict[str, Any]]) -> list[PreviousValueShare]:
    """Per updated-query cell: wrong answers and those equal to the previous value (rows without
    ``previous_value``, from older runs, are left out)."""
    counts: dict[Cell, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r.get("operation") != "updated" or "previous_value" not in r:
            continue
        entry = counts[_cell(r)]
        wrong = not r["correct"]
        entry[0] += int(wrong)
        entry[1] += int(wrong and r["previous_value"])
    return [PreviousValueShare(cell, *counts[cell]) for cell in sorted(counts, key=_sort_key)]


def history_report(
    rows: Sequence[dict[str, Any]],
    *,
    rng: np.random.Generator,
    n_resamples: int = 10_000,
    primary_models: Sequence[str] = PRIMARY_MODELS,
) -> HistoryReport:
    """Fig. 3 accuracies, update gaps, earlier-event control differences and primary contrasts
    (``primary_models[0]`` against each of the others) of matched-history rows; simultaneous
    intervals over each checkpoint's primary contrasts."""
    scores = cell_scores(rows)
    estimates, replicates = bootstrap_cells(scores, rng=rng, n_resamples=n_resamples)
    cells = scores.cells

    def run(contrasts: Sequence[Contrast], simultaneous: bool = False) -> list[ContrastResult]:
        return evaluate_contrasts(contrasts, cells, estimates, replicates, simultaneous=simultaneous)

    notes: list[str] = []
    primary: list[ContrastResult] = []
    if len(primary_models) < 2:
        notes.append("primary contrasts skipped: history_contrasts needs a reference model and a baseline")
    else:
        contrasts, notes = primary_contrasts(cells, primary_models[0], primary_models[1:])
        for checkpoint in sorted({c.labels["checkpoint"] for c in contrasts}, key=str):
            primary += run([c for c in contrasts if c.labels["checkpoint"] == checkpoint], simultaneous=True)
    return HistoryReport(
        accuracy=run(accuracy_contrasts(cells)),
        gaps=run(gap_contrasts(cells)),
        controls=run(earlier_contrasts(cells)),
        primary=primary,
        previous=previous_value_shares(rows),
        notes=notes,
        templates=len(scores.templates),
        seeds={m: len(s) for m, s in scores.seeds.items()},
        n_resamples=max(0, n_resamples),
    )
