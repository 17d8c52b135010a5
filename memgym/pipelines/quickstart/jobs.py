"""The quickstart's jobs: CLI-level ``memgym JOB BENCHMARK key=value ...`` calls, run in parallel.

A :class:`Job` is what one command line would run (the benchmark's registered job method with a
:class:`~memgym.core.benchmark.JobArgs`), so the quickstart uses the benchmarks exactly as a user
does and every run folder it writes resumes like theirs. :func:`run_jobs` runs them on
``workers`` processes (spawned; each job is deterministic on its own, so the schedule never
changes a result), a job starting once the jobs it comes ``after`` have finished; with one worker
they run here, in order. Each finished job reports its wall time and the CPU time of its process
and of the child processes it waited for.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import resource
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from memgym.core.benchmark import JobArgs
from memgym.core.errors import MemgymError
from memgym.core.outcome import watch_job


@dataclasses.dataclass(frozen=True)
class Job:
    """``memgym JOB BENCHMARK OVERRIDES --runs-dir RUNS_DIR [--out OUT]``.

    Attributes:
        name: unique label printed while it runs (``"amemops train gdn2"``).
        benchmark: registered benchmark name.
        job: ``generate``, ``train``, ``eval`` or ``render``.
        overrides: ``key=value`` config overrides.
        runs_dir: root of its run folders.
        out: ``--out`` of jobs that write one artefact.
        after: names of the jobs that must finish (successfully) first.
    """

    name: str
    benchmark: str
    job: str
    overrides: tuple[str, ...]
    runs_dir: Path
    out: Path | None = None
    after: tuple[str, ...] = ()

    def command(self) -> str:
        """The equivalent command line."""
        out = f" --out {self.out}" if self.out else ""
        keys = " ".join(f"'{o}'" if "[" in o else o for o in self.overrides)
        return f"memgym {self.job} {self.benchmark} {keys} --runs-dir {self.runs_dir}{out}"


@dataclasses.dataclass(frozen=True)
class Done:
    """How a job ended.

    Attributes:
        name: the job's name.
        wall_s: wall-clock seconds it ran.
        cpu_s: CPU seconds (user + system) of its process and the child processes it waited for.
        warnings: ``memgym: warning: ...`` lines (failed or dropped items).
        error: empty on success; the error line (or traceback) otherwise.
    """

    name: str
    wall_s: float
    cpu_s: float
    warnings: tuple[str, ...] = ()
    error: str = ""


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_job(job: Job, progress: bool = False) -> Done:
    """Run one job as the CLI would (in this process); never raises for the job's own errors."""
    from memgym.core.registry import BENCHMARKS

    wall, cpu = time.perf_counter(), _cpu_seconds()
    warnings: tuple[str, ...] = ()
    error = ""
    try:
        with watch_job() as outcome:
            bench = BENCHMARKS.get(job.benchmark)()
            args = JobArgs(overrides=job.overrides, runs_dir=job.runs_dir, out=job.out, progress=progress)
            getattr(bench, job.job)(args)
        warnings = tuple(outcome.finish())
    except MemgymError as exc:
        error = f"memgym: error: {exc}"
    except Exception:  # one job's failure is reported with its section; the others still run
        error = traceback.format_exc()
    return Done(job.name, time.perf_counter() - wall, _cpu_seconds() - cpu, warnings, error)


Events = Callable[[str, Job, Done | None], None]
"""Called with ``("start", job, None)``, ``("done", job, done)``, ``("skip", job, done)``, and
every :data:`HEARTBEAT_S` seconds without news with ``("running", job, None)`` for each running job."""
HEARTBEAT_S = 30.0


class _Schedule:
    """Which jobs may start: those whose prerequisites have all finished, in the given order; a job
    whose prerequisite failed (or was itself not run) is marked not run."""

    def __init__(self, jobs: Sequence[Job], on_event: Events) -> None:
        names = [j.name for j in jobs]
        unknown = [(j.name, a) for j in jobs for a in j.after if a not in names[: names.index(j.name)]]
        if len(set(names)) != len(names) or unknown:
            raise ValueError(f"jobs must have unique names and come after earlier jobs only: {unknown or names}")
        self.pending = list(jobs)
        self.done: dict[str, Done] = {}
        self.on_event = on_event

    def take(self, count: int) -> list[Job]:
        """Up to ``count`` jobs that may start now (removed from the pending ones)."""
        taken: list[Job] = []
        for job in list(self.pending):
            if len(taken) == count or not all(a in self.done for a in job.after):
                continue
            self.pending.remove(job)
            failed = [a for a in job.after if self.done[a].error]
            if failed:  # later jobs after this one see it failed in this same pass (the order is topological)
                self.finish(job, Done(job.name, 0.0, 0.0, error=f"not run: '{failed[0]}' failed"), "skip")
            else:
                taken.append(job)
                self.on_event("start", job, None)
        return taken

    def finish(self, job: Job, done: Done, kind: str = "done") -> None:
        self.done[job.name] = done
        self.on_event(kind, job, done)


def run_jobs(
    jobs: Sequence[Job],
    workers: int,
    on_event: Events,
    *,
    progress: bool = False,
    runner: Callable[[Job, bool], Done] = run_job,
) -> dict[str, Done]:
    """Run ``jobs`` (each after its ``after`` jobs; earlier ones first when several are ready) on
    ``workers`` processes, or here in order when ``workers`` is 1; returns each job's :class:`Done`.
    A job whose prerequisite failed is not run: its ``Done.error`` names the prerequisite.
    ``runner`` runs one job (a module-level function: the workers import it); ``progress`` shows
    progress bars when the jobs run here."""
    schedule = _Schedule(jobs, on_event)
    if workers <= 1:
        while schedule.pending:
            for job in schedule.take(1):
                schedule.finish(job, runner(job, progress))
        return schedule.done
    running: dict[Future, Job] = {}
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        while schedule.pending or running:
            for job in schedule.take(workers - len(running)):
                running[pool.submit(runner, job, False)] = job
            if not running:
                continue
            finished, _ = wait(running, timeout=HEARTBEAT_S, return_when=FIRST_COMPLETED)
            if not finished:
                for job in running.values():
                    on_event("running", job, None)
            for future in finished:
                job = running.pop(future)
                schedule.finish(job, future.result())
    return schedule.done
