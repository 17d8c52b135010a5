"""Open the :class:`~memgym.viewer.site.Site` for a path: the viewer its benchmark declares
(:attr:`~memgym.core.benchmark.BenchmarkInfo.viewer`), imported on use."""

from __future__ import annotations

from pathlib import Path

from memgym.core.benchmark import benchmark_info
from memgym.core.errors import MemgymError
from memgym.core.loading import load_target
from memgym.viewer.detect import detect
from memgym.viewer.site import Site


def open_site(path: str | Path, dataset: str | Path | None = None) -> Site:
    """The viewer data of ``path`` (a dataset or a run folder, see :mod:`memgym.viewer.detect`).

    Args:
        dataset: for a run folder, the dataset it was evaluated on when the path recorded in its
            config does not resolve from here.
    Raises:
        MemgymError: the path is not viewable, a run's dataset is missing, or ``dataset`` is given
            for a path that is not a run.
    """
    target = detect(path)
    override = Path(dataset) if dataset else None
    if override is not None and target.kind != "run":
        raise MemgymError(f"--dataset names a run's dataset, but {path} is a {target.benchmark} dataset, not a run")
    if target.benchmark == "findings":
        from memgym.viewer.findings import FindingsSite

        return FindingsSite(target, open_site)
    viewer = benchmark_info(target.benchmark).viewer  # the benchmark's site, found through the registry
    if not viewer:
        raise MemgymError(f"{path}: benchmark '{target.benchmark}' declares no viewer")
    return load_target(viewer, f"viewer of benchmark '{target.benchmark}'")(target, override)
