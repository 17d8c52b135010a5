"""An AMemOps eval's ``update_interaction.md`` (or ``intervening.md``) tables at another interval level.

For a criterion judged more than once (several candidate settings, each a look), the intervals of
the last look can be widened, e.g. Bonferroni for four looks: ``--level 0.9875`` (1 - 0.05/4). The
tables are recomputed from the folder's ``results.jsonl`` and ``config.yaml`` with the eval's own
seeded bootstrap (its ``bootstrap_resamples``, the same resamples as ``update_interaction.md``), so
at ``--level 0.95`` the output equals that file. With ``--intervening`` the tables are those of
``intervening.md``, per stratum of intervening writes (the streams are regenerated from the config
to count them, as the eval does). Nothing is written; the tables are printed.

Usage: ``python scripts/amemops_interaction_level.py RUNS/amemops_eval/NAME --level 0.9875 [--intervening]``
(from the repository root). Used for docs/amemops_models.md, "Equal write strength: EQ3" and "AEQ3GU".
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.core.results import RunStore
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
from memgym.pipelines.amemops.evaluate import eval_streams, first_evaluation_rows
from memgym.pipelines.amemops.reports import annotate_conditions, query_rows
from memgym.tasks.amemops.interaction import intervening_markdown, seeded_tables


def interaction_tables(folder: Path, level: float, intervening: bool = False) -> str:
    """``update_interaction.md``'s text for the eval in ``folder`` at ``level`` (0 < level < 1), or
    ``intervening.md``'s with ``intervening``."""
    config = load_config(AMemOpsEvalConfig, path=folder / "config.yaml")
    if not config.update_interactions or config.bootstrap_resamples < 1:
        raise MemgymError(f"{folder / 'config.yaml'}: the eval has no update_interactions or no bootstrap resamples")
    rows = first_evaluation_rows(query_rows(RunStore(folder, "").rows()), config)
    n, models, contrasts = config.bootstrap_resamples, config.models, config.update_interactions
    if not intervening:
        return seeded_tables(rows, models, contrasts, n, level)
    tensors, n_streams = eval_streams(config.evaluations()[0][1], config.stream_set, config.streams)
    rows = annotate_conditions(
        rows, tensors, n_streams, dataclasses.replace(config, breakdowns=("intervening",), exclude=())
    )
    return intervening_markdown(rows, models, contrasts, n_resamples=n, level=level)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="an amemops eval folder (RUNS/amemops_eval/NAME)")
    parser.add_argument("--level", type=float, default=0.95, help="interval level, 0 < level < 1 (default 0.95)")
    parser.add_argument(
        "--intervening", action="store_true", help="the tables of intervening.md (per stratum of intervening writes)"
    )
    args = parser.parse_args(argv)
    if not 0.0 < args.level < 1.0:
        parser.error(f"--level must lie strictly between 0 and 1, got {args.level}")
    try:
        print(interaction_tables(args.folder, args.level, args.intervening), end="")
    except MemgymError as error:
        print(f"amemops_interaction_level: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
