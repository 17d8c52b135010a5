"""One evaluation driver for every benchmark (in the spirit of Stable-Baselines3's ``evaluate_policy``).

An evaluation is two parts:

* **its spec**, an :class:`Evaluation` a benchmark writes once: the run's pending work as
  ``(key, item)`` pairs in the order rows are written (:meth:`Evaluation.work`; a key is a result
  row's ``key``), the worker that plays one item (:meth:`Evaluation.setup`: a picklable factory, so
  Ray workers build their own; it holds the benchmark's env from ``gymnasium.make(env_id)``, its
  memory and models, and its proven-equal fast paths: feature caches, batched transcription,
  a frame cache, each checked item by item against the plain path by a test), how items are grouped
  and how many play at once (:meth:`Evaluation.groups`), how a finished item is written
  (:meth:`Evaluation.record`: its row(s) and side files) and the tables written from every row
  (:meth:`Evaluation.write_tables`). The :class:`~memgym.core.benchmark.Benchmark` it belongs to
  declares the rest: its env id, what its envs give a memory, its run-folder job, its viewer, its
  findings rows and its quickstart section.
* **this driver**, :func:`drive`, the same for all: resume (items whose key is done in the
  :class:`~memgym.core.results.RunStore` are skipped; errored ones are redone), the executor
  (``executor=local``, threads for HTTP models, or Ray, :func:`~memgym.core.executors.run_ordered`:
  rows come back in item order, written by this process only), progress, then the tables.

Memory selection is folded once, here (:func:`select_memories`): ``memory=NAME`` is
``memories=[NAME]``, neither gives the benchmark's default list, both (or either beside a
benchmark's own synonym such as AMemOps's ``models=[...]``, interventions included) is a one-line
error, as is a name listed twice; the folded list enters the config's hash exactly as the
explicit list did, so run folders keep their names.
"""

from __future__ import annotations

import abc
import itertools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from memgym.core.errors import ConfigError
from memgym.core.executors import run_ordered
from memgym.core.results import RunStore

BOTH = "give the memories to compare as memories=[...] or one as memory=..., not both"


def select_memories(
    memory: str,
    memories: Sequence[str],
    default: Sequence[str],
    *,
    synonym: tuple[str, Sequence[str], Sequence[str]] | None = None,
    check: Callable[[str], Any] | None = None,
) -> tuple[str, ...]:
    """The memories an evaluation plays: ``(memory,)``, else ``memories``, else ``default``.

    Args:
        synonym: ``(key, value, its default)`` of a benchmark's own key naming the same list
            (AMemOps's ``models``): its value is the list when ``memory``/``memories`` are unset.
        check: called with each name (raises for a memory the benchmark does not take).
    Raises:
        ConfigError: ``memory`` and ``memories`` both set (or either beside a set ``synonym``), or
            a name listed twice.

    >>> select_memories("", (), ("dialogue",))
    ('dialogue',)
    >>> select_memories("oracle", (), ("dialogue",))
    ('oracle',)
    >>> select_memories("", (), (), synonym=("models", ("gdn2",), ("gdn2", "mamba2")))
    ('gdn2',)
    """
    given = [key for key, value in (("memory", memory), ("memories", memories)) if value]
    if synonym is not None and (len(given) == 2 or (given and tuple(synonym[1]) != tuple(synonym[2]))):
        raise ConfigError(f"name what to evaluate once: {synonym[0]}=[...], memories=[...] or memory=NAME")
    if len(given) == 2:
        raise ConfigError(BOTH)
    fallback = tuple(synonym[1]) if synonym is not None else tuple(default)
    names = (memory,) if memory else tuple(memories) or fallback
    if len(set(names)) != len(names):
        key = synonym[0] if synonym is not None and not given else "memories"
        raise ConfigError(f"{key} lists a memory twice: {list(names)}")
    for name in names if check is not None else ():
        check(name)
    return names


class Evaluation(abc.ABC):
    """What :func:`drive` plays for one run store (module docstring).

    Attributes:
        config: the run's config; its ``executor``, ``ray_address``, ``workers`` and
            ``worker_gpus`` choose where items play (:func:`~memgym.core.executors.run_ordered`).
        desc: the progress bar's label.
    """

    desc = "items"
    fast_paths: dict[str, str] = {}
    """The worker's accelerations of the plain loop (one item at a time through the env): name ->
    the test (``tests/...py::test_name``) showing it gives the plain path's rows item by item
    (tests/core/test_driver.py checks that each named test exists)."""

    def __init__(self, config: Any) -> None:
        self.config = config

    @abc.abstractmethod
    def work(self, done: set[str]) -> list[tuple[str, Any]]:
        """The pending ``(key, item)`` pairs, in the order their rows are written (``done``: the
        store's finished keys)."""

    @abc.abstractmethod
    def setup(self) -> Callable[[], Callable[[Any], Any]]:
        """A picklable factory of a worker (``item -> result``), called once per thread or Ray worker."""

    def groups(self, work: list[tuple[str, Any]]) -> Iterable[tuple[list[tuple[str, Any]], int]]:
        """``(items, items played at once)`` in order (default: all of ``work``, one at a time)."""
        return [(work, 1)]

    def record(self, store: RunStore, key: str, result: Any) -> None:
        """Write one finished item (default: ``result`` is its row)."""
        store.append(key, result)

    def write_tables(self, store: RunStore) -> Path | None:
        """Tables and plots from every row of ``store`` (default: none)."""
        return None


def drive(evaluation: Evaluation, store: RunStore, *, progress: bool = True) -> RunStore:
    """Play every pending item of ``evaluation`` into ``store`` (resuming what is there), on the
    config's executor, then write its tables; returns ``store``."""
    work = evaluation.work(store.done_keys())
    setup = evaluation.setup()
    played = itertools.chain.from_iterable(
        run_ordered(evaluation.config, setup, list(items), threads=threads)
        for items, threads in evaluation.groups(work)
        if items
    )
    for key, result in tqdm(played, total=len(work), desc=evaluation.desc, disable=not progress):
        evaluation.record(store, key, result)
    evaluation.write_tables(store)
    return store
