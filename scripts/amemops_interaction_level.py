"""An AMemOps eval's ``update_interaction.md`` tables at another interval level.

For a criterion judged more than once (several candidate settings, each a look), the intervals of
the last look can be widened, e.g. Bonferroni for four looks: ``--level 0.9875`` (1 - 0.05/4). The
tables are recomputed from the folder's ``results.jsonl`` and ``config.yaml`` with the eval's own
seeded bootstrap (its ``bootstrap_resamples``, the same resamples as ``update_interaction.md``), so
at ``--level 0.95`` the output equals that file. Nothing is written; the tables are printed.

Usage: ``python scripts/amemops_interaction_level.py RUNS/amemops_eval/NAME --level 0.9875``
(from the repository root). Used for docs/amemops_models.md, "Equal write strength: EQ3".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.core.results import RunStore
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
from memgym.pipelines.amemops.evaluate import first_evaluation_rows
from memgym.pipelines.amemops.reports import query_rows
from memgym.tasks.amemops.interaction import interaction_markdown, operation_accuracy, update_interactions


def interaction_tables(folder: Path, level: float) -> str:
    """``update_interaction.md``'s text for the eval in ``folder`` at ``level`` (0 < level < 1)."""
    config = load_config(AMemOpsEvalConfig, path=folder / "config.yaml")
    if not config.update_interactions or config.bootstrap_resamples < 1:
        raise MemgymError(f"{folder / 'config.yaml'}: the eval has no update_interactions or no bootstrap resamples")
    rows = first_evaluation_rows(query_rows(RunStore(folder, "").rows()), config)
    n = config.bootstrap_resamples
    accuracy = operation_accuracy(rows, list(config.models), rng=np.random.default_rng(0), n_resamples=n, level=level)
    interactions = update_interactions(
        rows, config.update_interactions, rng=np.random.default_rng(1), n_resamples=n, level=level
    )
    return interaction_markdown(accuracy, interactions, level)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="an amemops eval folder (RUNS/amemops_eval/NAME)")
    parser.add_argument("--level", type=float, default=0.95, help="interval level, 0 < level < 1 (default 0.95)")
    args = parser.parse_args(argv)
    if not 0.0 < args.level < 1.0:
        parser.error(f"--level must lie strictly between 0 and 1, got {args.level}")
    try:
        print(interaction_tables(args.folder, args.level), end="")
    except MemgymError as error:
        print(f"amemops_interaction_level: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
