"""Reading run folders back: ``memgym report PATH`` and the table every ``memgym eval`` ends with.

:func:`main_tables` finds every run folder at or below a path (a run folder, a DialogMem eval
folder holding one run per memory, a quickstart folder, a whole ``runs/``), groups the runs of one
evaluation, and tabulates systems x metrics: each cell the mean with its 95% percentile bootstrap
interval over items (2,000 resamples, seed 0) and the item count, as the eval's own reports show
them. Each kind of run has sensible defaults (:func:`run_kind`, the ``report`` its benchmark declares):
DialogMem memories x navigation
success, SPL and QA score; VoxMem memory/model x accuracy per budget; AMemOps model @ checkpoint
(seeds pooled) x accuracy per query type; a run of another job gets its numeric columns. ``--metrics`` and ``--by`` choose others.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.benchmark import benchmark_info, benchmark_names, benchmark_of_job
from memgym.core.errors import RecordError
from memgym.core.loading import load_target
from memgym.core.results import RunStore, read_manifest, to_csv
from memgym.core.statistics import bootstrap_mean
from memgym.core.suggest import did_you_mean

REPORT_FILES = ("comparison.md", "link_quality.md", "results.md", "table.md")
"""An eval's own report in its folder, the first that exists: DialogMem, its link-quality sweep,
VoxMem, AMemOps."""
RESAMPLES = 2000
NOT_METRICS = frozenset({"key", "seed", "index", "step", "checkpoint", "earlier_errors", "elapsed_s", "seconds"})


@dataclasses.dataclass(frozen=True)
class RunKind:
    """How to tabulate the runs of one job.

    Attributes:
        system: the row's system label (None: the runs have no systems, only ``--by`` groups).
        metrics: default metric columns (those present are shown).
        pivot: a column whose values split each metric into one column per value ("" for none).
        percent: show the default metrics (0-1) x 100, one decimal (others as they are, three).
        expand: the table rows of one result row (AMemOps: one per query).
        unit: what one table holds: the run folder itself or its parent (one run per memory).
    """

    system: Callable[[Path, dict[str, Any]], str] | None
    metrics: tuple[str, ...]
    pivot: str = ""
    percent: bool = True
    expand: Callable[[dict[str, Any]], list[dict[str, Any]]] = lambda row: [row]
    unit: Callable[[Path], Path] = lambda folder: folder


def _queries(row: dict[str, Any]) -> list[dict[str, Any]]:
    base = {k: row.get(k) for k in ("model", "seed", "checkpoint", "stream")}
    return [{**base, **query} for query in row.get("queries", [])]


DIALOGMEM_RUNS = RunKind(
    system=lambda folder, row: folder.name,
    metrics=("geodesic_success", "execution_success", "spl", "token_f1", "llm_match"),
    unit=lambda folder: folder.parent,
)
VOXMEM_RUNS = RunKind(
    system=lambda folder, row: f"{row.get('memory')}/{row.get('model')}", metrics=("correct",), pivot="budget"
)
AMEMOPS_RUNS = RunKind(
    system=lambda folder, row: f"{row.get('model')} @ {row.get('checkpoint')}",
    metrics=("correct",),
    pivot="query_type",
    expand=_queries,
)
OTHER = RunKind(system=None, metrics=(), percent=False)


def run_kind(job: str) -> RunKind | None:
    """How the run folders of manifest job ``job`` are tabulated: the :class:`RunKind` at the
    ``report`` target of the benchmark whose ``eval_jobs`` hold it
    (:class:`~memgym.core.benchmark.BenchmarkInfo`); None for other jobs (training runs)."""
    benchmark = benchmark_of_job(job)
    target = benchmark_info(benchmark).report if benchmark is not None else ""
    return load_target(target, f"report of benchmark '{benchmark}'") if target else None


def reported_jobs() -> list[str]:
    """The eval jobs of the registered benchmarks that declare a ``report``."""
    infos = [benchmark_info(name) for name in benchmark_names()]
    return [job for info in infos if info.report for job in info.eval_jobs]


@dataclasses.dataclass(frozen=True)
class Table:
    """One evaluation's table: where it comes from, its rows (dicts of column -> cell) and the
    long form (one row per cell: group columns, ``metric``, ``mean``, ``low``, ``high``, ``n``)."""

    source: Path
    job: str
    rows: list[dict[str, str]]
    long: list[dict[str, Any]]

    def markdown(self) -> str:
        """The table as GitHub Markdown (``"_no results_"`` when it has no rows)."""
        if not self.rows:
            return "_no results_\n"
        columns = list(self.rows[0])
        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(" --- " for _ in columns) + "|"]
        lines += ["| " + " | ".join(row[c] for c in columns) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"


def read_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Rows of ``run_dir/results.jsonl`` (validated like a resumed run; one row per key)."""
    run_dir = Path(run_dir)
    if not (run_dir / "manifest.json").is_file():
        raise RecordError(f"{run_dir} is not a memgym run folder (no manifest.json)")
    read_manifest(run_dir / "manifest.json")
    return RunStore(run_dir, config_digest="").rows()


