"""Agents: a memory (swappable at any time) plus a policy for answering, and the env loop.

An :class:`Agent` feeds every formation observation to its memory and answers use-phase
observations with :meth:`Agent.answer`. :func:`run_episode` steps an env through both phases
and returns the per-item scores.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import gymnasium

from memgym.core.episode import Episode
from memgym.core.protocols import Memory


class Agent(abc.ABC):
    """Holds a :class:`Memory`; ``act(obs, info)`` returns the next action.

    Args:
        memory: the memory used for formation and retrieval. Replace it at any time by
            assigning :attr:`memory` (or calling :meth:`swap_memory`); the next episode's
            ``reset`` then starts the new one empty.
    """

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    @property
    def memory(self) -> Memory:
        """The memory in use."""
        return self._memory

    @memory.setter
    def memory(self, memory: Memory) -> None:
        if not isinstance(memory, Memory):
            raise TypeError(f"an agent's memory must implement memgym Memory, got {type(memory).__name__}")
        self._memory = memory

    def swap_memory(self, memory: Memory) -> Memory:
        """Install ``memory`` and return the previous one."""
        previous = self._memory
        self.memory = memory
        return previous

    def reset(self) -> None:
        """Start of an episode: clears the memory."""
        self._memory.reset()

    def act(self, observation: Any, info: dict[str, Any], formation_action: Any = None) -> Any:
        """Formation: store the observation and return ``formation_action``. Use: answer."""
        if info["phase"] == "formation":
            self._memory.observe(observation)
            return formation_action
        return self.answer(observation, info)

    @abc.abstractmethod
    def answer(self, observation: Any, info: dict[str, Any]) -> Any:
        """The action answering the use-phase item shown in ``observation``."""


@dataclasses.dataclass
class EpisodeResult:
    """Outcome of one episode: per-item scores and the summed reward."""

    episode_id: str
    scores: list[dict[str, Any]]
    total_reward: float
    formation_steps: int


def run_episode(
    env: gymnasium.Env,
    agent: Agent,
    *,
    episode: Episode | None = None,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
) -> EpisodeResult:
    """Step ``env`` through formation and use with ``agent``.

    Works on any :class:`~memgym.envs.two_phase.TwoPhaseEnv` (also wrapped): the formation
    action is the env's canonical one. ``options`` go to ``env.reset`` (with ``episode`` added).
    """
    base = env.unwrapped
    options = dict(options or {}) | ({"episode": episode} if episode is not None else {})
    observation, info = env.reset(seed=seed, options=options or None)
    agent.reset()
    formation_action = base.formation_action()
    total, formation_steps, terminated = 0.0, 0, False
    while not terminated:
        was_formation = info["phase"] == "formation"
        action = agent.act(observation, info, formation_action)
        observation, reward, terminated, truncated, info = env.step(action)
        formation_steps += was_formation
        total += float(reward)
        if truncated:
            break
    return EpisodeResult(base.episode.episode_id, list(base.scores), total, formation_steps)
