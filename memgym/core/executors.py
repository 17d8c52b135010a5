"""Where a job's items run: in this process (``executor=local``) or on Ray workers (``executor=ray``).

A job hands :func:`run_ordered` its items as ``(key, item)`` pairs (one per episode or result
row, in the job's own order) and a ``setup`` that builds a worker: a callable computing one
item's result, holding what every item needs (models, memories, scorers; built once per worker
process). The results come back **in the order of the items**, whatever order the workers finish
in, and the driver (the process that called :func:`run_ordered`) writes them: workers never write
the run folder, so it is written once, by one process, as with the local executor. Ordered
delivery makes the written file a prefix of the local executor's at every moment; a re-run after
a kill (of the driver, or of the whole cluster) skips what was written and redoes the rest, and
the finished output is the same for any number of workers.

``executor=local`` with ``threads > 1`` (:func:`run_ordered`'s argument; evaluations pass their
HTTP model client's ``concurrency``, :func:`memgym.backends.config.concurrent_items`) plays up to
``threads`` items at once in threads of this process, each thread with a worker of its own built by
``setup``: for workers that spend their time waiting on a model server, so that it has that many
requests to answer side by side. Results are delivered in item order as above (at most
:data:`WINDOW_PER_WORKER` ``x threads`` finished or in flight), so the written files are the same as
with one thread; what the workers share (caches) must be safe to use from several threads.

Ray workers are actors (one CPU each), kept for the driver's later jobs until it exits or calls
:func:`release_workers` (a job's worker is built on an actor with the first item it gets there).
A worker process that dies is restarted and its item sent again (up to :data:`RETRIES` times);
items already delivered are never sent twice. At most ``4 x workers`` items are in flight or
waiting for an earlier one, so a killed driver loses at most that many finished items. ``setup``
and the items are pickled to the workers: module-level functions and classes and plain data
(configs, records). Inputs the workers read (datasets, audio files) must sit at the same path on
every node (a shared filesystem on a cluster).

Config fields: jobs that can run on Ray add :func:`executor_field`, :func:`ray_address_field`,
:func:`workers_field` and :func:`worker_gpus_field` to their config dataclass; none of them enters
config hashes.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED

EXECUTORS = ("local", "ray")
RETRIES = 3
"""Restarts of a dead Ray worker, and re-sends of each of its items, before the job fails."""
WINDOW_PER_WORKER = 4
"""Items in flight or finished but waiting for an earlier item, per worker."""


def executor_field(help: str = "local (this process) or ray (Ray workers; pip install 'memgym[ray]')") -> Any:
    """The ``executor`` config field: ``local`` (this process) or ``ray``."""
    return dataclasses.field(default="local", metadata={"help": help, **NOT_HASHED, **ADDED_FIELD})


def ray_address_field() -> Any:
    """The ``ray_address`` config field: the cluster to join (empty: start a local Ray)."""
    return dataclasses.field(
        default="",
        metadata={"help": "executor=ray: cluster address (auto, host:6379, ray://...); empty: a local Ray",
                  **NOT_HASHED, **ADDED_FIELD},
    )  # fmt: skip


def workers_field() -> Any:
    """The ``workers`` config field: Ray worker processes (0: one per CPU of the cluster)."""
    return dataclasses.field(
        default=0,
        metadata={"help": "executor=ray: worker processes, one CPU each (0: every CPU of the cluster)", "min": 0,
                  **NOT_HASHED, **ADDED_FIELD},
    )  # fmt: skip


def worker_gpus_field() -> Any:
    """The ``worker_gpus`` config field: GPUs each Ray worker holds (Ray sets its ``CUDA_VISIBLE_DEVICES``)."""
    return dataclasses.field(
        default=0.0,
        metadata={"help": "executor=ray: GPUs per worker (1 with device=cuda: a GPU of its own each)", "min": 0,
                  **NOT_HASHED, **ADDED_FIELD},
    )  # fmt: skip


def run_ordered(
    config: Any, setup: Callable[[], Callable[[Any], Any]], items: Sequence[tuple[str, Any]], threads: int = 1
) -> Iterator[tuple[str, Any]]:
    """``(key, worker(item))`` for every ``(key, item)`` of ``items``, in their order (``worker = setup()``).

    Args:
        config: a config with ``executor``, ``ray_address`` and ``workers`` fields (see the module
            docstring); ``executor=local`` runs everything here, in order, with one worker.
        setup: builds a worker (``item -> result``); called once per worker process (lazily,
            with its first item), so its errors reach the driver as they are.
        items: ``(key, item)`` pairs; keys are only passed through.
        threads: ``executor=local``: items played at once, each thread with its own worker
            (module docstring); Ray ignores it.
    Raises:
        ConfigError: an unknown executor.
        ConfigError: ``executor=ray`` without Ray installed (names the extra).
        MemgymError: a Ray worker died more than :data:`RETRIES` times.
    """
    kind = getattr(config, "executor", "local")
    if kind not in EXECUTORS:
        raise ConfigError(f"executor must be one of {list(EXECUTORS)}, got {kind!r}")
    if kind == "local":
        return _run_threads(setup, items, threads) if threads > 1 and len(items) > 1 else _run_local(setup, items)
    options = (getattr(config, "ray_address", ""), getattr(config, "workers", 0), getattr(config, "worker_gpus", 0.0))
    return _run_ray(setup, items, *options)


def _run_local(setup, items) -> Iterator[tuple[str, Any]]:
    if not items:
        return
    worker = setup()
    for key, item in items:
        yield key, worker(item)


def _run_threads(setup, items, threads: int) -> Iterator[tuple[str, Any]]:
    """Items on ``threads`` threads (a worker per thread, built with its first item), results in
    item order; an item's error is raised when its turn comes, after which no new item starts."""
    count = min(threads, len(items))
    local = threading.local()

    def play(item: Any) -> Any:
        worker = getattr(local, "worker", None)
        if worker is None:
            worker = local.worker = setup()
        return worker(item)

    pending: collections.deque[tuple[str, Future]] = collections.deque()
    sent = 0
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="memgym-item") as pool:
        try:
            while pending or sent < len(items):
                while sent < len(items) and len(pending) < WINDOW_PER_WORKER * count:
                    pending.append((items[sent][0], pool.submit(play, items[sent][1])))
                    sent += 1
                key, future = pending.popleft()
                yield key, future.result()
        finally:  # stopped early (an error, a closed generator): items not started never start
            for _, future in pending:
                future.cancel()


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        ConfigError: Ray is not installed (names the ``ray`` extra).
    """
    try:
        import ray
    except ImportError:
        raise ConfigError("executor=ray needs Ray: pip install 'memgym[ray]' (or executor=local)") from None
    return ray


class _Actor:
    """A Ray actor's body: runs items with the worker of the job that sent them, built from the
    job's ``setup`` with its first item (the previous job's worker is dropped first)."""

    def __init__(self) -> None:
        self.job = ""
        self.worker: Callable[[Any], Any] | None = None

    def run(self, job: str, setup: Callable[[], Callable[[Any], Any]], item: Any) -> Any:
        if job != self.job:
            self.job, self.worker = job, None
            self.worker = setup()
        return self.worker(item)


_ACTORS: dict[tuple[str, str, float], list[Any]] = {}
"""Ray actors per (node, job, GPUs per actor) of this driver's Ray connection, kept for its later jobs (so a worker
process imports memgym once, not once per job)."""


def _run_ray(setup, items, address: str, workers: int, gpus: float) -> Iterator[tuple[str, Any]]:
    ray = import_ray()
    if not items:
        return
    started = not ray.is_initialized()
    if started:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        count = min(count, len(items))
        actor = ray.remote(num_cpus=1, num_gpus=gpus, max_restarts=RETRIES, max_task_retries=RETRIES)(_Actor)
        context = ray.get_runtime_context()
        connection = (context.get_node_id(), context.get_job_id())
        for stale in [key for key in _ACTORS if key[:2] != connection]:  # of an earlier Ray session
            del _ACTORS[stale]
        actors = _ACTORS.setdefault((*connection, gpus), [])
        actors.extend(actor.remote() for _ in range(count - len(actors)))
        job = functools.partial(_run_item, uuid.uuid4().hex, ray.put(setup))
        yield from _ordered_results(ray, actors[:count], job, items, WINDOW_PER_WORKER * count)
    finally:
        if started:
            _ACTORS.clear()
            ray.shutdown()


def release_workers() -> None:
    """End the Ray actors this driver keeps between jobs, freeing their CPUs for other drivers."""
    if _ACTORS:
        ray = import_ray()
        for actor in (a for actors in _ACTORS.values() for a in actors):
            ray.kill(actor)
        _ACTORS.clear()


def _run_item(job: str, setup: Any, actor: Any, item: Any) -> Any:
    """Send ``item`` of ``job`` (its ``setup`` in the object store) to ``actor``; a reference to the result."""
    return actor.run.remote(job, setup, item)


def _ordered_results(
    ray, actors: list, send: Callable[[Any, Any], Any], items: Sequence[tuple[str, Any]], window: int
) -> Iterator[tuple[str, Any]]:
    """Send items to idle actors (``send(actor, item)``; never more than ``window`` ahead of the
    next item to deliver) and deliver the results in item order."""
    idle = list(actors)
    in_flight: dict[Any, tuple[int, Any]] = {}
    finished: dict[int, Any] = {}
    sent = delivered = 0
    while delivered < len(items):
        while idle and sent < len(items) and sent - delivered < window:
            actor = idle.pop()
            in_flight[send(actor, items[sent][1])] = (sent, actor)
            sent += 1
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in ready:
            index, actor = in_flight.pop(ref)
            finished[index] = _result(ray, ref, items[index][0])
            idle.append(actor)
        while delivered in finished:
            yield items[delivered][0], finished.pop(delivered)
            delivered += 1


def _result(ray, ref: Any, key: str) -> Any:
    """The value of a finished task; a memgym error raised on the worker is raised as itself."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, MemgymError):
            raise exc.cause from None
        raise
    except ray.exceptions.RayActorError as exc:
        raise MemgymError(
            f"a Ray worker died {RETRIES + 1} times working on item '{key}' ({type(exc).__name__}); "
            "the results written so far are kept: re-run the same command to resume"
        ) from None
