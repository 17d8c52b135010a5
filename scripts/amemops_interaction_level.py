"""An AMemOps eval's ``update_interaction.md`` (or ``intervening.md``) tables at another interval level.

For a criterion judged more than once (several candidate settings, each a look), the intervals of
the last look can be widened, e.g. Bonferroni for four looks: ``--level 0.9875`` (1 - 0.05/4). The
tables are recomputed from the folder's ``results.jsonl`` and ``config.yaml`` with the eval's own
seeded bootstrap (its ``bootstrap_resamples``, the same resamples as ``update_interaction.md``), so
at ``--level 0.95`` the output equals that file. With ``--intervening`` the tables are those of
``intervening.md``, per stratum of intervening writes (the streams are regenerated from the config
to count them, as the eval does). Nothing is written; the tables are printed.

Several folders of evals that differ only in their (disjoint) seeds are pooled, as one eval of all
their seeds would be (the rows are the same per model, seed and stream).

Usage: ``python scripts/amemops_interaction_level.py RUNS/amemops_eval/NAME [NAME2 ...] --level 0.9875
[--intervening]`` (from the repository root). Used for docs/amemops_models.md, "Equal write strength: EQ3" and "AEQ3GU".
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.core.results import RunStore
from memgym.core.seeding import config_hash
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
from memgym.pipelines.amemops.evaluate import eval_streams, first_evaluation_rows
from memgym.pipelines.amemops.reports import annotate_conditions, query_rows
from memgym.tasks.amemops.interaction import intervening_markdown, seeded_tables


def pooled_eval(folders: Sequence[Path]) -> tuple[AMemOpsEvalConfig, list[dict[str, Any]]]:
    """The config and first-evaluation query rows of ``folders`` together: evals that differ only in
    their (disjoint) seeds and name, pooled as one eval of all their seeds."""
    configs = [load_config(AMemOpsEvalConfig, path=f / "config.yaml") for f in folders]
    seeds = [s for c in configs for s in c.seeds]
    if len(set(seeds)) < len(seeds):
        raise MemgymError(f"{', '.join(map(str, folders))}: the evals share seeds; pool evals of disjoint seeds")
    base = config_hash(dataclasses.replace(configs[0], seeds=(), name=""))
    for folder, config in zip(folders[1:], configs[1:], strict=True):
        if config_hash(dataclasses.replace(config, seeds=(), name="")) != base:
            raise MemgymError(f"{folder / 'config.yaml'}: differs from {folders[0] / 'config.yaml'} in more than seeds")
    config = dataclasses.replace(configs[0], seeds=tuple(seeds))
    rows = [r for f in folders for r in first_evaluation_rows(query_rows(RunStore(f, "").rows()), config)]
    return config, rows


def interaction_tables(folders: Sequence[Path], level: float, intervening: bool = False) -> str:
    """``update_interaction.md``'s text for the evals in ``folders`` (one, or several of disjoint
    seeds, pooled) at ``level`` (0 < level < 1), or ``intervening.md``'s with ``intervening``."""
    config, rows = pooled_eval(folders)
    if not config.update_interactions or config.bootstrap_resamples < 1:
        raise MemgymError(
            f"{folders[0] / 'config.yaml'}: the eval has no update_interactions or no bootstrap resamples"
        )
    n, models, contrasts = config.bootstrap_resamples, config.models, config.update_interactions
    if not intervening:
        return seeded_tables(rows, models, contrasts, n, level)
    return intervening_markdown(with_intervening(config, rows), models, contrasts, n_resamples=n, level=level)


def with_intervening(config: AMemOpsEvalConfig, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with each query's ``intervening`` writes, counted on the eval's regenerated streams."""
    tensors, n_streams = eval_streams(config.evaluations()[0][1], config.stream_set, config.streams)
    return annotate_conditions(
        rows, tensors, n_streams, dataclasses.replace(config, breakdowns=("intervening",), exclude=())
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folders", type=Path, nargs="+", help="amemops eval folders (RUNS/amemops_eval/NAME); several: pooled seeds"
    )
    parser.add_argument("--level", type=float, default=0.95, help="interval level, 0 < level < 1 (default 0.95)")
    parser.add_argument(
        "--intervening", action="store_true", help="the tables of intervening.md (per stratum of intervening writes)"
    )
    args = parser.parse_args(argv)
    if not 0.0 < args.level < 1.0:
        parser.error(f"--level must lie strictly between 0 and 1, got {args.level}")
    try:
        print(interaction_tables(args.folders, args.level, args.intervening), end="")
    except MemgymError as error:
        print(f"amemops_interaction_level: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
