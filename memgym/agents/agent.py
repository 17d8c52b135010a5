"""Agents: a memory (swappable at any time) plus a policy for answering, and the one env loop.

An :class:`Agent` feeds every formation observation to its memory and answers use-phase
observations with :meth:`Agent.answer`. :func:`run_episode` is the loop every evaluation plays
its episodes with: it resets the env, binds the episode to the agent's memory
(:meth:`~memgym.core.protocols.Memory.bind_episode`), plays the formation phase
(:func:`form_episode`), then answers the use phase through ``step`` (:func:`answer_items`), and
returns the per-item answers and scores. An evaluation that forms once and answers with several
memories rewinds the env (``rewind_use``) and calls :func:`answer_items` again.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable
from typing import Any

import gymnasium

from memgym.core.episode import Episode
from memgym.core.errors import MemgymError
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
        self._bound: tuple[Any, dict[str, Any]] | None = None

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

    def bind(self, episode: Any, **context: Any) -> None:
        """The episode about to be played (``context``: benchmark extras such as VoxMem's ``asker``),
        handed to the memory's :meth:`~memgym.core.protocols.Memory.bind_episode` at each :meth:`reset`."""
        self._bound = (episode, context)

    def reset(self) -> None:
        """Start of an episode: clears the memory, then binds it to the bound episode."""
        self._memory.reset()
        if self._bound is not None:
            episode, context = self._bound
            self._memory.bind_episode(episode, **context)

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
class ItemAnswer:
    """One use-phase step: the item, the agent's ``action``, the env's ``score`` (``info["score"]``)
    and ``error`` (the message of an answer error the loop was told to record; the env then got
    the formation action). ``answered`` is False for an item the env does not score
    (``info["scored"]`` False): the agent was not asked."""

    item_id: str
    action: Any
    score: dict[str, Any]
    error: str | None = None
    answered: bool = True


@dataclasses.dataclass
class EpisodeResult:
    """Outcome of one episode: per-item scores, the summed reward, and each use step's answer."""

    episode_id: str
    scores: list[dict[str, Any]]
    total_reward: float
    formation_steps: int
    answers: list[ItemAnswer] = dataclasses.field(default_factory=list)


def form_episode(
    env: gymnasium.Env,
    agent: Agent,
    *,
    episode: Episode | None = None,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
) -> tuple[Any, dict[str, Any], int]:
    """Reset ``env`` (on ``episode``, with the extra reset ``options``), bind the episode it plays
    to ``agent`` (with ``context``), reset the agent and play the formation phase into its memory.

    Returns:
        The first use-phase observation, its info, and the number of formation steps.
    """
    base = env.unwrapped
    reset_options = {**(options or {}), **({"episode": episode} if episode is not None else {})}
    observation, info = env.reset(seed=seed, options=reset_options or None)
    agent.bind(base.episode, **(context or {}))
    agent.reset()
    formation_action = base.formation_action()
    steps = 0
    while info["phase"] == "formation":
        action = agent.act(observation, info, formation_action)
        observation, _, _, _, info = env.step(action)
        steps += 1
    return observation, info, steps


def answer_items(
    env: gymnasium.Env,
    agent: Agent,
    observation: Any,
    info: dict[str, Any],
    answer_errors: tuple[type[BaseException], ...] = (),
) -> tuple[list[ItemAnswer], float]:
    """Answer every use-phase item from ``observation``/``info`` on; an exception of
    ``answer_errors`` raised by an answer is recorded for its item (the env gets the formation
    action) instead of ending the episode. Returns the answers and the summed reward."""
    formation_action = env.unwrapped.formation_action()
    answers: list[ItemAnswer] = []
    total, terminated, truncated = 0.0, info.get("item_id") is None, False
    while not (terminated or truncated):
        item_id, answered = info["item_id"], info.get("scored", True)
        action, error = formation_action, None
        if answered:
            try:
                action = agent.act(observation, info, formation_action)
            except answer_errors as exc:
                action, error = formation_action, str(exc)
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        answers.append(ItemAnswer(item_id, action, dict(info.get("score", {})), error, answered))
    if not terminated:
        base = env.unwrapped
        raise MemgymError(
            f"episode {base.episode.episode_id} was truncated with {len(base.episode.items) - base.item_index} "
            "item(s) unanswered (gymnasium's TimeLimit); make the env with max_episode_steps=-1 to play it whole"
        )
    return answers, total


def run_episode(
    env: gymnasium.Env,
    agent: Agent,
    *,
    answer_errors: tuple[type[BaseException], ...] = (),
    after_formation: Callable[[Agent], None] | None = None,
    **formation: Any,
) -> EpisodeResult:
    """Step ``env`` through formation and use with ``agent``: :func:`form_episode` (``formation``:
    its ``episode``, ``seed``, ``options`` and ``context``), then ``after_formation(agent)``
    (measures of the formed memory), then :func:`answer_items` (with ``answer_errors``).

    Works on any :class:`~memgym.envs.two_phase.TwoPhaseEnv` (also wrapped, e.g. by
    ``gymnasium.make``): the formation action is the env's canonical one.
    """
    observation, info, steps = form_episode(env, agent, **formation)
    if after_formation is not None:
        after_formation(agent)
    answers, total = answer_items(env, agent, observation, info, answer_errors)
    base = env.unwrapped
    return EpisodeResult(base.episode.episode_id, list(base.scores), total, steps, answers)
