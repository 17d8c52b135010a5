"""Finding the run folders ``memgym findings`` reads, and their rows in one tidy form per benchmark.

A *run folder* holds ``manifest.json`` (its ``job``), ``config.yaml`` and ``results.jsonl``
(:class:`~memgym.core.results.RunStore`). Any folder given on the command line is searched
recursively, so a quickstart folder, a ``runs/`` root or one run folder all work, in any mix.

Tidy rows (plain dicts) per benchmark:

- DialogMem (``eval-dialogmem``, one folder per memory or sweep variant): ``system`` (memory name
  or sweep variant), ``item`` (the results key: episode | item, shared across systems), ``task``
  (``qa`` / ``navigation``), ``score`` (0-100: LLM-match or token F1 x 100 for QA, geodesic
  success x 100 for navigation), ``content_type``, ``verbalised``, ``updated``,
  ``names_category`` (false for an instruction naming its target only by dialogue cues; true for
  rows written before such items existed), ``reasoner`` (the run's ``reasoner.backend``), and for
  sweep variants ``mode`` / ``level``.
- VoxMem (``eval-voxmem``): ``system`` (``memory/model``), ``item`` (item id), ``budget`` (tokens),
  ``evidence``, ``operation``, ``subtype``, ``score`` (0 / 100), ``refusal`` (an answer-refusal item).
- AMemOps (``amemops_eval``): one row per query as :func:`query_rows` gives them (``model``,
  ``seed``, ``stream``, ``query_type``, ``correct``, ...).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from memgym.core.benchmark import benchmark_of_job
from memgym.core.errors import RecordError
from memgym.core.results import RunStore, read_manifest


@dataclasses.dataclass(frozen=True)
class RunFolder:
    """One evaluation run folder: its benchmark, job, parsed config and (unscored) rows."""

    path: Path
    benchmark: str
    config: dict[str, Any]
    rows: tuple[dict[str, Any], ...]


def find_runs(paths: Sequence[str | Path]) -> list[RunFolder]:
    """Every evaluation run folder at or below ``paths`` (sorted by path; duplicates once).

    Raises:
        RecordError: a path that does not exist, or that holds no evaluation run at all.
    """
    folders: dict[Path, RunFolder] = {}
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise RecordError(f"{root} does not exist; expected a run folder or a folder of runs")
        if not root.is_dir():
            raise RecordError(f"{root} is a file; expected a run folder or a folder of runs")
        found = [m.parent for m in sorted(root.rglob("manifest.json"))]
        runs = [run for run in (_read_run(f) for f in found) if run is not None]
        if not runs:
            raise RecordError(
                f"{root} holds no evaluation run (no manifest.json of eval-dialogmem, eval-voxmem or amemops_eval)"
            )
        folders.update((run.path.resolve(), run) for run in runs)
    return [folders[k] for k in sorted(folders)]


def _read_run(folder: Path) -> RunFolder | None:
    manifest = read_manifest(folder / "manifest.json")
    benchmark = benchmark_of_job(str(manifest.get("job")))  # through the registry's eval_jobs
    if benchmark is None:
        return None
    config_path = folder / "config.yaml"
    try:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RecordError(f"{config_path}: cannot read the run's config ({exc.__class__.__name__})") from None
    if not isinstance(config, dict):
        raise RecordError(f"{config_path}: expected a mapping of config keys")
    rows = tuple(RunStore(folder, config_digest="").rows())
    return RunFolder(folder, benchmark, config, rows)


def dialogmem_rows(runs: Iterable[RunFolder]) -> list[dict[str, Any]]:
    """Tidy DialogMem rows (module docstring) of every scored item of the DialogMem runs."""
    tidy = []
    for run in runs:
        if run.benchmark != "dialogmem":
            continue
        variant = run.path.name if run.path.parent.name == "sweep" else ""
        system = variant or str(run.config.get("memory") or run.path.name)
        mode, level = _sweep_level(variant)
        reasoner = run_reasoner(run.config)
        for row in run.rows:
            score = _dialogmem_score(row)
            if score is None:
                continue
            tidy.append(
                {
                    "system": system,
                    "run": str(run.path),
                    "item": row["key"],
                    "task": row["task"],
                    "score": score,
                    "content_type": row.get("content_type"),
                    "verbalised": row.get("verbalised"),
                    "updated": bool(row.get("updated", False)),
                    "names_category": bool(row.get("names_category", True)),
                    "reasoner": reasoner,
                    "mode": mode,
                    "level": level,
                }
            )
    return tidy


def run_reasoner(config: dict[str, Any]) -> str:
    """The reasoner backend a run's config names (``structured``, the default, when it names none)."""
    reasoner = config.get("reasoner")
    backend = reasoner.get("backend") if isinstance(reasoner, dict) else None
    return str(backend or "structured")


def _sweep_level(variant: str) -> tuple[str, float | None]:
    """``controlled-missing-040`` -> (``missing``, 40.0); others -> ("", None)."""
    parts = variant.split("-")
    if len(parts) == 3 and parts[0] == "controlled" and parts[2].isdigit():
        return parts[1], float(parts[2])
    return "", None


def _dialogmem_score(row: dict[str, Any]) -> float | None:
    if row.get("error") or row.get("task") not in ("qa", "navigation"):
        return None
    if row["task"] == "navigation":
        value = row.get("geodesic_success")
        return None if value is None else 100.0 * float(value)
    if row.get("llm_match") is not None:
        return float(row["llm_match"])
    value = row.get("token_f1")
    return None if value is None else 100.0 * float(value)


def voxmem_rows(runs: Iterable[RunFolder]) -> list[dict[str, Any]]:
    """Tidy VoxMem rows (module docstring) of every scored item of the VoxMem runs."""
    tidy = []
    for run in runs:
        if run.benchmark != "voxmem":
            continue
        for row in run.rows:
            if row.get("correct") is None or row.get("status") == "error":
                continue
            tidy.append(
                {
                    "system": f"{row.get('memory')}/{row.get('model')}",
                    "run": str(run.path),
                    "item": row.get("item_id"),
                    "budget": int(row.get("budget") or 0),
                    "evidence": row.get("evidence"),
                    "operation": row.get("operation"),
                    "subtype": row.get("subtype"),
                    "score": 100.0 * float(row["correct"]),
                    "refusal": row.get("operation") == "AR",
                }
            )
    return tidy


def amemops_rows(runs: Iterable[RunFolder]) -> list[dict[str, Any]]:
    """Per-query AMemOps rows of every run, each with its ``run`` path and ``checkpoint``."""
    tidy = []
    for run in runs:
        if run.benchmark != "amemops":
            continue
        for row in run.rows:
            if row.get("error") or "queries" not in row:
                continue
            base = {k: row.get(k) for k in ("model", "seed", "checkpoint", "stream")}
            tidy += [{**base, **query, "run": str(run.path)} for query in row["queries"]]
    return tidy
