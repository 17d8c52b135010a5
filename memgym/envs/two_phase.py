"""``TwoPhaseEnv``: the Gymnasium shape of every memgym benchmark.

## Description
An episode is *formation*, then *use*. During formation the environment streams observations
(frames, dialogue turns, audio frames, sessions) and ignores the agent's actions; the agent's
memory consumes them. When the stream ends, the phase switches to use: each step presents one
task item (a question, an instruction, a query) and the agent's action is its answer, scored by
the task's scorer.

## Observation space
A ``gymnasium.spaces.Dict`` defined by the concrete env. The same space holds in both phases;
fields that have no content in a phase are zero/empty.

## Action space
Defined by the concrete env: the answer format of its use phase (text, a goal position, class
indices). During formation any element of the action space is accepted and ignored;
:meth:`TwoPhaseEnv.formation_action` returns a canonical one.

## Rewards
0 during formation. In use, the reward of a step is the task score of the answer given
(:meth:`_reward` of the scorer's metrics, e.g. correctness 0/1 or LLM-match / 100).

## Scorers
Each item is scored by the scorer of its task: the registered name its configuration gives
(``task_scorers``: task -> a name of ``memgym list scorers`` whose
:attr:`~memgym.core.protocols.Scorer.tasks` include the task), built on first use with
:meth:`~memgym.core.protocols.Scorer.from_context` from :meth:`TwoPhaseEnv.scorer_context`, or
what the constructor's ``scorers`` give for a task: a :class:`~memgym.core.protocols.Scorer`, or
a factory called with that context (an evaluation's judge-backed scorer,
:func:`memgym.core.scoring.judged_scorer`). Evaluations read the scores from ``info["score"]``;
nothing scores an answer twice.

## Starting state
``reset(seed=..., options={"episode": Episode})`` plays the given episode; without one the env
builds an episode from its own generator (deterministic under ``seed``).
``options["score_items"]`` (a collection of item ids) scores only those items: the others score
``{"skipped": True, "reward": 0.0}`` whatever the action, and their use-phase info says
``scored: False`` (:func:`~memgym.agents.agent.answer_items` does not ask the agent for them).

## Episode end
``terminated`` is True after the last task item has been answered. The env never sets
``truncated``; ``gymnasium.make`` adds a ``TimeLimit`` of the id's registered
``max_episode_steps``, :meth:`TwoPhaseEnv.episode_step_bound` of the default configuration (an
upper bound on the steps of any episode the env generates from it, so it never cuts one short).
An env made with a larger configuration or playing stored episodes that may be longer is made
with ``max_episode_steps=env.unwrapped.episode_step_bound()`` or ``-1`` (no limit; memgym's
evaluations do this).

## Info
``info["phase"]`` is ``"formation"`` or ``"use"``; ``info["step"]`` the index within the phase;
``info["episode_id"]``; in use ``info["item_id"]``, ``info["task"]`` and, with ``score_items``,
``info["scored"]``; after an answer ``info["score"]`` holds the scorer's metrics for that item.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import gymnasium
import numpy as np

from memgym.core.episode import Episode, TaskItem
from memgym.core.errors import MemgymError
from memgym.core.protocols import Scorer
from memgym.core.scoring import ScorerContext, ScorerFactory, build_scorer, scorer_class

Phase = Literal["formation", "use"]


class TwoPhaseEnv(gymnasium.Env, abc.ABC):
    """Base class of memgym's environments: the two phases of the module docstring behind
    Gymnasium's ``reset`` / ``step``.

    The benchmark envs (``memgym/DialogMem-v0``, ``memgym/VoxMem-v0``, ``memgym/AMemOps-v0``,
    registered in :mod:`memgym.envs.registration`) are subclasses. A subclass sets
    ``observation_space`` and ``action_space`` and implements four hooks: :meth:`_build_episode`
    (an episode when ``reset`` is given none), :meth:`_begin` (prepare an episode; return its
    number of formation steps), :meth:`_formation_observation` and :meth:`_use_observation`.
    :meth:`_score` (the metrics of one answer; :meth:`_reward` reads ``"reward"`` from them) scores
    the action with the item's task scorer (:meth:`scorer`); a subclass overrides it to turn its
    actions into the scorer's prediction or to score a task by its own means.

    Args:
        render_mode: ``None`` or ``"rgb_array"`` (envs that draw frames).
        task_scorers: task -> registered scorer name (the subclass's configuration).
        scorers: task -> a :class:`~memgym.core.protocols.Scorer` or a factory
            ``(ScorerContext) -> Scorer``, used instead of the named one.

    Example: formation shows three digits, use asks for one of them (the question is its
    position, 1-3; scored by the env itself); the agent's memory is the list ``seen``:

    >>> import gymnasium
    >>> from gymnasium import spaces
    >>> from memgym.core.episode import Episode, TaskItem
    >>> class DigitsEnv(TwoPhaseEnv):
    ...     observation_space = spaces.Dict({"digit": spaces.Discrete(10), "question": spaces.Discrete(4)})
    ...     action_space = spaces.Discrete(10)
    ...
    ...     def _build_episode(self, rng, options):
    ...         digits = [int(d) for d in rng.integers(0, 10, size=3)]
    ...         item = TaskItem(item_id="q0", task="recall", prompt="2", answer=digits[1])
    ...         return Episode(episode_id="e0", benchmark="demo", items=(item,), annotations={"digits": digits})
    ...
    ...     def _begin(self, episode):
    ...         self.digits = episode.annotations["digits"]
    ...         return len(self.digits)  # formation steps
    ...
    ...     def _formation_observation(self, step):
    ...         return {"digit": self.digits[step], "question": 0}
    ...
    ...     def _use_observation(self, item, index):
    ...         return {"digit": 0, "question": int(item.prompt)}
    ...
    ...     def _score(self, item, action):
    ...         return {"reward": float(action == item.answer)}
    >>> gymnasium.register(id="demo/Digits-v0", entry_point=DigitsEnv)
    >>> env = gymnasium.make("demo/Digits-v0")
    >>> obs, info = env.reset(seed=0)
    >>> seen = []
    >>> while info["phase"] == "formation":  # formation: the memory consumes, actions are ignored
    ...     seen.append(int(obs["digit"]))
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.formation_action())
    >>> len(seen), info["phase"], int(obs["question"])
    (3, 'use', 2)
    >>> obs, reward, terminated, truncated, info = env.step(seen[int(obs["question"]) - 1])  # use: answer
    >>> reward, terminated, info["score"]
    (1.0, True, {'reward': 1.0})

    Vectorised, each copy plays its own episode:

    >>> envs = gymnasium.make_vec("demo/Digits-v0", num_envs=2, vectorization_mode="sync")
    >>> obs, infos = envs.reset(seed=0)
    >>> obs["digit"].shape, list(infos["phase"])
    ((2,), ['formation', 'formation'])
    >>> envs.close()
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        task_scorers: Mapping[str, str] | None = None,
        scorers: Mapping[str, Scorer | ScorerFactory] | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        for task, name in (task_scorers or {}).items():
            scorer_class(name, task, f"task_scorers.{task}")
        for task, given in (scorers or {}).items():
            if isinstance(given, Scorer):
                build_scorer(given, task, ScorerContext(), f"scorers[{task!r}]")
        self._scorer_specs: dict[str, str | Scorer | ScorerFactory] = {**(task_scorers or {}), **(scorers or {})}
        self._scorers: dict[tuple[str, ScorerContext], Scorer] = {}
        self._context = ScorerContext()
        self._episode_scorers: dict[str, Scorer] = {}  # task -> scorer of the current context
        self.episode: Episode | None = None
        self.phase: Phase = "formation"
        self.step_index = 0
        self.item_index = 0
        self.scores: list[dict[str, Any]] = []
        self._score_only: set[str] | None = None

    # ----- hooks -------------------------------------------------------------------------
    @abc.abstractmethod
    def _build_episode(self, rng: np.random.Generator, options: dict[str, Any]) -> Episode:
        """Generate an episode when ``reset`` is given none."""

    @abc.abstractmethod
    def _begin(self, episode: Episode) -> int:
        """Prepare to play ``episode``; return the number of formation steps."""

    @abc.abstractmethod
    def _formation_observation(self, step: int) -> dict[str, Any]:
        """Observation of formation step ``step``."""

    @abc.abstractmethod
    def _use_observation(self, item: TaskItem, index: int) -> dict[str, Any]:
        """Observation presenting task item ``item`` (the ``index``-th)."""

    def _score(self, item: TaskItem, action: Any) -> dict[str, Any]:
        """Score the answer ``action`` to ``item``; returns metric -> value. Default: the item's
        task scorer (:meth:`scorer`) on ``action``."""
        return self.scorer(item.task).score(item, action)

    def scorer_context(self) -> ScorerContext:
        """What the scorers of the current episode are built from (a subclass adds its dataset
        folder), asked once per episode after :meth:`_begin`. Default: an empty context."""
        return ScorerContext()

    def scorer(self, task: str) -> Scorer:
        """The scorer of ``task`` items for the current episode, built on first use (module
        docstring, "Scorers"); one per task and :meth:`scorer_context`.

        Raises:
            MemgymError: the env has no scorer for ``task``.
        """
        scorer = self._episode_scorers.get(task)
        if scorer is not None:
            return scorer
        spec = self._scorer_specs.get(task)
        if spec is None:
            raise MemgymError(f"no scorer for task '{task}'; set task_scorers.{task}=<a scorer of memgym list scorers>")
        key = (task, self._context)
        if key not in self._scorers:
            self._scorers[key] = build_scorer(spec, task, key[1], f"task_scorers.{task}")
        self._episode_scorers[task] = self._scorers[key]
        return self._scorers[key]

    def _reward(self, score: dict[str, Any]) -> float:
        """Reward from a score dict; defaults to ``score["reward"]``."""
        return float(score["reward"])

    def formation_action(self) -> Any:
        """A canonical action to send during formation (it is ignored)."""
        return zero_action(self.action_space)

    def episode_step_bound(self) -> int | None:
        """An upper bound on the steps (formation steps + task items) of every episode this env
        generates from its configuration, or None when it knows none (this base class)."""
        return None

    # ----- gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        only = options.pop("score_items", None)
        self._score_only = None if only is None else set(only)
        episode = options.pop("episode", None)
        if episode is None:
            episode = self._build_episode(self.np_random, options)
        if not isinstance(episode, Episode):
            raise TypeError(f"options['episode'] must be an Episode, got {type(episode).__name__}")
        self.episode = episode
        self.scores = []
        self.item_index = 0
        self.step_index = 0
        self._formation_steps = int(self._begin(episode))
        context = self.scorer_context()
        if context != self._context:
            self._context, self._episode_scorers = context, {}
        if self._formation_steps > 0:
            self.phase = "formation"
            observation = self._formation_observation(0)
        else:
            self.phase = "use"
            observation = self._current_use_observation()
        return observation, self._info()

    def step(self, action: Any):
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.phase == "formation":
            self.step_index += 1
            if self.step_index < self._formation_steps:
                return self._formation_observation(self.step_index), 0.0, False, False, self._info()
            self.phase = "use"
            self.step_index = 0
            return self._current_use_observation(), 0.0, self._done(), False, self._info()
        if self._done():
            raise RuntimeError("episode has terminated; call reset()")
        item = self.episode.items[self.item_index]
        if self._score_only is None or item.item_id in self._score_only:
            score = self._score(item, action)
        else:
            score = {"skipped": True, "reward": 0.0}
        self.scores.append({"item_id": item.item_id, **score})
        reward = self._reward(score)
        self.item_index += 1
        self.step_index += 1
        info = self._info()
        info["score"] = score
        return self._current_use_observation(), reward, self._done(), False, info

    def rewind_use(self, score_items: Iterable[str] | None = None) -> tuple[Any, dict[str, Any]]:
        """Go back to the first use-phase item of the current episode without replaying formation
        (another agent formed from the same stream answers the same items), scoring only
        ``score_items`` (None: every item); returns its observation and info. Scores recorded so
        far are cleared."""
        if self.episode is None or self.phase != "use":
            raise RuntimeError("rewind_use() needs an episode past its formation phase")
        self._score_only = None if score_items is None else set(score_items)
        self.scores, self.item_index, self.step_index = [], 0, 0
        return self._current_use_observation(), self._info()

    # ----- helpers -------------------------------------------------------------------------
    def _done(self) -> bool:
        return self.phase == "use" and self.item_index >= len(self.episode.items)

    def _current_use_observation(self) -> dict[str, Any]:
        items = self.episode.items
        if not items:
            return self._formation_observation(max(self._formation_steps - 1, 0)) if self._formation_steps else {}
        index = min(self.item_index, len(items) - 1)
        return self._use_observation(items[index], index)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "phase": self.phase,
            "step": self.step_index,
            "episode_id": self.episode.episode_id,
        }
        if self.phase == "use" and self.item_index < len(self.episode.items):
            item = self.episode.items[self.item_index]
            info["item_id"] = item.item_id
            info["task"] = item.task
            if self._score_only is not None:  # the loop does not ask for a skipped item
                info["scored"] = item.item_id in self._score_only
        return info


def zero_action(space: gymnasium.Space) -> Any:
    """A deterministic element of ``space`` (zeros, empty text, first choice)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {k: zero_action(s) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(zero_action(s) for s in space.spaces)
    if isinstance(space, spaces.Discrete):
        return int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        return (
            np.asarray(space.start, dtype=space.dtype)
            if hasattr(space, "start")
            else np.zeros(space.shape, space.dtype)
        )
    if isinstance(space, spaces.Text):
        return "" if space.min_length == 0 else space.characters[0] * space.min_length
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high)
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    return space.sample()
