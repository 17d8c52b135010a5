"""What a path handed to ``memgym view`` holds: which benchmark, and a dataset or a run folder.

| path | benchmark | kind |
| --- | --- | --- |
| episodes JSONL of ``dialogmem.episode`` records (``memgym generate dialogmem``) | dialogmem | dataset |
| ``eval-dialogmem/NAME/`` (memory sub-folders) or one ``NAME/<memory>/`` folder | dialogmem | run |
| VoxMem dataset folder or its ``manifest.jsonl`` (``voxmem.episode`` records) | voxmem | dataset |
| ``eval-voxmem/NAME/`` (``manifest.json`` job ``eval-voxmem``) | voxmem | run |
| AMemOps stream set folder or its ``manifest.jsonl`` (``amemops.stream`` records) | amemops | dataset |
| ``amemops_eval/NAME/`` (``manifest.json`` job ``amemops_eval``) | amemops | run |
| a ``memgym findings`` folder (``findings.json``), or a folder with ``findings/findings.json`` (quickstart) | findings | findings |

A run folder is recognised by its ``manifest.json`` (:class:`~memgym.core.results.RunStore`), whose
``job`` names the benchmark through the registry (:func:`~memgym.core.benchmark.benchmark_of_job`;
a benchmark with one store per memory is viewed from the folder above the store); a dataset by the
record kind on the first line of its JSONL. Anything else is a
:class:`~memgym.core.errors.MemgymError` naming the path and what was expected.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from memgym.core.benchmark import benchmark_info, benchmark_of_job
from memgym.core.dataset_kinds import RECORD_BENCHMARKS, first_record_kind
from memgym.core.errors import MemgymError
from memgym.core.results import read_manifest

EXPECTED = (
    "expected a DialogMem episodes JSONL, a VoxMem or AMemOps dataset folder (or its manifest.jsonl), "
    "an eval run folder (eval-dialogmem/NAME, eval-voxmem/NAME, amemops_eval/NAME), "
    "or a findings folder (findings.json)"
)


@dataclasses.dataclass(frozen=True)
class Target:
    """A viewable path.

    Attributes:
        benchmark: a registered benchmark (``dialogmem``, ``amemops``, ``voxmem``, ...) or ``findings``.
        kind: ``dataset`` (episodes / stream set), ``run`` (an eval run folder) or ``findings``.
        path: the episodes JSONL (DialogMem dataset) or the folder (every other case).
    """

    benchmark: str
    kind: Literal["dataset", "run", "findings"]
    path: Path


def detect(path: str | Path) -> Target:
    """Classify ``path`` (table in the module docstring).

    Raises:
        MemgymError: the path does not exist or holds none of the viewable layouts.
    """
    path = Path(path)
    if not path.exists():
        raise MemgymError(f"{path} does not exist; {EXPECTED}")
    if path.is_file():
        if path.name == "findings.json":
            return Target("findings", "findings", path.parent)
        if path.name in ("results.jsonl", "manifest.json") and (path.parent / "manifest.json").is_file():
            return detect(path.parent)
        benchmark = _record_benchmark(path)
        return Target(benchmark, "dataset", path if benchmark_info(benchmark).dataset_file else path.parent)
    for folder in (path, path / "findings"):
        if (folder / "findings.json").is_file():
            return Target("findings", "findings", folder)
    if (path / "manifest.json").is_file():
        job = read_manifest(path / "manifest.json").get("job")
        benchmark = benchmark_of_job(str(job))
        if benchmark is None:
            raise MemgymError(f"{path}: a run folder of job {job!r}, which has no viewer; {EXPECTED}")
        if benchmark_info(benchmark).stores_per_memory:  # one memory's store: view the whole run
            return Target(benchmark, "run", path.parent)
        return Target(benchmark, "run", path)
    stores = memory_store_folders(path)
    if stores:
        return Target(stores[0][1], "run", path)
    if (path / "manifest.jsonl").is_file():
        benchmark = _record_benchmark(path / "manifest.jsonl")
        if not benchmark_info(benchmark).dataset_file:
            return Target(benchmark, "dataset", path)
    raise MemgymError(f"{path}: nothing to view; {EXPECTED}")


def memory_store_folders(run: Path) -> list[tuple[Path, str]]:
    """``(folder, benchmark)`` of the memory stores of an evaluation run folder (sub-folders whose
    manifest's job is that of a benchmark with one store per memory), sorted."""
    found = []
    for child in sorted(p for p in run.iterdir() if p.is_dir()):
        manifest = child / "manifest.json"
        if not manifest.is_file():
            continue
        benchmark = benchmark_of_job(str(read_manifest(manifest).get("job")))
        if benchmark is not None and benchmark_info(benchmark).stores_per_memory:
            found.append((child, benchmark))
    return found


def _record_benchmark(path: Path) -> str:
    """The benchmark of the records in the JSONL ``path`` (read from its first line)."""
    benchmark = RECORD_BENCHMARKS.get(first_record_kind(path) or "")
    if benchmark is None:
        raise MemgymError(f"{path}: its first line is not a DialogMem, VoxMem or AMemOps record; {EXPECTED}")
    return benchmark
