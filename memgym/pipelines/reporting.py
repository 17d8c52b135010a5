"""Reading run folders back for ``memgym report`` and for plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memgym.core.errors import RecordError
from memgym.core.results import RunStore


def read_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Rows of ``run_dir/results.jsonl`` (validated like a resumed run)."""
    run_dir = Path(run_dir)
    if not (run_dir / "manifest.json").is_file():
        raise RecordError(f"{run_dir} is not a memgym run folder (no manifest.json)")
    return RunStore(run_dir, config_digest="").rows()
