"""The benchmark plug-in the CLI dispatches to.

A benchmark (``amemops``, ``dialogmem``, ``voxmem``) is a :class:`Benchmark` subclass registered
with ``@register_benchmark(name)``. Each CLI job (``memgym generate NAME ...``, ``train``,
``eval``, ``render``) calls the method of the same name; a job the benchmark does not implement
says so and exits non-zero instead of pretending. ``memgym run quickstart`` calls
:meth:`Benchmark.quickstart` of every registered benchmark and stitches their sections into one
report.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memgym.core.errors import FeatureUnavailableError

JOBS = ("generate", "train", "eval", "render")


@dataclasses.dataclass(frozen=True)
class JobArgs:
    """What the CLI hands a job.

    Attributes:
        overrides: ``key=value`` config overrides, in command-line order.
        config_path: optional YAML file applied before the overrides.
        runs_dir: root folder for run folders (default ``runs/``).
        out: explicit output path, when the job writes one artefact.
        progress: show progress bars.
    """

    overrides: tuple[str, ...] = ()
    config_path: Path | None = None
    runs_dir: Path = Path("runs")
    out: Path | None = None
    progress: bool = True


@dataclasses.dataclass(frozen=True)
class ReportSection:
    """A benchmark's part of the quickstart report.

    Attributes:
        title: section heading.
        markdown: body (tables, notes) in Markdown.
        plots: image files (relative to the report folder) embedded after the body.
    """

    title: str
    markdown: str
    plots: tuple[str, ...] = ()


class Benchmark:
    """Base class: override the jobs a benchmark supports."""

    name: str = "benchmark"
    description: str = ""

    def generate(self, args: JobArgs) -> Path:
        """Build a dataset; returns its folder or file."""
        raise self._missing("generate")

    def train(self, args: JobArgs) -> Path:
        """Train a model; returns its run folder."""
        raise self._missing("train")

    def eval(self, args: JobArgs) -> Path:
        """Evaluate; returns the run folder holding results and tables."""
        raise self._missing("eval")

    def render(self, args: JobArgs) -> Path:
        """Render an episode to an image or video; returns the file."""
        raise self._missing("render")

    def quickstart(self, report_dir: Path, args: JobArgs) -> ReportSection:
        """Run the benchmark end to end at a small size; write plots under ``report_dir``."""
        raise self._missing("run quickstart")

    @classmethod
    def implemented_jobs(cls) -> list[str]:
        """The jobs this benchmark overrides (shown by ``memgym list``)."""
        jobs = [*JOBS, "quickstart"]
        return [job for job in jobs if getattr(cls, job) is not getattr(Benchmark, job)]

    def _missing(self, job: str) -> FeatureUnavailableError:
        return FeatureUnavailableError(f"'memgym {job} {self.name}' is not implemented yet")
