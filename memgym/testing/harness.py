"""How the memory contract plays a memory on its benchmark: a :class:`Harness` per benchmark.

A harness knows what an evaluation of its benchmark does with a memory, at the smallest size
that still exercises it: the options memories are built from (:meth:`Harness.options`, what the
eval passes to :meth:`~memgym.core.protocols.Memory.from_options`), two small episodes of its
registered env (:meth:`Harness.episodes`), the env they are played in, the agent the eval wraps
the memory in (:meth:`Harness.agent`) and what the agent needs from ``retrieve``
(:meth:`Harness.evidence_problem`). :func:`harness_for` picks the harness of a memory class
(:meth:`Harness.takes`); the built-in ones are DialogMem's, VoxMem's and AMemOps's, and a
benchmark of a plugin package adds its own with :func:`add_harness`.
"""

from __future__ import annotations

import abc
import functools
import tempfile
from typing import Any

import gymnasium

from memgym.agents.agent import Agent
from memgym.core.episode import Episode
from memgym.core.protocols import Memory


class Harness(abc.ABC):
    """A benchmark as the memory contract plays it (module docstring). Built once per process
    (:func:`harness_for`); its env and episodes are made on first use and then kept."""

    benchmark: str = "benchmark"

    def __init__(self) -> None:
        self._folder: tempfile.TemporaryDirectory | None = None

    @property
    def folder(self) -> str:
        """A scratch folder of this harness (datasets it builds), removed when the process ends."""
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix=f"memgym-contract-{self.benchmark}-")
        return self._folder.name

    @abc.abstractmethod
    def takes(self, cls: type[Memory]) -> bool:
        """Whether an evaluation of this benchmark takes memories of class ``cls``."""

    @abc.abstractmethod
    def options(self, name: str) -> Any:
        """The options an evaluation builds the memory registered as ``name`` from."""

    @abc.abstractmethod
    def env(self, memory: Memory) -> gymnasium.Env:
        """The benchmark's registered env, made as its evaluation makes it for ``memory``."""

    @abc.abstractmethod
    def episodes(self) -> tuple[Episode, Episode]:
        """Two different small episodes of the env (the same two on every call)."""

    @abc.abstractmethod
    def agent(self, memory: Memory) -> Agent:
        """The agent an evaluation answers the use phase with, holding ``memory``."""

    def reset_options(self, episode: Episode) -> dict[str, Any] | None:
        """Extra ``reset`` options an evaluation plays ``episode`` with (default: none)."""
        return None

    def after_formation(self, agent: Agent) -> None:  # noqa: B027 (an optional hook)
        """What an evaluation does with the formed memory before the use phase (default: nothing)."""

    def context(self, episode: Episode) -> dict[str, Any]:
        """What an evaluation binds with ``episode`` (``bind_episode``'s ``context``; default: none)."""
        return {}

    @abc.abstractmethod
    def evidence_problem(self, evidence: Any, memory: Memory) -> str | None:
        """What is wrong with ``evidence`` (one ``retrieve`` reply of ``memory``) for the agent
        that reads it, or None when the agent can use it."""


_HARNESSES: dict[str, type[Harness]] = {}


def add_harness(cls: type[Harness]) -> type[Harness]:
    """Add a benchmark's harness (a class decorator); :func:`harness_for` asks those of plugin
    benchmarks first (the last added first), so one may take memories a built-in one also takes."""
    _HARNESSES[cls.benchmark] = cls
    _harness.cache_clear()
    return cls


BUILTIN = ("amemops", "voxmem", "dialogmem")
"""memgym's benchmarks with a harness, in the order :func:`harness_for` asks them."""


def harness_names() -> list[str]:
    """The benchmarks with a harness, in the order :func:`harness_for` asks them: plugin
    benchmarks' (the last added first), then :data:`BUILTIN`."""
    from memgym.testing import harness_amemops, harness_dialogmem, harness_voxmem  # noqa: F401 (they add theirs)

    return [name for name in reversed(_HARNESSES) if name not in BUILTIN] + list(BUILTIN)


def harness_for(cls: type[Memory]) -> Harness:
    """The harness of the benchmark whose evaluation takes memories of class ``cls``.

    Raises:
        AssertionError: no harness takes it (a memory no benchmark can evaluate).
    """
    for benchmark in harness_names():
        harness = _harness(benchmark)
        if harness.takes(cls):
            return harness
    raise AssertionError(
        f"{cls.__module__}:{cls.__qualname__} (reads {sorted(cls.reads)}) is taken by no benchmark's evaluation: "
        f"a VoxMem memory subclasses memgym.memory.voxmem.base.VoxMemMemory, an AMemOps one "
        f"memgym.memory.recurrent.core_memory.CoreMemory, and a DialogMem one reads no audio"
    )


@functools.cache
def _harness(benchmark: str) -> Harness:
    return _HARNESSES[benchmark]()
