"""Effects in percentage points from tidy rows (:mod:`.runs`), each with a 95% bootstrap interval.

Every function returns an :class:`~.verdicts.Effect` or ``None`` when the rows cannot measure it
(a system or a group is missing). Random draws come from a generator seeded by the claim's label,
so the same runs always give the same intervals.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from memgym.core.statistics import bootstrap_difference
from memgym.pipelines.findings.verdicts import Effect

Row = dict[str, Any]
Select = Callable[[Row], bool]

N_RESAMPLES = 4000


def labelled_rng(label: str) -> np.random.Generator:
    """A generator seeded by ``label`` (stable across processes and platforms)."""
    return np.random.default_rng(zlib.crc32(label.encode("utf-8")))


def item_scores(rows: Sequence[Row], system: str, where: Select = lambda r: True) -> dict[Any, float]:
    """Item -> mean score (0-100) of ``system`` over its rows passing ``where`` (budgets averaged)."""
    sums: dict[Any, list[float]] = defaultdict(list)
    for row in rows:
        if row["system"] == system and where(row):
            sums[row["item"]].append(float(row["score"]))
    return {item: float(np.mean(values)) for item, values in sums.items()}


def paired_effect(
    rows: Sequence[Row], plus: str, minus: str, label: str, where: Select = lambda r: True
) -> Effect | None:
    """``plus - minus`` on the items both scored (paired bootstrap over items)."""
    a, b = item_scores(rows, plus, where), item_scores(rows, minus, where)
    items = sorted(set(a) & set(b), key=str)
    if not items:
        return None
    interval = bootstrap_difference(
        [a[i] for i in items], [b[i] for i in items], rng=labelled_rng(label), paired=True, n_resamples=N_RESAMPLES
    )
    return Effect(interval.estimate, interval.low, interval.high, len(items))


def group_effect(rows: Sequence[Row], system: str, plus: Select, minus: Select, label: str) -> Effect | None:
    """``mean(system on items in plus) - mean(system on items in minus)``: different items, so
    the two groups are resampled independently; ``n`` is the smaller group."""
    a, b = item_scores(rows, system, plus), item_scores(rows, system, minus)
    if not a or not b:
        return None
    interval = bootstrap_difference(
        list(a.values()), list(b.values()), rng=labelled_rng(label), paired=False, n_resamples=N_RESAMPLES
    )
    return Effect(interval.estimate, interval.low, interval.high, min(len(a), len(b)))


def gain_interaction(
    rows: Sequence[Row], plus: str, minus: str, group_a: Select, group_b: Select, label: str
) -> Effect | None:
    """How much more ``plus - minus`` gains on items of ``group_a`` than of ``group_b``: the
    per-item paired gains of each group, groups resampled independently; ``n`` the smaller group."""
    gains = []
    for where in (group_a, group_b):
        a, b = item_scores(rows, plus, where), item_scores(rows, minus, where)
        items = sorted(set(a) & set(b), key=str)
        gains.append([a[i] - b[i] for i in items])
    if not gains[0] or not gains[1]:
        return None
    interval = bootstrap_difference(gains[0], gains[1], rng=labelled_rng(label), paired=False, n_resamples=N_RESAMPLES)
    return Effect(interval.estimate, interval.low, interval.high, min(len(gains[0]), len(gains[1])))


def gap_interaction(
    rows: Sequence[Row],
    system: str,
    high: Select,
    low: Select,
    harder: Select,
    easier: Select,
    label: str,
) -> Effect | None:
    """``(high - low on harder items) - (high - low on easier items)`` for one system, the four item
    groups resampled independently (a widening gap is positive); ``n`` the smallest group."""
    groups = [
        list(item_scores(rows, system, lambda r, h=h, d=d: h(r) and d(r)).values())
        for d in (harder, easier)
        for h in (high, low)
    ]
    if not all(groups):
        return None
    rng = labelled_rng(label)
    weights = (1.0, -1.0, -1.0, 1.0)
    estimate = sum(w * float(np.mean(g)) for w, g in zip(weights, groups))
    stats = np.zeros(N_RESAMPLES)
    for weight, group in zip(weights, groups):
        values = np.asarray(group)
        stats += weight * values[rng.integers(0, values.size, size=(N_RESAMPLES, values.size))].mean(axis=1)
    low_q, high_q = np.quantile(stats, [0.025, 0.975])
    return Effect(estimate, float(low_q), float(high_q), min(len(g) for g in groups))


def systems(rows: Sequence[Row]) -> list[str]:
    """Systems present in ``rows``, in first-seen order."""
    return list(dict.fromkeys(r["system"] for r in rows))
