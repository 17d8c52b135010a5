"""scripts/amemops_variance_parts.py: the per-seed interaction and its split into model differences
and stream noise, on counts whose truth is known."""

import numpy as np

from scripts.amemops_variance_parts import between_model_variance, interaction, per_seed


def test_interaction_is_post_update_gap_minus_initial_gap():
    # (model A/B, seed, stream, initial/post-update): A 9/10 and 6/10 correct, B 9/10 and 3/10
    correct = np.array([[[[9, 6]]], [[[9, 3]]]], dtype=float)
    queries = np.full_like(correct, 10)
    assert interaction(correct, queries) == 30.0
    assert per_seed(
        np.concatenate([correct, correct], axis=1), np.concatenate([queries, queries], axis=1)
    ).tolist() == [
        30.0,
        30.0,
    ]


def _counts(rng: np.random.Generator, seed_sd: float, seeds: int = 12, streams: int = 800) -> tuple:
    """Binary answers, one query per stream and type; model A's post-update accuracy per seed is
    0.7 + a seed effect of sd ``seed_sd`` pp, everything else 0.7."""
    p = np.full((2, seeds, streams, 2), 0.7)
    p[0, :, :, 1] += rng.normal(0, seed_sd / 100, seeds)[:, None]
    return (rng.random(p.shape) < p).astype(float), np.ones(p.shape)


def test_halves_recover_model_differences_and_not_stream_noise():
    rng = np.random.default_rng(0)
    same = [between_model_variance(*_counts(rng, 0.0), 20, rng) for _ in range(10)]
    differ = [between_model_variance(*_counts(rng, 8.0), 20, rng) for _ in range(10)]
    noise = np.var(per_seed(*_counts(rng, 0.0)), ddof=1)  # stream noise alone: about 4 x 0.21 / 800 x 1e4
    assert noise > 5  # large against what the halves report when seeds do not differ
    assert abs(np.mean(same)) < 5 and 35 < np.mean(differ) < 95  # 0 and 64 pp² put in (measured -1.7 to 0.9, 52-61)
