"""Reading run folders back for ``memgym report`` and for plots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.core.errors import RecordError
from memgym.core.results import RunStore, read_manifest


def read_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Rows of ``run_dir/results.jsonl`` (validated like a resumed run; one row per key)."""
    run_dir = Path(run_dir)
    if not (run_dir / "manifest.json").is_file():
        raise RecordError(f"{run_dir} is not a memgym run folder (no manifest.json)")
    read_manifest(run_dir / "manifest.json")
    return RunStore(run_dir, config_digest="").rows()


def check_report_columns(
    rows: Sequence[dict[str, Any]], by: Sequence[str], metrics: Sequence[str], where: Path
) -> None:
    """Refuse ``memgym report`` columns that no row has, and metrics holding non-numbers.

    Raises:
        RecordError: naming the results file, the column and the columns that exist.
    """
    if not rows:
        raise RecordError(f"{where} holds no results yet")
    if not metrics:
        raise RecordError("--metrics names no column")
    columns = sorted({key for row in rows for key in row})
    for column in [*by, *metrics]:
        if not any(column in row for row in rows):
            raise RecordError(f"{where}: no column '{column}'; columns: {', '.join(columns)}")
    for metric in metrics:
        for row in rows:
            value = row.get(metric)
            if value is not None and (isinstance(value, str) or not isinstance(value, (int, float))):
                raise RecordError(
                    f"{where}: metric '{metric}' is not numeric (row '{row['key']}' holds {value!r}); "
                    "use it with --by instead"
                )
