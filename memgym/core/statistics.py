"""Bootstrap confidence intervals, unpaired and paired, vectorised over resamples, and the exact
McNemar test of paired successes (:func:`mcnemar_exact`).

The bootstrap functions take a ``numpy.random.Generator`` so intervals are reproducible, and return
:class:`Interval` (point estimate and the percentile interval of the bootstrap distribution).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np


@dataclasses.dataclass(frozen=True)
class Interval:
    """A point estimate with a ``level`` (e.g. 0.95) percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    level: float = 0.95

    def format(self, digits: int = 1) -> str:
        """``"12.3 [10.1, 14.2]"``."""
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def _as_1d(values: Sequence[float], name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.size == 0:
        raise ValueError(f"{name} is empty: cannot bootstrap")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains non-finite values")
    return array


def percentile_interval(stats: np.ndarray, estimate: float, level: float = 0.95) -> Interval:
    """Interval from bootstrap replicates ``stats`` around the point ``estimate`` (percentile method)."""
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return Interval(float(estimate), float(low), float(high), level)


def _resampled_means(values: np.ndarray, n_resamples: int, rng: np.random.Generator, batch: int = 2000) -> np.ndarray:
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, batch):
        stop = min(start + batch, n_resamples)
        idx = rng.integers(0, values.size, size=(stop - start, values.size))
        out[start:stop] = values[idx].mean(axis=1)
    return out


def bootstrap_mean(
    values: Sequence[float], *, rng: np.random.Generator, n_resamples: int = 10_000, level: float = 0.95
) -> Interval:
    """Percentile bootstrap interval of the mean of ``values``."""
    x = _as_1d(values, "values")
    return percentile_interval(_resampled_means(x, n_resamples, rng), x.mean(), level)


def bootstrap_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    rng: np.random.Generator,
    paired: bool,
    n_resamples: int = 10_000,
    level: float = 0.95,
) -> Interval:
    """Interval of ``mean(a) - mean(b)``.

    Args:
        paired: resample the same indices for ``a`` and ``b`` (the same streams/items scored by
            two models); they must then have equal length. Unpaired resamples each independently.
    """
    x, y = _as_1d(a, "a"), _as_1d(b, "b")
    if paired:
        if x.size != y.size:
            raise ValueError(f"paired bootstrap needs equal lengths, got {x.size} and {y.size}")
        return bootstrap_mean(x - y, rng=rng, n_resamples=n_resamples, level=level)
    stats = _resampled_means(x, n_resamples, rng) - _resampled_means(y, n_resamples, rng)
    return percentile_interval(stats, x.mean() - y.mean(), level)


def simultaneous_half_width(bootstrap_stats: np.ndarray, estimates: np.ndarray, level: float = 0.95) -> float:
    """Half-width for simultaneous intervals over several contrasts.

    Args:
        bootstrap_stats: ``(R, K)`` bootstrap replicates of K contrasts.
        estimates: ``(K,)`` point estimates.
    Returns:
        the ``level`` quantile of the maximum absolute centred bootstrap error over contrasts.
    """
    errors = np.abs(np.asarray(bootstrap_stats) - np.asarray(estimates)[None, :]).max(axis=1)
    return float(np.quantile(errors, level))


def simultaneous_intervals(bootstrap_stats: np.ndarray, estimates: np.ndarray, level: float = 0.95) -> list[Interval]:
    """Symmetric simultaneous intervals ``estimate ± h`` over K contrasts, ``h`` from
    :func:`simultaneous_half_width` (all K cover jointly in ``level`` of the resamples).

    Args:
        bootstrap_stats: ``(R, K)`` bootstrap replicates; estimates: ``(K,)`` point estimates.
    """
    estimates = np.asarray(estimates, dtype=np.float64)
    half = simultaneous_half_width(bootstrap_stats, estimates, level)
    return [Interval(float(e), float(e - half), float(e + half), level) for e in estimates]


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int, float]:
    """Exact (binomial) McNemar test of paired successes ``a`` and ``b`` (the same items).

    Returns ``(n01, n10, p)``: the discordant counts ``n01`` (``a`` failed, ``b`` succeeded) and
    ``n10`` (``a`` succeeded, ``b`` failed) and the two-sided p-value
    ``min(1, 2 * P(X <= min(n01, n10)))``, ``X ~ Binomial(n01 + n10, 1/2)`` (1.0 without discordant pairs).
    """
    x, y = np.asarray(a, bool), np.asarray(b, bool)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"McNemar needs two equal-length 1-D sequences, got shapes {x.shape} and {y.shape}")
    n01, n10 = int(np.sum(~x & y)), int(np.sum(x & ~y))
    n = n01 + n10
    if n == 0:
        return n01, n10, 1.0
    tail = sum(math.comb(n, k) for k in range(min(n01, n10) + 1))
    return n01, n10, min(1.0, 2.0 * tail / 2**n)
