"""Traversals: the formation-phase trajectory of an embodied episode, with episodic bookkeeping.

A traversal samples ``min_goals..max_goals`` goal objects and visits them in turn. Each
*navigation segment* first wanders through ``1..max_detours`` random waypoints in random rooms
(exploration, so the route is not a shortest path; at a waypoint the agent may look around
through 360 degrees) and then walks to the nearest *observing pose* of its goal object and turns
to face it. Every discrete action produces one posed frame.

A visited goal must be observed. Observing poses (:func:`observing_poses`) are floor points on
the main island, on rings 0.3-1.5 m around the object's footprint, from which the object covers at
least :data:`OBSERVING_MARGIN` x ``min_coverage`` of the view when faced exactly (the margin
absorbs stopping short and facing within half a turn); only objects with one are drawn as goals.
Facing with discrete turns, or stopping ``goal_radius`` short of the pose, can still leave the
goal under ``min_coverage``: the agent then walks on to within half a step of the pose, and then
to the nearest remaining observing poses (``max_goal_attempts`` walks per goal in all).
``NavigationSegment.observed`` records whether the goal covers ``min_coverage`` of the segment's
last frame.

An object counts as *observed* in a frame when its instance mask covers at least
``min_coverage`` (default 5%, :mod:`memgym.sensors.sightings`) of the image. From the frames the traversal derives, per observed
object, its observation order (rank of its first observation), frequency (number of frames) and
the segments it was observed in — the episodic memory content of DialogMem. Frames store poses,
not pixels: the RGB-D images are rendered again, deterministically, from the scene and the pose.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from tqdm import tqdm

from memgym.core.errors import MemgymError
from memgym.core.records import Record, record
from memgym.datasets.observing_poses import OBSERVING_MARGIN, observing_poses
from memgym.scenes.coverage import InstanceCoverage
from memgym.scenes.locomotion import ActionSpec, AgentState, GreedyFollower, apply_action
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.navigation import NavGrid
from memgym.scenes.objects import SceneObject
from memgym.scenes.poses import quat_from_yaw, yaw_from_quat
from memgym.scenes.spec import SceneSpec
from memgym.sensors.camera import CameraConfig, RGBDCamera
from memgym.sensors.sightings import MIN_SIGHTING_COVERAGE, seen_in_view

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]


@dataclasses.dataclass(frozen=True)
class TraversalConfig:
    """How traversals are sampled."""

    min_goals: int = dataclasses.field(default=5, metadata={"help": "fewest navigation goals", "min": 1})
    max_goals: int = dataclasses.field(default=16, metadata={"help": "most navigation goals", "min": 1})
    max_detours: int = dataclasses.field(default=2, metadata={"help": "most exploration waypoints per segment"})
    look_around_prob: float = dataclasses.field(
        default=0.5, metadata={"help": "chance of a full 360-degree look-around at an exploration waypoint"}
    )
    min_coverage: float = dataclasses.field(
        default=MIN_SIGHTING_COVERAGE, metadata={"help": "mask fraction for 'observed'"}
    )
    goal_radius: float = dataclasses.field(default=0.3, metadata={"help": "arrival distance at a view point, m"})
    max_leg_steps: int = dataclasses.field(default=400, metadata={"help": "action budget per leg"})
    forward_step: float = dataclasses.field(default=0.25, metadata={"help": "move_forward distance, m"})
    turn_angle: float = dataclasses.field(default=30.0, metadata={"help": "turn angle, degrees"})
    max_goal_attempts: int = dataclasses.field(
        default=3, metadata={"help": "walks toward observing poses per goal until the goal covers min_coverage"}
    )
    visibility_width: int = dataclasses.field(
        default=64,
        metadata={
            "help": "width (pixels) of the semantic render that decides 'observed'; 0 = camera width",
            "min": 0,
            "max": 4096,
        },
    )

    def __post_init__(self) -> None:
        if not 1 <= self.min_goals <= self.max_goals:
            raise MemgymError(
                f"traversal config: need 1 <= min_goals <= max_goals, got {self.min_goals}, {self.max_goals}"
            )
        if not 0.0 < self.min_coverage <= 1.0:
            raise MemgymError(f"traversal config: min_coverage must be in (0, 1], got {self.min_coverage}")
        if self.max_goal_attempts < 1:
            raise MemgymError(f"traversal config: max_goal_attempts must be >= 1, got {self.max_goal_attempts}")


@record("embodied.frame")
@dataclasses.dataclass(frozen=True, kw_only=True)
class PosedFrame(Record):
    """One formation step.

    Attributes:
        index: frame number from 0.
        position: agent base position, metres.
        rotation: agent orientation quaternion ``(x, y, z, w)``.
        action: the action that led here (``start`` for frame 0).
        segment: index of the navigation segment it belongs to.
        visible: object id -> mask fraction, for objects covering >= ``min_coverage``.
    """

    index: int
    position: Vec3
    rotation: Quat
    action: str
    segment: int
    visible: dict[str, float] = dataclasses.field(default_factory=dict)


@record("embodied.segment")
@dataclasses.dataclass(frozen=True, kw_only=True)
class NavigationSegment(Record):
    """The walk toward one goal ("go to the sofa").

    Attributes:
        index: segment number from 0.
        goal_object_id: the goal object.
        goal_category: its category.
        start_frame / end_frame: first and last frame of the segment (inclusive).
        detours: the exploration waypoints visited before heading to the goal.
        reached: whether the agent ended within ``goal_radius`` of an observing pose of the goal.
        final_distance: geodesic distance (m) to the nearest observing pose at the end.
        observed: whether the goal covers ``min_coverage`` of the segment's last frame.
    """

    index: int
    goal_object_id: str
    goal_category: str
    start_frame: int
    end_frame: int
    detours: tuple[Vec3, ...] = ()
    reached: bool = True
    final_distance: float = 0.0
    observed: bool = True


@record("embodied.observation")
@dataclasses.dataclass(frozen=True, kw_only=True)
class ObjectObservation(Record):
    """Episodic content of one observed object.

    Attributes:
        object_id / category: the object.
        order: rank of its first observation among observed objects (0 = first seen).
        first_frame / last_frame: first and last frame it was observed in.
        frequency: number of frames it was observed in.
        segments: navigation segments it was observed in (ascending).
        frames: the frames it was observed in.
        max_coverage: largest mask fraction it reached.
    """

    object_id: str
    category: str
    order: int
    first_frame: int
    last_frame: int
    frequency: int
    segments: tuple[int, ...]
    frames: tuple[int, ...]
    max_coverage: float


@record("embodied.traversal")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Traversal(Record):
    """A full formation trajectory and its episodic bookkeeping.

    Attributes:
        scene: the scene walked through.
        camera: the :class:`CameraConfig` values the frames were recorded with.
        frames: one posed frame per action.
        segments: one navigation segment per goal, in order.
        observations: episodic records of the observed objects, in observation order.
    """

    scene: SceneSpec
    camera: dict[str, Any] = dataclasses.field(default_factory=dict)
    frames: tuple[PosedFrame, ...] = ()
    segments: tuple[NavigationSegment, ...] = ()
    observations: tuple[ObjectObservation, ...] = ()

    @property
    def goals(self) -> list[str]:
        """Goal object ids in visiting order."""
        return [s.goal_object_id for s in self.segments]

    def observation(self, object_id: str) -> ObjectObservation | None:
        """Episodic record of ``object_id`` (None if it was never observed)."""
        return next((o for o in self.observations if o.object_id == object_id), None)

    def positions(self) -> np.ndarray:
        """``(T, 3)`` agent positions of all frames."""
        return np.array([f.position for f in self.frames], float).reshape(-1, 3)

    def yaws(self) -> np.ndarray:
        """``(T,)`` agent headings of all frames, radians."""
        return np.array([yaw_from_quat(np.asarray(f.rotation)) for f in self.frames], float)


def max_traversal_frames(config: TraversalConfig) -> int:
    """An upper bound on the frames of any traversal :func:`generate_traversal` records with
    ``config``: the start frame, then per goal (at most ``max_goals``) at most ``max_detours``
    detour legs, each of at most ``max_leg_steps`` actions and one look-around, and at most
    ``max_goal_attempts`` walks, each of at most ``max_leg_steps`` actions and one facing turn
    (33,009 frames with the defaults)."""
    turn = 360 / config.turn_angle
    detours = config.max_detours * (config.max_leg_steps + round(turn))
    visits = config.max_goal_attempts * (config.max_leg_steps + int(turn) + 1)
    return 1 + config.max_goals * (detours + visits)


def episodic_observations(frames: tuple[PosedFrame, ...], scene: MeshScene) -> tuple[ObjectObservation, ...]:
    """Observation order, frequency and segment association of every object seen in ``frames``."""
    seen: dict[str, list[PosedFrame]] = {}
    for frame in frames:
        for object_id in frame.visible:
            seen.setdefault(object_id, []).append(frame)
    ranked = sorted(seen, key=lambda oid: (seen[oid][0].index, -seen[oid][0].visible[oid], oid))
    out = []
    for order, oid in enumerate(ranked):
        fs = seen[oid]
        out.append(
            ObjectObservation(
                object_id=oid,
                category=scene.object(oid).category,
                order=order,
                first_frame=fs[0].index,
                last_frame=fs[-1].index,
                frequency=len(fs),
                segments=tuple(sorted({f.segment for f in fs})),
                frames=tuple(f.index for f in fs),
                max_coverage=max(f.visible[oid] for f in fs),
            )
        )
    return tuple(out)


def visible_objects(semantic: np.ndarray, scene: MeshScene, min_coverage: float) -> dict[str, float]:
    """Object id -> mask fraction of objects covering at least ``min_coverage`` of ``semantic``."""
    counts = np.bincount(semantic.ravel())
    total = semantic.size
    out = {}
    for sid in np.nonzero(seen_in_view(counts, total, min_coverage))[0]:
        obj = scene.object_by_semantic_id(int(sid)) if sid > 0 else None
        if obj is not None:
            out[obj.object_id] = round(float(counts[sid]) / total, 4)
    return out


def generate_traversal(
    scene: MeshScene,
    spec: SceneSpec,
    rng: np.random.Generator,
    config: TraversalConfig | None = None,
    camera: CameraConfig | None = None,
    *,
    progress: bool = False,
) -> Traversal:
    """Sample goals and walk them with exploration detours (see the module docstring)."""
    config = config or TraversalConfig()
    camera = camera or CameraConfig()
    nav = scene.navgrid
    recorder = _Recorder(scene, RGBDCamera(_visibility_camera(camera, config)), config.min_coverage)
    goals, poses = _sample_goals(scene, rng, config, recorder.sensor, recorder.coverage)
    state = AgentState(nav.sample_navigable(rng), float(rng.uniform(-math.pi, math.pi)))
    actions = ActionSpec(config.forward_step, config.turn_angle)
    follower = GreedyFollower(nav, actions, config.goal_radius)
    recorder.add(state, "start", 0)
    segments = []
    bar = tqdm(total=len(goals), desc="traversal", disable=not progress, leave=False)
    for index, goal in enumerate(goals):
        start_frame = len(recorder) if index else 0
        detours = [_random_waypoint(scene, rng) for _ in range(int(rng.integers(1, config.max_detours + 1)))]
        state = _explore(detours, state, rng, recorder, index, config, nav, follower, actions)
        state = _visit(goal, poses[goal.object_id], state, recorder, index, config, nav, follower, actions)
        final = nav.geodesic(state.position, poses[goal.object_id]).distance
        segments.append(
            NavigationSegment(
                index=index,
                goal_object_id=goal.object_id,
                goal_category=goal.category,
                start_frame=start_frame,
                end_frame=len(recorder) - 1,
                detours=tuple(_vec3(w) for w in detours),
                reached=bool(final <= config.goal_radius + nav.cell),
                final_distance=round(float(final), 4),
                observed=goal.object_id in recorder.frames[-1].visible,
            )
        )
        bar.update()
    bar.close()
    frames = tuple(recorder.frames)
    return Traversal(
        scene=spec,
        camera=dataclasses.asdict(camera),
        frames=frames,
        segments=tuple(segments),
        observations=episodic_observations(frames, scene),
    )


def _visibility_camera(camera: CameraConfig, config: TraversalConfig) -> CameraConfig:
    """The camera that decides visibility: ``camera`` at ``config.visibility_width`` (same aspect)."""
    if not config.visibility_width or config.visibility_width == camera.width:
        return camera
    scale = config.visibility_width / camera.width
    return dataclasses.replace(camera, width=config.visibility_width, height=max(1, round(camera.height * scale)))


def _explore(
    detours: list[np.ndarray],
    state: AgentState,
    rng: np.random.Generator,
    recorder: _Recorder,
    index: int,
    config: TraversalConfig,
    nav: NavGrid,
    follower: GreedyFollower,
    actions: ActionSpec,
) -> AgentState:
    """Walk through the ``detours`` waypoints ``(3,)`` of segment ``index``, looking around (a full
    turn, either way) at each with probability ``look_around_prob``; returns the final state."""
    for waypoint in detours:
        state = _walk(nav, follower, actions, state, waypoint[None], recorder, index, config.max_leg_steps)
        if rng.uniform() < config.look_around_prob:
            turn = "turn_left" if rng.uniform() < 0.5 else "turn_right"
            for _ in range(round(360 / config.turn_angle)):
                state, _ = apply_action(nav, state, turn, actions)
                recorder.add(state, turn, index)
    return state


def _sample_goals(
    scene: MeshScene, rng: np.random.Generator, config: TraversalConfig, sensor: RGBDCamera, coverage: InstanceCoverage
) -> tuple[list[SceneObject], dict[str, np.ndarray]]:
    """Goals in visiting order and their observing poses: objects in a random order, keeping those
    with an observing pose until ``n_goals`` (drawn from ``min_goals..max_goals``) are found."""
    nav = scene.navgrid
    candidates = [
        o for o in scene.objects if any(nav.island_of(v.position) == nav.largest_island for v in o.view_points)
    ]
    n_goals = int(rng.integers(config.min_goals, config.max_goals + 1))
    goals, poses = [], {}
    for i in rng.permutation(len(candidates)):
        obj = candidates[int(i)]
        points = observing_poses(scene, obj, sensor, OBSERVING_MARGIN * config.min_coverage, coverage)
        if len(points):
            goals.append(obj)
            poses[obj.object_id] = points
            if len(goals) == n_goals:
                break
    if len(goals) < config.min_goals:
        raise MemgymError(
            f"scene {scene.scene_id} has {len(goals)} objects that can be observed (mask >= {config.min_coverage:g} "
            f"of a view) from its main navigable island; a traversal needs {config.min_goals}"
        )
    return goals, poses


def _visit(goal, poses, state, recorder, segment, config, nav, follower, actions) -> AgentState:
    """Walk to the nearest observing pose and face the goal. While the goal covers less than
    ``min_coverage`` of the last frame: first walk on to within half a step of the same pose (the
    follower stops ``goal_radius`` short), then drop the poses near where the agent stands and go
    on to the nearest remaining one (``max_goal_attempts`` walks in all)."""
    close = GreedyFollower(nav, actions, min(config.goal_radius, config.forward_step / 2))
    remaining = poses
    for attempt in range(config.max_goal_attempts):
        walker = follower if attempt == 0 else close
        state = _walk(nav, walker, actions, state, remaining, recorder, segment, config.max_leg_steps)
        for _ in range(int(360 / config.turn_angle) + 1):
            action = follower.face(state, np.asarray(goal.position))
            if action == "stop":
                break
            state, _ = apply_action(nav, state, action, actions)
            recorder.add(state, action, segment)
        if goal.object_id in recorder.frames[-1].visible:
            break
        if attempt == 0:
            continue
        keep = np.hypot(remaining[:, 0] - state.position[0], remaining[:, 2] - state.position[2]) > config.goal_radius
        keep[max(nav.geodesic(state.position, remaining).goal_index, 0)] = False  # the pose just tried
        remaining = remaining[keep]
        if not len(remaining):
            break
    return state


class _Recorder:
    """Collects one :class:`PosedFrame` per pose, with the objects covering ``min_coverage`` of
    ``sensor``'s semantic view; the poses since the last look at :attr:`frames` are counted in one
    batch (:class:`InstanceCoverage`)."""

    BATCH = 256
    """Most poses counted in one batch."""

    def __init__(self, scene: MeshScene, sensor: RGBDCamera, min_coverage: float) -> None:
        self.scene, self.sensor, self.min_coverage = scene, sensor, min_coverage
        self.coverage = InstanceCoverage(scene, sensor.intrinsics)
        self.object_ids = sorted({o.semantic_id for o in scene.objects if o.semantic_id > 0})
        self._frames: list[PosedFrame] = []
        self._pending: list[tuple[AgentState, str, int]] = []

    def __len__(self) -> int:
        return len(self._frames) + len(self._pending)

    def add(self, state: AgentState, action: str, segment: int) -> None:
        self._pending.append((state, action, segment))
        if len(self._pending) >= self.BATCH:
            self._flush()

    @property
    def frames(self) -> list[PosedFrame]:
        """Every frame so far."""
        self._flush()
        return self._frames

    def _flush(self) -> None:
        if not self._pending:
            return
        # visibility is counted at the poses as stored (rounded), so a memory replaying the episode
        # renders exactly the views the annotation counted
        positions = [_vec3(state.position) for state, _, _ in self._pending]
        rotations = np.round(np.stack([quat_from_yaw(state.yaw) for state, _, _ in self._pending]), 6)
        views = np.stack([quat_from_yaw(yaw_from_quat(q)) for q in rotations])  # as the env renders them
        eyes = np.stack([self.sensor.camera_position(np.asarray(p)) for p in positions])
        size = self.coverage.size
        counts = self.coverage.counts(eyes, views, self.min_coverage * size, self.object_ids)
        for (_, action, segment), position, rotation, seen in zip(self._pending, positions, rotations, counts):
            self._frames.append(
                PosedFrame(
                    index=len(self._frames),
                    position=position,
                    rotation=tuple(float(v) for v in rotation),
                    action=action,
                    segment=segment,
                    visible={
                        self.scene.object_by_semantic_id(i).object_id: round(c / size, 4) for i, c in seen.items()
                    },
                )
            )
        self._pending = []


def _walk(nav, follower, actions, state, goals, recorder, segment, budget) -> AgentState:
    last_positions: list[np.ndarray] = []
    for _ in range(budget):
        action = follower.next_action(state, goals)
        if action == "stop":
            break
        state, _ = apply_action(nav, state, action, actions)
        recorder.add(state, action, segment)
        if action == "move_forward":
            last_positions.append(state.position)
            if len(last_positions) > 6 and np.linalg.norm(last_positions[-1] - last_positions[-7]) < 0.05:
                break  # stuck against geometry: give up this leg
    return state


def _random_waypoint(scene: MeshScene, rng: np.random.Generator) -> np.ndarray:
    nav = scene.navgrid
    if scene.regions:
        region = scene.regions[int(rng.integers(len(scene.regions)))]
        x0, z0, x1, z1 = region.bounds
        r0, c0 = nav.cell_of((x0, 0, z0))
        r1, c1 = nav.cell_of((x1, 0, z1))
        window = nav.islands[r0 : r1 + 1, c0 : c1 + 1] == nav.largest_island
        cells = np.argwhere(window)
        if len(cells):
            r, c = cells[rng.integers(len(cells))]
            return nav.cell_center(int(r + r0), int(c + c0))
    return nav.sample_navigable(rng)


def _vec3(v) -> Vec3:
    return (round(float(v[0]), 4), round(float(v[1]), 4), round(float(v[2]), 4))


def iter_frame_observations(
    traversal: Traversal, scene: MeshScene, camera: CameraConfig | None = None
) -> Iterator[tuple[PosedFrame, dict[str, np.ndarray]]]:
    """Re-render every frame (16 to a ray cast): yields ``(frame, {"rgb", "depth", "semantic"})``."""
    camera = camera or (CameraConfig(**traversal.camera) if traversal.camera else CameraConfig())
    yield from zip(traversal.frames, RGBDCamera(camera).iter_frames(scene, traversal.positions(), traversal.yaws()))