def find_run_folders(path: str | Path) -> list[Path]:
    """``path`` when it is a run folder, else every run folder below it (sorted).

    Raises:
        RecordError: ``path`` does not exist or holds no run folder.
    """
    path = Path(path)
    if not path.is_dir():
        raise RecordError(f"{path} is not a folder; expected a run folder or a folder of runs")
    if (path / "manifest.json").is_file():
        return [path]
    found = sorted(m.parent for m in path.rglob("manifest.json"))
    if not found:
        raise RecordError(f"{path} holds no memgym run folder (no manifest.json at or below it)")
    return found


def main_tables(path: str | Path, by: Sequence[str] = (), metrics: Sequence[str] = ()) -> list[Table]:
    """One :class:`Table` per evaluation at or below ``path`` (module docstring): its systems x
    ``metrics`` (default: its kind's), grouped also by the ``by`` columns. Runs of jobs without
    a kind (training runs) are tabulated only when ``path`` holds nothing else.

    Raises:
        RecordError: no run folder, no rows, or a ``by``/metric column that no row has.
    """
    folders = find_run_folders(path)
    jobs = {folder: str(read_manifest(folder / "manifest.json").get("job")) for folder in folders}
    kinds = {job: run_kind(job) for job in set(jobs.values())}
    if any(kinds.values()):
        folders = [f for f in folders if kinds[jobs[f]] is not None]
    units: dict[tuple[Path, str], list[Path]] = {}
    for folder in folders:
        kind = kinds[jobs[folder]] or OTHER
        units.setdefault((kind.unit(folder), jobs[folder]), []).append(folder)
    tables = []
    for (unit, job), members in units.items():
        kind = kinds[job] or OTHER
        rows = []
        for folder in members:
            for row in read_results(folder):
                for expanded in kind.expand(row):
                    if kind.system is not None:
                        expanded = {"system": kind.system(folder, expanded), **expanded}
                    rows.append(expanded)
        tables.append(_table(unit, job, kind, rows, list(by), list(metrics)))
    return tables


def _table(source: Path, job: str, kind: RunKind, rows: list[dict[str, Any]], by: list[str], metrics: list[str]):
    where = source / "results.jsonl" if (source / "results.jsonl").exists() else source
    if not rows and run_kind(job) is None:
        raise RecordError(
            f"{source}: a '{job}' run with no result rows; memgym report tabulates the results of "
            f"evaluation runs ({', '.join(reported_jobs())})"
        )
    chosen = metrics or _kind_metrics(rows, kind)
    check_report_columns(rows, by, chosen, where)
    groups = (["system"] if kind.system is not None else []) + by
    pivots = _pivot_values(rows, kind.pivot) if kind.pivot else []
    columns = [(m, p) for m in chosen for p in (pivots or [None])]
    grouped: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(tuple(row.get(g) for g in groups), []).append(row)
    table, long = [], []
    for values, members in grouped.items():
        out, cells = _group_cells(dict(zip(groups, values)), members, columns, kind)
        table.append(out)
        long += cells
    return Table(source, job, table, long)


def _kind_metrics(rows: Sequence[dict[str, Any]], kind: RunKind) -> list[str]:
    """The metrics tabulated when none are asked: the kind's that some row holds, else the numeric
    columns of the rows."""
    listed = [m for m in kind.metrics if any(r.get(m) is not None for r in rows)]
    return listed or (_numeric_columns(rows) if rows else [])


