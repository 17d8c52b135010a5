import numpy as np
import pytest

from memgym.core.statistics import (
    bootstrap_difference,
    bootstrap_mean,
    mcnemar_exact,
    simultaneous_half_width,
    simultaneous_intervals,
)


def test_bootstrap_mean_interval_covers_the_mean_and_matches_normal_theory():
    rng = np.random.default_rng(0)
    values = rng.normal(10.0, 2.0, size=400)
    interval = bootstrap_mean(values, rng=np.random.default_rng(1), n_resamples=4000)
    assert interval.low < values.mean() < interval.high
    half = 1.96 * values.std(ddof=1) / np.sqrt(values.size)
    assert interval.high - interval.low == pytest.approx(2 * half, rel=0.1)


def test_paired_interval_is_narrower_when_scores_are_correlated():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 1, size=300)
    a, b = base + 0.2, base + rng.normal(0, 0.1, size=300)
    paired = bootstrap_difference(a, b, rng=np.random.default_rng(1), paired=True, n_resamples=3000)
    unpaired = bootstrap_difference(a, b, rng=np.random.default_rng(1), paired=False, n_resamples=3000)
    assert paired.estimate == pytest.approx(unpaired.estimate)
    assert paired.low > 0.1 and paired.high < 0.3
    assert (paired.high - paired.low) < 0.3 * (unpaired.high - unpaired.low)


def test_reproducible_and_validated():
    values = [0.0, 1.0, 1.0, 0.0, 1.0]
    one = bootstrap_mean(values, rng=np.random.default_rng(5), n_resamples=500)
    two = bootstrap_mean(values, rng=np.random.default_rng(5), n_resamples=500)
    assert one == two
    assert one.format() == f"{one.estimate:.1f} [{one.low:.1f}, {one.high:.1f}]"
    with pytest.raises(ValueError, match="empty"):
        bootstrap_mean([], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="equal lengths"):
        bootstrap_difference([1, 2], [1], rng=np.random.default_rng(0), paired=True)


def test_simultaneous_half_width_is_max_abs_error_quantile():
    stats = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 1.0]])
    assert simultaneous_half_width(stats, np.array([1.0, 1.0]), level=1.0) == pytest.approx(2.0)


def test_simultaneous_intervals_are_symmetric_and_cover_jointly():
    rng = np.random.default_rng(0)
    stats = rng.normal(0.0, [1.0, 2.0, 0.5], size=(20_000, 3))
    intervals = simultaneous_intervals(stats, np.zeros(3))
    half = intervals[0].high
    assert all(i.high == pytest.approx(half) and i.low == pytest.approx(-half) for i in intervals)
    assert np.mean(np.all(np.abs(stats) <= half, axis=1)) == pytest.approx(0.95, abs=0.005)
    assert half > np.quantile(np.abs(stats[:, 1]), 0.95)  # wider than the widest marginal one


def test_mcnemar_exact_against_a_worked_example():
    # 10 discordant pairs, 2 against 8: p = 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 112 / 1024
    a = [True] * 5 + [True] * 2 + [False] * 8 + [False] * 3
    b = [True] * 5 + [False] * 2 + [True] * 8 + [False] * 3
    assert mcnemar_exact(a, b) == (8, 2, pytest.approx(0.109375))
    assert mcnemar_exact(b, a) == (2, 8, pytest.approx(0.109375))
    assert mcnemar_exact([True, False], [True, False]) == (0, 0, 1.0)
    assert mcnemar_exact([True] * 3, [True] * 3)[2] == 1.0
    assert mcnemar_exact([False], [True])[2] == 1.0  # min(1, 2 * 0.5)
    with pytest.raises(ValueError, match="equal-length"):
        mcnemar_exact([True], [True, False])
