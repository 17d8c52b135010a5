"""The abstract contracts the benchmarks plug into: Memory, Reasoner, Scorer, Scene.

They are abstract base classes (not structural protocols) so that registries can assert a
registered class really implements the contract, and so torch memories can subclass both
``torch.nn.Module`` and :class:`Memory`.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.core.chat import Message
from memgym.core.episode import TaskItem


class Memory(abc.ABC):
    """A pluggable memory: consumes formation observations, answers use-phase queries.

    A memory sees only observations and queries, never the episode's ground truth.
    """

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget everything (start of an episode)."""

    @abc.abstractmethod
    def observe(self, observation: Any) -> None:
        """Consume one formation observation (a frame, a dialogue turn, a session, ...)."""

    @abc.abstractmethod
    def retrieve(self, query: Any) -> Any:
        """Return the evidence this memory selects for ``query`` (its type is memory-specific)."""

    @abc.abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to restore the memory with :meth:`load_state_dict`."""

    @abc.abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> Any:
        """Restore a state produced by :meth:`state_dict`."""


class Reasoner(abc.ABC):
    """Generates text from typed chat messages (LLM, VLM, audio LM, or a structured reasoner)."""

    name: str = "reasoner"

    @abc.abstractmethod
    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        """Reply to ``messages``; deterministic for a pinned model and temperature 0."""


class Scorer(abc.ABC):
    """Scores one prediction against one task item."""

    name: str = "scorer"

    @abc.abstractmethod
    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        """Return metric name -> value (at least one numeric metric)."""


class Scene(abc.ABC):
    """A 3D scene the embodied sensors render and the agent navigates.

    Positions are ``(3,) float`` metres in the Habitat frame (Y up); poses are position plus a
    ``(4,)`` quaternion ``(x, y, z, w)``.
    """

    @abc.abstractmethod
    def render(self, position: np.ndarray, rotation: np.ndarray) -> dict[str, np.ndarray]:
        """``{"rgb": (H, W, 3) uint8, "depth": (H, W) float32 metres, "semantic": (H, W) int32}``."""

    @abc.abstractmethod
    def geodesic_distance(self, start: np.ndarray, goal: np.ndarray) -> float:
        """Shortest navigable path length in metres, ``inf`` if unreachable."""

    @abc.abstractmethod
    def shortest_path(self, start: np.ndarray, goal: np.ndarray) -> np.ndarray:
        """``(K, 3)`` waypoints of a shortest path (empty if unreachable)."""

    @abc.abstractmethod
    def is_navigable(self, position: np.ndarray) -> bool:
        """Whether the agent can stand at ``position``."""

    @property
    @abc.abstractmethod
    def objects(self) -> Sequence[Any]:
        """Annotated objects (id, category, attributes, position, view points)."""
