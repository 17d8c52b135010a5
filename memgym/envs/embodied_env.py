"""``EmbodiedEnv``: the embodied two-phase environment (base of ``memgym/DialogMem-v0``).

## Description
Formation streams a traversal through a 3D scene (a generated house by default): one posed
RGB-D frame per discrete action of the agent walking to 5-16 goal objects with exploration
detours (:mod:`memgym.datasets.traversal`). Use then asks the episode's task items one per step:
navigation instructions (answer: a goal position) and questions (answer: text).

## Observation space
``spaces.Dict``; the same keys in both phases:

| key        | space                                  | formation                         | use                                 |
| ---------- | -------------------------------------- | --------------------------------- | ----------------------------------- |
| ``rgb``      | ``Box(0, 255, (H, W, 3), uint8)``       | the frame                         | view at the traversal's end pose    |
| ``depth``    | ``Box(0, max_depth, (H, W), float32)``  | z-depth, metres (0 = no hit)      | same, at the end pose               |
| ``semantic`` | ``Box(0, 2**31-1, (H, W), int32)``      | instance ids (only with ``semantic=True``) | same                      |
| ``position`` | ``Box(-1e4, 1e4, (3,), float32)``       | agent base position, metres (Y up) | end pose                           |
| ``rotation`` | ``Box(-1, 1, (4,), float32)``           | quaternion ``(x, y, z, w)``       | end pose                            |
| ``text``     | ``Text(max_text_length)``               | utterance at this frame (subclasses; "" here) | the instruction / question |

## Action space
``Dict({"text": Text(max_text_length), "position": Box(-1e4, 1e4, (3,), float32)})``. Formation
ignores actions. In use, a ``navigation`` item reads ``position`` (the predicted goal location,
metres); every other task reads ``text``.

## Rewards
0 in formation. In use: navigation — geodesic success (1 when the predicted position is within
``success_distance`` metres, geodesically on the navigation grid, of the target object's location,
both snapped onto the grid: :func:`~memgym.tasks.dialogmem.geodesic.geodesic_success`); other tasks — the ``reward`` of the task's scorer: the registered
scorer ``task_scorers`` names for it (default ``{"qa": "exact_match"}``; any scorer of the task,
``memgym list scorers``) or one given as ``scorers`` (:class:`~memgym.envs.two_phase.TwoPhaseEnv`).

## Starting state / episode end / info
See :class:`~memgym.envs.two_phase.TwoPhaseEnv`. ``reset(options={"episode": EmbodiedEpisode})``
plays a stored episode; otherwise one is generated from the env's generator (same seed, same
episode). Info adds ``frame`` (formation frame index), ``segment`` (navigation segment) and, in
use, the item's ``task``.

## Extending (DialogMem)
Subclasses override :meth:`_formation_text` (an utterance attached to a frame),
:meth:`_extra_observation_spaces` / :meth:`_extra_observation` (more observation keys) and
:meth:`_score_item` (more task types), and build richer episodes in :meth:`_generate_episode`.
"""

from __future__ import annotations

import dataclasses
import json
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from memgym.core.config import as_config
from memgym.core.episode import Episode, TaskItem
from memgym.core.errors import MemgymError
from memgym.core.protocols import Scorer
from memgym.core.scoring import ScorerFactory
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED
from memgym.datasets.embodied import EmbodiedEpisode, build_embodied_episode
from memgym.datasets.traversal import TraversalConfig
from memgym.envs.two_phase import TwoPhaseEnv
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.poses import yaw_from_quat
from memgym.scenes.procedural import HouseConfig
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.scenes.topdown import topdown_map
from memgym.sensors.camera import POSITION_LIMIT, CameraConfig, PoseSensor, RGBDCamera
from memgym.sensors.frame_cache import shared_frame_cache
from memgym.tasks.dialogmem.geodesic import geodesic_success

TEXT_CHARSET = frozenset(string.printable)
"""Characters allowed in ``text`` observations and actions."""


