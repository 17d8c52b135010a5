"""The benchmark plug-in the CLI dispatches to.

A benchmark (``amemops``, ``dialogmem``, ``voxmem``) is a :class:`Benchmark` subclass registered
with ``@register_benchmark(name)``. Each CLI job (``memgym generate NAME ...``, ``train``,
``eval``, ``render``) calls the method of the same name; a job the benchmark does not implement
says so and exits non-zero instead of pretending. ``memgym run quickstart`` runs the built-in
benchmarks' sections (:mod:`memgym.pipelines.quickstart`, made of these jobs) and calls
:meth:`Benchmark.quickstart` of every other registered benchmark that implements it, stitching
their sections into one report. ``memgym JOB NAME --help`` prints :meth:`Benchmark.job_help`: the keys of the job's config
dataclasses (:meth:`Benchmark.job_configs`) and the registered names it takes
(:meth:`Benchmark.accepted_names`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memgym.core.config import describe_config
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


@dataclasses.dataclass(frozen=True)
class BenchmarkInfo:
    """What a benchmark declares for the tools that find it by name (the viewer, ``memgym
    findings``, the quickstart and its own evaluation, :mod:`memgym.core.driver`), read without
    importing it: memgym's own are in :data:`memgym.plugin_table.BENCHMARK_INFO` (their classes'
    :attr:`Benchmark.info` reads it there), a plugin's is its class's :attr:`Benchmark.info`.

    Attributes:
        title: its name in reports (``DialogMem``).
        env_id: the Gymnasium id its evaluation plays (``memgym/DialogMem-v0``).
        gives: what its envs give a memory (words of :data:`memgym.core.protocols.READS`); an
            evaluation refuses a memory reading more.
        eval_jobs: the ``job`` of its evaluation run folders (``manifest.json``; the folder under
            ``RUNS/``).
        stores_per_memory: an evaluation run folder holds one run store per memory (DialogMem).
        dataset_file: its dataset is one JSONL file (else a folder with a ``manifest.jsonl``).
        viewer: ``"module:Class"`` of its ``memgym view`` site (built with the target and the
            ``--dataset`` override), or empty.
        findings_rows: ``"module:function"`` giving the tidy rows ``memgym findings`` measures its
            claims on (from every run folder read), or empty.
        report: ``"module:ATTR"`` of the :class:`memgym.pipelines.reporting.RunKind` tabulating its
            evaluation run folders (``memgym report`` and the table ``memgym eval`` ends with), or
            empty (their numeric columns).
        quickstart: ``"module:ATTR"`` of its built-in quickstart section
            (:class:`memgym.pipelines.quickstart.section.Section`), or empty (a plugin implements
            :meth:`Benchmark.quickstart` instead).
    """

    title: str = ""
    env_id: str = ""
    gives: frozenset[str] = frozenset()
    eval_jobs: tuple[str, ...] = ()
    stores_per_memory: bool = False
    dataset_file: bool = False
    viewer: str = ""
    findings_rows: str = ""
    report: str = ""
    quickstart: str = ""


def benchmark_info(name: str) -> BenchmarkInfo:
    """The :class:`BenchmarkInfo` of the registered benchmark ``name`` (memgym's own without
    importing them; a plugin's from its class).

    Raises:
        RegistryError: ``name`` is not a registered benchmark.
    """
    from memgym.core.registry import BENCHMARKS
    from memgym.plugin_table import BENCHMARK_INFO

    if name in BENCHMARK_INFO:
        return BenchmarkInfo(**BENCHMARK_INFO[name])
    return BENCHMARKS.get(name).info


def benchmark_names() -> list[str]:
    """Registered benchmark names: memgym's own in report order, then the others (sorted)."""
    from memgym.core.registry import BENCHMARKS
    from memgym.plugin_table import BENCHMARK_INFO

    return [*BENCHMARK_INFO, *(n for n in BENCHMARKS.names() if n not in BENCHMARK_INFO)]


def benchmark_of_job(job: str) -> str | None:
    """The registered benchmark whose evaluation run folders have ``job`` (memgym's own first), or None."""
    return next((name for name in benchmark_names() if job in benchmark_info(name).eval_jobs), None)


class Benchmark:
    """Base class: override the jobs a benchmark supports and declare its :class:`BenchmarkInfo`."""

    name: str = "benchmark"
    description: str = ""
    info: BenchmarkInfo = BenchmarkInfo()

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
        """Run the benchmark end to end at a small size; write plots under ``report_dir`` (called
        for a benchmark without a built-in quickstart section, e.g. a plugin)."""
        raise self._missing("run quickstart")

    def job_configs(self, job: str) -> dict[str, type]:
        """The config dataclasses whose keys ``memgym JOB NAME key=value ...`` takes, by when they
        apply (``{"": EvalConfig}``; a job with variants adds e.g. ``"intervention=true"``)."""
        return {}

    def accepted_names(self, job: str) -> dict[str, list[str]]:
        """Registered names the job's keys take, by what they are (``{"memories": [...]}``)."""
        return {}

    def job_help(self, job: str) -> str:
        """``--help`` text of ``memgym JOB NAME``: each config key (nested keys dotted) with its
        type, default and help, then the registered names the job takes."""
        if job not in self.implemented_jobs():
            return f"'memgym {job} {self.name}' is not implemented.\n"
        configs = self.job_configs(job)
        if not configs:
            return f"'memgym {job} {self.name}' takes no config keys.\n"
        lines = []
        for when, cls in configs.items():
            condition = f" with {when}" if when else ""
            lines.append(
                f"keys of 'memgym {job} {self.name}'{condition} ({cls.__name__}; key=value, nested keys dotted):"
            )
            rows = describe_config(cls)
            widths = [min(max(len(row[i]) for row in rows), cap) for i, cap in enumerate((60, 24, 24))]
            for key, type_text, default, help_text in rows:
                lines.append(
                    f"  {key:<{widths[0]}}  {type_text:<{widths[1]}}  {default:<{widths[2]}}  {help_text}".rstrip()
                )
            lines.append("")
        for what, names in self.accepted_names(job).items():
            lines.append(f"registered {what} it takes: {', '.join(names) or 'none'}")
        return "\n".join(lines).rstrip() + "\n"

    @classmethod
    def implemented_jobs(cls) -> list[str]:
        """The jobs this benchmark overrides (shown by ``memgym list``)."""
        jobs = [*JOBS, "quickstart"]
        return [job for job in jobs if getattr(cls, job) is not getattr(Benchmark, job)]

    def _missing(self, job: str) -> FeatureUnavailableError:
        return FeatureUnavailableError(f"'memgym {job} {self.name}' is not implemented yet")
