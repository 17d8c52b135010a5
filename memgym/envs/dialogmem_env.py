"""``DialogMemEnv`` (``memgym/DialogMem-v0``): DialogMem's formation stream with dialogue, and its
scored use phase. The manual is the class docstring (:class:`DialogMemEnv`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from memgym.backends.errors import ReasonerError
from memgym.core.episode import Episode, TaskItem
from memgym.core.protocols import Scorer
from memgym.core.registry import register_env
from memgym.core.scoring import ScorerFactory
from memgym.datasets.dialogmem.defaults import default_construction, default_house
from memgym.datasets.dialogmem.episode import ConstructionConfig, build_episode
from memgym.datasets.traversal import generate_traversal, max_traversal_frames
from memgym.envs.embodied_env import EmbodiedEnv, EmbodiedEnvConfig
from memgym.scenes.locomotion import ActionSpec, AgentState, GreedyFollower, apply_action
from memgym.scenes.poses import yaw_from_quat
from memgym.scenes.procedural import HouseConfig, max_house_objects
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.tasks.dialogmem.geodesic import object_goal_points
from memgym.tasks.dialogmem.navigation import NavigationScorer


@dataclasses.dataclass(frozen=True)
class DialogMemEnvConfig(EmbodiedEnvConfig):
    """:class:`EmbodiedEnvConfig` plus dialogue construction and navigation execution; the houses
    and items it generates default to those of ``memgym generate dialogmem``
    (:mod:`memgym.datasets.dialogmem.defaults`: 6-9 rooms with real-house clutter, items drawn among
    the cues that single their target out)."""

    house: HouseConfig = dataclasses.field(
        default_factory=default_house,
        metadata={"help": "house generation (the DialogMem datasets' houses unless set)"},
    )
    construction: ConstructionConfig = dataclasses.field(
        default_factory=default_construction,
        metadata={"help": "residents, dialogue and item construction (the DialogMem datasets' unless set)"},
    )
    execute_navigation: bool = dataclasses.field(
        default=False, metadata={"help": "also roll out a path follower: execution success and SPL"}
    )
    max_execution_steps: int = dataclasses.field(default=600, metadata={"help": "action budget of a rollout"})
    task_scorers: dict[str, str] = dataclasses.field(
        default_factory=lambda: {"qa": "token_f1"}, metadata={"help": "task -> registered scorer name"}
    )


@register_env("dialogmem")
class DialogMemEnv(EmbodiedEnv):
    """The DialogMem environment, ``memgym/DialogMem-v0``.

    ## Description
    A two-phase episode in a 3D house (:class:`~memgym.envs.two_phase.TwoPhaseEnv`). *Formation*
    streams a traversal's posed RGB-D frames (the agent walking to goal objects with detours);
    the residents' utterances spoken at a frame arrive in that frame's ``text`` as
    ``"Speaker: utterance"`` lines (empty when nobody speaks). *Use* then asks the episode's
    navigation instructions and questions, one per step, and scores each answer.

    ## Observation space
    As :class:`~memgym.envs.embodied_env.EmbodiedEnv`: a ``Dict`` with ``rgb`` ``(H, W, 3) uint8``,
    ``depth`` ``(H, W) float32`` metres, ``semantic`` ``(H, W) int32`` instance ids (only with
    ``semantic=True``), ``position`` ``(3,) float32`` metres (Y up), ``rotation`` ``(4,) float32``
    quaternion ``(x, y, z, w)`` and ``text``. In use the images and pose are the traversal's end
    view and ``text`` is the instruction or question.

    ## Action space
    ``Dict({"text": Text, "position": Box((3,), float32)})``. Formation ignores actions
    (:meth:`formation_action` is a canonical one). A ``navigation`` item reads ``position`` (the
    predicted goal location, metres; NaN: the agent cannot localise, a failure); a ``qa`` item
    reads ``text``.

    ## Rewards and scores
    0 in formation. In use, ``info["score"]`` holds the item's metrics and the reward is:

    * ``navigation`` -- geodesic success: the predicted ``position`` lies within
      ``success_distance`` m, geodesically, of the target object's location, both snapped onto
      the navigation grid (:func:`~memgym.tasks.dialogmem.geodesic.object_goal_points`). With
      ``execute_navigation=True`` a greedy path follower also rolls out from the Phase 1 end pose
      to the predicted position: execution success (the rollout ends within the same radius of
      the same location) and SPL.
    * ``qa`` -- the ``text`` answer scored by the registered scorer ``task_scorers.qa`` names
      (default ``token_f1``; any scorer of ``qa`` items, ``memgym list scorers``) or the one given
      for ``qa`` at construction (a scorer or a factory of one: ``memgym eval dialogmem``
      passes ``llm_match`` with its judge, reward LLM-match / 100). A scorer failure (a judge that times out or replies with no
      rating) does not stop the episode: ``info["score"]`` is then ``{"error": message,
      "reward": 0.0}``.

    ## Starting state and options
    ``reset(seed=..., options={"episode": DialogMemEpisode})`` plays a stored episode (as
    ``memgym eval dialogmem`` does); with no episode one is generated from the env's config
    (house, traversal, dialogue, items; the same seed gives the same episode).
    ``options["score_items"]`` (a collection of item ids) scores only those items: the others
    return ``{"skipped": True, "reward": 0.0}`` and their use-phase info says ``scored: False``
    (an evaluation that resumes does not ask the agent for them). :meth:`rewind_use` goes back to
    the first item without replaying formation.

    ## Episode end
    ``terminated`` after the last item's answer; never truncated by the env (``gymnasium.make``
    adds a ``TimeLimit`` of :meth:`episode_step_bound` at the default configuration, 36,285
    steps: it never cuts a generated episode short; a real one takes a few hundred).

    ## Info
    ``phase`` (``"formation"`` / ``"use"``), ``step``, ``episode_id``, ``frame`` and ``segment``
    (the formation frame shown and its navigation segment); in use ``item_id``, ``task`` and,
    with ``score_items``, ``scored``; after an answer, ``score``.

    ## Arguments
    ``config``: a :class:`DialogMemEnvConfig`, a mapping of its keys or a YAML file
    (``house_seed``, ``house``, ``traversal``, ``camera``, ``semantic``, ``construction``,
    ``execute_navigation``, ``task_scorers``, ...); ``render_mode``: ``"rgb_array"`` (a top-down
    map); ``scorers``: task -> a :class:`~memgym.core.protocols.Scorer` or a factory
    ``(ScorerContext) -> Scorer`` (:func:`memgym.core.scoring.judged_scorer`), used instead of the
    ``task_scorers`` name.

    Example (a tiny generated episode; a real one streams a few hundred 256x256 frames)::

        >>> import gymnasium as gym
        >>> import memgym  # registers the memgym/* ids
        >>> config = {"house_seed": 2, "house": {"min_rooms": 3, "max_rooms": 3},
        ...           "traversal": {"min_goals": 2, "max_goals": 2}, "camera": {"width": 16, "height": 12}}
        >>> env = gym.make("memgym/DialogMem-v0", config=config)
        >>> observation, info = env.reset(seed=0)
        >>> info["phase"], observation["rgb"].shape, observation["depth"].dtype
        ('formation', (12, 16, 3), dtype('float32'))
        >>> while info["phase"] == "formation":  # a memory would observe each frame and its text here
        ...     observation, reward, terminated, truncated, info = env.step(env.unwrapped.formation_action())
        >>> info["task"] in ("navigation", "qa"), observation["text"] != ""
        (True, True)
        >>> answer = {"text": "unknown", "position": observation["position"]}
        >>> observation, reward, terminated, truncated, info = env.step(answer)
        >>> "reward" in info["score"], terminated
        (True, False)
        >>> env.close()

    Vectorised with ``gym.make_vec`` (observations batched; ``text`` a tuple per env)::

        >>> vec = gym.make_vec("memgym/DialogMem-v0", num_envs=2, vectorization_mode="sync", config=config)
        >>> observations, infos = vec.reset(seed=[0, 1])
        >>> observations["rgb"].shape, infos["phase"].tolist()
        ((2, 12, 16, 3), ['formation', 'formation'])
        >>> vec.close()
    """

    config_class = DialogMemEnvConfig
    config: DialogMemEnvConfig

    def __init__(
        self,
        config: DialogMemEnvConfig | Mapping[str, Any] | str | Path | None = None,
        render_mode: str | None = None,
        scorers: Mapping[str, Scorer | ScorerFactory] | None = None,
    ) -> None:
        super().__init__(config, render_mode=render_mode, scorers=scorers)
        self._utterances: dict[int, str] = {}

    def _generate_episode(self, rng: np.random.Generator) -> Episode:
        seed = self.config.house_seed
        if seed is None:
            seed = int(rng.integers(0, 2**31 - 1))
        spec = SceneSpec(backend="procedural", seed=seed, options={"house": dataclasses.asdict(self.config.house)})
        scene = load_scene(spec)
        traversal = generate_traversal(scene, spec, rng, self.config.traversal, self.config.camera)
        return build_episode(
            episode_id=f"dialogmem-{seed}-{int(rng.integers(0, 2**31 - 1))}",
            objects=scene.objects,
            traversal=traversal,
            rng=rng,
            config=self.config.construction,
        )

    def episode_step_bound(self) -> int:
        """Formation frames (:func:`~memgym.datasets.traversal.max_traversal_frames`) plus items
        (at most ``navigation_per_object + qa_per_object`` per object of the house,
        :func:`~memgym.scenes.procedural.max_house_objects`): 33,009 + 4 x 819 = 36,285 steps
        with the defaults. It bounds generated episodes; a stored one in a larger scene or
        traversal can be longer."""
        construction = self.config.construction
        per_object = construction.navigation_per_object + construction.qa_per_object
        return max_traversal_frames(self.config.traversal) + per_object * max_house_objects(self.config.house)

    def _begin(self, episode: Episode) -> int:
        steps = super()._begin(episode)
        self._utterances = {}
        for turn in getattr(episode, "dialogue", ()):
            line = f"{turn.spec.speaker}: {turn.text}"
            previous = self._utterances.get(turn.spec.step)
            self._utterances[turn.spec.step] = line if previous is None else f"{previous}\n{line}"
        last = self._frames[-1]
        self._start = AgentState(np.asarray(last.position, float), yaw_from_quat(np.asarray(last.rotation)))
        return steps

    def _formation_text(self, step: int) -> str:
        return self._utterances.get(step, "")

    def _score_item(self, item: TaskItem, action: Any) -> dict[str, Any]:
        if item.task == "navigation":
            return self._score_navigation(item, action)
        try:
            return super()._score_item(item, action)
        except ReasonerError as exc:
            return {"error": str(exc), "reward": 0.0}

    def _score_navigation(self, item: TaskItem, action: Any) -> dict[str, Any]:
        position = action.get("position") if isinstance(action, dict) else action
        scorer = NavigationScorer(self.scene, self._start.position, self.config.success_distance)
        goal = None if position is None else np.asarray(position, float).reshape(-1)
        prediction: Any = goal
        if self.config.execute_navigation and goal is not None and goal.shape == (3,) and np.all(np.isfinite(goal)):
            prediction = {"goal": goal, "path": self.execute(goal)}
        if item.answer.get("object_id"):  # score against the object's location on the navigation mesh
            goals = object_goal_points(self.scene, self.scene.object(item.answer["object_id"]))
            item = dataclasses.replace(item, answer={**item.answer, "goal_points": goals.tolist()})
        row = scorer.score(item, prediction)
        if self.config.execute_navigation and "execution_success" not in row:
            row.update({"execution_success": 0.0, "spl": 0.0})
        return row

    def execute(self, goal: np.ndarray) -> np.ndarray:
        """Roll out the greedy follower from the Phase 1 end pose toward ``goal``.

        The goal is snapped onto the navigation grid; when that point lies on another island
        than the start, the rollout heads for the nearest point of the start's island within the
        snap distance instead (as close as the agent can get).

        Returns:
            ``(K, 3)`` positions after each move (empty when the goal is off the navigation
            grid, out of reach or already reached).
        """
        nav = self.scene.navgrid
        target = nav.snap(goal)
        island = nav.island_of(self._start.position)
        if target is not None and nav.island_of(target) != island:
            near = nav.island_points_near(goal, island)
            target = near[0] if len(near) else None
        if target is None:
            return np.zeros((0, 3))
        spec = ActionSpec(self.config.traversal.forward_step, self.config.traversal.turn_angle)
        follower = GreedyFollower(nav, spec, goal_radius=0.2)
        state, path = self._start, []
        for _ in range(self.config.max_execution_steps):
            action = follower.next_action(state, target[None])
            if action == "stop":
                break
            state, _ = apply_action(nav, state, action, spec)
            if action == "move_forward":
                path.append(state.position)
        return np.asarray(path, float).reshape(-1, 3)