@dataclasses.dataclass(frozen=True)
class EmbodiedEnvConfig:
    """Configuration of :class:`EmbodiedEnv` (also accepted as a nested mapping or a YAML file path)."""

    house_seed: int | None = dataclasses.field(
        default=None, metadata={"help": "generated house to use; None draws one per reset"}
    )
    house: HouseConfig = dataclasses.field(default_factory=HouseConfig, metadata={"help": "house generation"})
    traversal: TraversalConfig = dataclasses.field(default_factory=TraversalConfig, metadata={"help": "traversals"})
    camera: CameraConfig = dataclasses.field(default_factory=CameraConfig, metadata={"help": "camera"})
    semantic: bool = dataclasses.field(default=False, metadata={"help": "add the instance-semantic image"})
    num_navigation: int = dataclasses.field(default=3, metadata={"help": "built-in navigation items per episode"})
    num_qa: int = dataclasses.field(default=2, metadata={"help": "built-in first-seen QA items per episode"})
    success_distance: float = dataclasses.field(default=1.0, metadata={"help": "geodesic success radius, m"})
    max_text_length: int = dataclasses.field(default=2048, metadata={"help": "longest text observation/action"})
    task_scorers: dict[str, str] = dataclasses.field(
        default_factory=lambda: {"qa": "exact_match"}, metadata={"help": "task -> registered scorer name"}
    )
    render_batch: int = dataclasses.field(
        default=16,
        metadata={
            "help": "formation frames rendered together in one ray cast (the frame shown and those after it)",
            "min": 1,
            "max": 1024,
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    frame_cache: str = dataclasses.field(
        default="",
        metadata={
            "help": "folder also storing rendered frames for later processes (memgym.sensors.frame_cache); "
            "'' = this process only",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )


class EmbodiedEnv(TwoPhaseEnv):
    """The embodied formation stream and its use phase (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 8}
    config_class: ClassVar[type[EmbodiedEnvConfig]] = EmbodiedEnvConfig
    """What ``config`` is read as (an instance, a nested mapping of its keys or a YAML file path)."""

    def __init__(
        self,
        config: EmbodiedEnvConfig | Mapping[str, Any] | str | Path | None = None,
        render_mode: str | None = None,
        scorers: Mapping[str, Scorer | ScorerFactory] | None = None,
    ) -> None:
        config = as_config(self.config_class, config, where=f"{type(self).__name__} config")
        super().__init__(render_mode=render_mode, task_scorers=config.task_scorers, scorers=scorers)
        self.config = config
        self.camera = RGBDCamera(config.camera)
        self.pose_sensor = PoseSensor()
        text = spaces.Text(config.max_text_length, min_length=0, charset=TEXT_CHARSET)
        camera_space = self.camera.observation_space.spaces
        fields: dict[str, spaces.Space] = {"rgb": camera_space["rgb"], "depth": camera_space["depth"]}
        if config.semantic:
            fields["semantic"] = camera_space["semantic"]
        fields.update(self.pose_sensor.observation_space.spaces)
        fields["text"] = text
        fields.update(self._extra_observation_spaces())
        self.observation_space = spaces.Dict(fields)
        self.action_space = spaces.Dict(
            {
                "text": spaces.Text(config.max_text_length, min_length=0, charset=TEXT_CHARSET),
                "position": spaces.Box(-POSITION_LIMIT, POSITION_LIMIT, (3,), np.float32),
            }
        )
        self.scene: MeshScene | None = None
        self._batch: tuple[int, dict[str, np.ndarray]] | None = None
        self._generated: dict[str, tuple[Episode, dict[str, Any]]] = {}

    # ----- extension points ----------------------------------------------------------------------
    def _extra_observation_spaces(self) -> dict[str, spaces.Space]:
        """More observation keys (subclasses)."""
        return {}

    def _extra_observation(self, step: int | None, item: TaskItem | None) -> dict[str, Any]:
        """Values of the extra keys for formation ``step`` or use ``item``."""
        return {}

    def _formation_text(self, step: int) -> str:
        """Text shown with formation frame ``step`` (an utterance in DialogMem; "" here)."""
        return ""

    def _score_item(self, item: TaskItem, action: Any) -> dict[str, Any]:
        """Score one use-phase answer; navigation by geodesic success, other tasks by scorer."""
        if item.task == "navigation":
            target = self.scene.object(item.answer["object_id"])
            position = action.get("position") if isinstance(action, dict) else action
            score = geodesic_success(self.scene, position, target, self.config.success_distance)
            return {**score, "reward": score["success"]}
        text = action.get("text", "") if isinstance(action, dict) else str(action)
        return self.scorer(item.task).score(item, text)

    # ----- TwoPhaseEnv hooks -------------------------------------------------------------------
    def _build_episode(self, rng: np.random.Generator, options: dict[str, Any]) -> Episode:
        # Generation is deterministic in the generator state, so a reset with the same seed
        # replays the memoised episode and leaves the generator where generating it would.
        key = json.dumps(rng.bit_generator.state, sort_keys=True, default=str)
        if key in self._generated:
            episode, state = self._generated[key]
            rng.bit_generator.state = state
            return episode
        episode = self._generate_episode(rng)
        self._generated[key] = (episode, rng.bit_generator.state)
        if len(self._generated) > 4:
            self._generated.pop(next(iter(self._generated)))
        return episode

    def _generate_episode(self, rng: np.random.Generator) -> Episode:
        """A new episode from ``rng`` (subclasses add dialogue and their own items)."""
        seed = self.config.house_seed
        if seed is None:
            seed = int(rng.integers(0, 2**31 - 1))
        spec = SceneSpec(backend="procedural", seed=seed, options={"house": dataclasses.asdict(self.config.house)})
        return build_embodied_episode(
            f"embodied-{seed}-{int(rng.integers(0, 2**31 - 1))}",
            spec,
            rng,
            traversal=self.config.traversal,
            camera=self.config.camera,
            num_navigation=self.config.num_navigation,
            num_qa=self.config.num_qa,
        )

    def _begin(self, episode: Episode) -> int:
        if not isinstance(episode, EmbodiedEpisode):
            raise MemgymError(f"EmbodiedEnv plays EmbodiedEpisode records, got {type(episode).__name__}")
        self.scene = load_scene(episode.traversal.scene)
        self._frames = episode.traversal.frames
        self._batch = None
        if not self._frames:
            raise MemgymError(f"episode {episode.episode_id}: its traversal has no frames")
        nav = self.scene.navgrid
        for frame in (self._frames[0], self._frames[-1]):
            snapped = nav.snap(frame.position)
            if snapped is None or np.hypot(snapped[0] - frame.position[0], snapped[2] - frame.position[2]) > 0.5:
                raise MemgymError(
                    f"episode {episode.episode_id}: frame {frame.index} at {frame.position} is off the navigable floor "
                    f"of scene {self.scene.scene_id}; was it recorded in another scene or with another agent?"
                )
        return len(self._frames)

    def _formation_observation(self, step: int) -> dict[str, Any]:
        return self._observe(step, self._formation_text(step), None)

    def _use_observation(self, item: TaskItem, index: int) -> dict[str, Any]:
        return self._observe(len(self._frames) - 1, item.prompt, item)

    def _score(self, item: TaskItem, action: Any) -> dict[str, Any]:
        return self._score_item(item, action)

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        frame = self._frames[self._frame_index()]
        info["frame"] = frame.index
        info["segment"] = frame.segment
        return info

    # ----- rendering ---------------------------------------------------------------------------
    def render(self) -> np.ndarray | None:
        """Top-down map: occupancy, labelled objects, the trajectory so far and the current pose."""
        if self.render_mode is None:
            return None
        if self.scene is None:
            raise RuntimeError("call reset() before render()")
        upto = self._frame_index()
        frames = self._frames[: upto + 1]
        positions = np.array([f.position for f in frames], float)
        current = frames[-1]
        goals = [s.goal_object_id for s in self.episode.traversal.segments]
        return topdown_map(
            self.scene,
            trajectory=positions,
            pose=(np.asarray(current.position), yaw_from_quat(np.asarray(current.rotation))),
            highlight=goals,
        )

    # ----- helpers -----------------------------------------------------------------------------
    def _frame_index(self) -> int:
        return self.step_index if self.phase == "formation" else len(self._frames) - 1

    def _observe(self, frame_index: int, text: str, item: TaskItem | None) -> dict[str, Any]:
        frame = self._frames[frame_index]
        position = np.asarray(frame.position, float)
        yaw = yaw_from_quat(np.asarray(frame.rotation))
        images = self._images(frame_index)
        obs: dict[str, Any] = {"rgb": images["rgb"], "depth": images["depth"]}
        if self.config.semantic:
            obs["semantic"] = images["semantic"]
        obs.update(self.pose_sensor.observe(position, yaw))
        obs["text"] = text[: self.config.max_text_length]
        obs.update(self._extra_observation(frame_index if item is None else None, item))
        return obs

    def _images(self, frame_index: int) -> dict[str, np.ndarray]:
        """The camera images of frame ``frame_index`` (fresh arrays): rendered in one cast with the
        frames after it, ``render_batch`` at a time, through the process-wide frame cache (the same
        pixels as rendering the frame alone)."""
        size = self.config.render_batch
        start = frame_index - frame_index % size
        if self._batch is None or self._batch[0] != start:
            frames = self._frames[start : start + size]
            positions = np.array([f.position for f in frames], float)
            yaws = np.array([yaw_from_quat(np.asarray(f.rotation)) for f in frames])
            cache = shared_frame_cache(self.config.frame_cache)
            self._batch = (start, cache.render(self.camera, self.scene, positions, yaws))
        return {key: images[frame_index - start].copy() for key, images in self._batch[1].items()}
