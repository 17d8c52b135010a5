"""``memgym run quickstart``: the three benchmarks' comparisons at a small size, and the papers'
claims checked against them.

Each built-in section (:mod:`.dialogmem`, :mod:`.voxmem`, :mod:`.amemops`) is a list of CLI-level
jobs (``memgym generate|train|eval BENCHMARK key=value ...``, :mod:`.jobs`) writing resumable run
folders under ``RUNS/quickstart/<benchmark>/``, and a report read from their outputs. The jobs run
side by side on ``workers`` processes (:mod:`.run`); the sections are stitched into
``RUNS/quickstart/report.md``, which ends with ``memgym findings`` over the quickstart's own runs,
labelled with the scale each benchmark ran at. A registered benchmark without a built-in section
runs its own :meth:`~memgym.core.benchmark.Benchmark.quickstart`. A section that fails is reported
(with its error) and the others still run; the command then exits non-zero.
"""

from memgym.pipelines.quickstart.report import findings_section, render_report
from memgym.pipelines.quickstart.run import run_quickstart

__all__ = ["findings_section", "render_report", "run_quickstart"]
