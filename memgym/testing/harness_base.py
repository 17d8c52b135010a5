"""The :class:`Harness` a benchmark gives the memory contract, and the table of harnesses
(:func:`add_harness`) that :mod:`memgym.testing.harness` picks from (see there)."""

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


HARNESSES: dict[str, type[Harness]] = {}


def add_harness(cls: type[Harness]) -> type[Harness]:
    """Add a benchmark's harness (a class decorator); :func:`harness_for` asks those of plugin
    benchmarks first (the last added first), so one may take memories a built-in one also takes."""
    HARNESSES[cls.benchmark] = cls
    built_harness.cache_clear()
    return cls


@functools.cache
def built_harness(benchmark: str) -> Harness:
    """The harness of ``benchmark`` (an added one), built once per process."""
    return HARNESSES[benchmark]()
