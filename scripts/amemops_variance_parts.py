"""How much of an AMemOps update-interaction interval is per-seed stream noise and how much is
differences between the trained models, in one stratum of intervening writes.

For the contrast ``A:B`` of an eval with ``update_interactions`` (seeds paired by position: the k-th
seed of A with the k-th of B), each seed's interaction (A - B on post-update minus on initial
queries, pp, on the streams holding both query types of ``--attribute`` in the stratum) is computed
on the whole stratum and on two disjoint random halves of its streams. Across seeds, the variance
of the whole-stratum values is model differences plus stream noise; the covariance of the two
halves' values estimates the model part alone (stream noise is independent between the halves).
Also printed: the standard deviation of the pooled interaction under resampling streams only and
seeds only (``--resamples``; a tenth as many random half-splits), the two parts of its bootstrap interval.
Nothing is written.

Usage: ``python scripts/amemops_variance_parts.py RUNS/amemops_eval/NAME [NAME2 ...] [--stratum below2]``
(from the repository root; several folders: disjoint seeds, pooled). Used for docs/amemops_models.md,
"AEQ3GU at equal intervening load, sixth look".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from scripts.amemops_interaction_level import pooled_eval, with_intervening

STRATA = {"below2": lambda n: n < 2, "atleast2": lambda n: n >= 2, "all": lambda n: True}
TYPES = ("initial", "post_update")


def correct_counts(folders: list[Path], stratum: str, attribute: str) -> tuple[np.ndarray, np.ndarray, str]:
    """``(correct, queries, contrast)``: arrays ``(2 models, seeds, streams, 2 query types)`` of the
    first update interaction's models, over the streams holding both query types in the stratum."""
    config, rows = pooled_eval(folders)
    if not config.update_interactions:
        raise MemgymError(f"{folders[0] / 'config.yaml'}: the eval has no update_interactions")
    contrast = config.update_interactions[0]
    models = contrast.split(":")
    rows = with_intervening(config, rows)
    keep = STRATA[stratum]
    rows = [
        r
        for r in rows
        if r["model"] in models
        and r["query_type"] in TYPES
        and attribute in ("all", r["attribute"])
        and keep(r["intervening"])
    ]
    streams = {s: i for i, s in enumerate(sorted({str(r["stream"]) for r in rows}))}
    seeds = list(config.seeds)
    correct = np.zeros((2, len(seeds), len(streams), 2))
    queries = np.zeros_like(correct)
    for r in rows:
        cell = (
            models.index(r["model"]),
            seeds.index(r["seed"]),
            streams[str(r["stream"])],
            TYPES.index(r["query_type"]),
        )
        correct[cell] += r["correct"]
        queries[cell] += 1
    both = (queries.sum(axis=(0, 1)) > 0).all(axis=1)
    return correct[:, :, both], queries[:, :, both], contrast


def interaction(correct: np.ndarray, queries: np.ndarray) -> float:
    """A - B on post-update minus on initial queries (pp), query-weighted over seeds and streams."""
    accuracy = 100 * correct.sum(axis=(1, 2)) / queries.sum(axis=(1, 2))
    return float((accuracy[0, 1] - accuracy[1, 1]) - (accuracy[0, 0] - accuracy[1, 0]))


def per_seed(correct: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Each seed pair's interaction (pp), shape ``(seeds,)``."""
    return np.array([interaction(correct[:, k : k + 1], queries[:, k : k + 1]) for k in range(correct.shape[1])])


def between_model_variance(correct: np.ndarray, queries: np.ndarray, splits: int, rng: np.random.Generator) -> float:
    """The across-seed variance (pp²) of the per-seed interactions that is not stream noise: the
    covariance, across seeds, of the values on two disjoint random halves of the streams, averaged
    over ``splits`` random splits (unbiased: the halves' stream noise is independent)."""
    covariances = []
    for _ in range(splits):
        halves = np.array_split(rng.permutation(correct.shape[2]), 2)
        values = [per_seed(correct[:, :, h], queries[:, :, h]) for h in halves]
        covariances.append(np.cov(values[0], values[1])[0, 1])
    return float(np.mean(covariances))


def report(correct: np.ndarray, queries: np.ndarray, contrast: str, resamples: int, rng: np.random.Generator) -> str:
    """The printed parts: estimate, per-seed values, their variance split, and the bootstrap parts."""
    n_seeds, n_streams = correct.shape[1], correct.shape[2]
    seed_values = per_seed(correct, queries)
    splits = resamples // 10
    between = between_model_variance(correct, queries, splits, rng)  # drawn before the bootstrap, as for the docs
    by_streams, by_seeds = [], []
    for _ in range(resamples):
        s = rng.integers(0, n_streams, n_streams)
        by_streams.append(interaction(correct[:, :, s], queries[:, :, s]))
        a, b = rng.integers(0, n_seeds, n_seeds), rng.integers(0, n_seeds, n_seeds)
        by_seeds.append(interaction(np.stack([correct[0, a], correct[1, b]]), np.stack([queries[0, a], queries[1, b]])))
    return (
        f"{contrast}: interaction {interaction(correct, queries):.2f} pp on {n_streams} streams, {n_seeds} seeds\n"
        f"per seed: {', '.join(f'{v:.1f}' for v in seed_values)}\n"
        f"variance across seeds {np.var(seed_values, ddof=1):.2f} pp^2, of which between models "
        f"(covariance of disjoint stream halves, mean of {splits} splits) "
        f"{between:.2f} pp^2\n"
        f"bootstrap sd of the pooled interaction: streams only {np.std(by_streams):.2f}, "
        f"seeds only (resampled per model) {np.std(by_seeds):.2f} pp\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="amemops eval folders; several: pooled seeds")
    parser.add_argument(
        "--stratum", choices=sorted(STRATA), default="below2", help="intervening writes (default below2)"
    )
    parser.add_argument("--attribute", choices=("all", "gain", "pan"), default="pan", help="queried attribute")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    args = parser.parse_args(argv)
    try:
        correct, queries, contrast = correct_counts(args.folders, args.stratum, args.attribute)
    except MemgymError as error:
        print(f"amemops_variance_parts: error: {error}", file=sys.stderr)
        return 2
    print(report(correct, queries, contrast, args.resamples, np.random.default_rng(0)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