def _group_cells(
    keys: dict[str, Any], members: Sequence[dict[str, Any]], columns: Sequence[tuple[str, Any]], kind: RunKind
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """One table row (the group's ``keys``, then ``mean [low, high] (n)`` or ``-`` per column) and
    its long-form rows (one per column with numbers), from the group's result rows ``members``."""
    out = {g: str(v) for g, v in keys.items()}
    long = []
    for metric, pivot in columns:
        label = metric if pivot is None else f"{metric} {kind.pivot}={pivot}"
        numbers = _cell_numbers(members, metric, pivot, kind)
        if not numbers:
            out[label] = "-"
            continue
        interval = bootstrap_mean(numbers, rng=np.random.default_rng(0), n_resamples=RESAMPLES)
        digits = 1 if kind.percent and metric in kind.metrics else 3
        out[label] = f"{interval.format(digits)} ({len(numbers)})"
        long.append(
            {
                **keys,
                "metric": label,
                "mean": interval.estimate,
                "low": interval.low,
                "high": interval.high,
                "n": len(numbers),
            }
        )
    return out, long


def _cell_numbers(members: Sequence[dict[str, Any]], metric: str, pivot: Any, kind: RunKind) -> list[float]:
    """The finite values of ``metric`` in the rows of one table cell (error rows aside; only those
    of ``pivot`` when the kind pivots), in percent for a percent kind's own metrics."""
    scale = 100.0 if kind.percent and metric in kind.metrics else 1.0
    numbers = [
        float(r[metric]) * scale
        for r in members
        if r.get(metric) is not None and not r.get("error") and (pivot is None or r.get(kind.pivot) == pivot)
    ]
    return [x for x in numbers if math.isfinite(x)]


def _pivot_values(rows: Sequence[dict[str, Any]], column: str) -> list[Any]:
    """The values of ``column``: numbers ascending, others in the order they first appear."""
    values = list(dict.fromkeys(r.get(column) for r in rows if r.get(column) is not None))
    numbers = sorted(v for v in values if isinstance(v, (int, float)))
    return numbers + [v for v in values if not isinstance(v, (int, float))]


def _numeric_columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Columns holding numbers (not booleans) in at least half the rows, bookkeeping ones aside."""
    counts: dict[str, int] = {}
    for row in rows:
        for key, value in row.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in NOT_METRICS:
                counts[key] = counts.get(key, 0) + 1
    return [key for key, count in counts.items() if 2 * count >= len(rows)]


def render_tables(tables: Sequence[Table], fmt: str = "markdown", relative_to: Path | None = None) -> str:
    """The tables as text: Markdown, each under a line naming its folder and job (the heading is
    left out for a single table), or one CSV of every table's long form."""
    if fmt == "csv":
        return to_csv([{"source": str(t.source), "job": t.job, **row} for t in tables for row in t.long])
    parts = []
    for table in tables:
        if len(tables) > 1:
            source = table.source
            if relative_to is not None and source.is_relative_to(relative_to):
                source = source.relative_to(relative_to)
            parts.append(f"{source} ({table.job}):\n\n")
        parts.append(table.markdown())
        if len(tables) > 1:
            parts.append("\n")
    return "".join(parts)


def report_file(folder: str | Path) -> Path | None:
    """The eval's own report in ``folder`` (the first of :data:`REPORT_FILES`), None without one."""
    return next((Path(folder) / n for n in REPORT_FILES if (Path(folder) / n).is_file()), None)


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
        raise RecordError(f"{where}: no numeric column to report; name one with --metrics")
    columns = sorted({key for row in rows for key in row})
    for column in [*by, *metrics]:
        if not any(column in row for row in rows):
            hint = did_you_mean(column, columns)
            raise RecordError(f"{where}: no column '{column}'{hint}; columns: {', '.join(columns)}")
    for metric in metrics:
        for row in rows:
            value = row.get(metric)
            if value is not None and (isinstance(value, str) or not isinstance(value, (int, float))):
                raise RecordError(
                    f"{where}: metric '{metric}' is not numeric (row '{row.get('key', '?')}' holds {value!r}); "
                    "use it with --by instead"
                )
