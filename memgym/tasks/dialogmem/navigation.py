"""Navigation metrics against a :class:`~memgym.core.protocols.Scene`'s geodesic distance.

* **geodesic success** -- the predicted goal location lies within :data:`SUCCESS_DISTANCE_M`
  (1.0 m) geodesic distance of the target object's location. The location is scored directly,
  without executing a path.
* **execution success** -- the end of an executed path (a rollout from the Phase 1 end pose)
  lies within the same radius of the same location.
* **SPL** -- success weighted by path efficiency, ``success * d_start / max(d_start, L)``, where
  ``d_start`` is the geodesic distance from the start to the object's location and ``L`` the
  executed path length (Anderson et al. 2018; habitat-lab's ``SPL`` measure).

The object's location is ``answer["goal_points"]`` ``(G, 3)`` when given -- the object's centre
snapped onto the navigation mesh, as :func:`memgym.tasks.dialogmem.geodesic.object_goal_points` computes
it; the distance is to the nearest of them -- and otherwise ``answer["position"]``, its centre,
which a scene that snaps both ends of a geodesic query (``MeshScene``) puts on the floor itself.
Distances are metres; positions are ``(3,) float`` in the scene frame. An unreachable or missing
prediction fails and reports ``distance_to_goal = None``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError
from memgym.core.protocols import Scene, Scorer
from memgym.core.registry import register_scorer
from memgym.core.scoring import ScorerContext

SUCCESS_DISTANCE_M = 1.0
"""Success radius in metres (geodesic)."""


def goal_points(answer: dict[str, Any]) -> np.ndarray:
    """``(G, 3)`` points a navigation answer is scored against: its ``goal_points`` (the object's
    location on the navigation mesh), or its ``position`` (the object's centre) as ``(1, 3)``."""
    points = answer.get("goal_points")
    if points is None or not len(points):
        points = [answer["position"]]
    return np.asarray(points, dtype=np.float64).reshape(-1, 3)


def distance_to_goal(scene: Scene, position: np.ndarray, goals: np.ndarray) -> float:
    """Geodesic distance (m) from ``position`` to the nearest of ``goals`` ``(V, 3)``; inf if none."""
    return min((float(scene.geodesic_distance(np.asarray(position, float), g)) for g in goals), default=math.inf)


def path_length(path: np.ndarray) -> float:
    """Length (m) of a ``(K, 3)`` polyline."""
    path = np.asarray(path, dtype=np.float64).reshape(-1, 3)
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) if len(path) > 1 else 0.0


def spl(success: bool, d_start: float, length: float) -> float:
    """Success weighted by path length: ``success * d_start / max(d_start, length)``."""
    if not success:
        return 0.0
    denominator = max(d_start, length)
    return 1.0 if denominator <= 0 else d_start / denominator


def _position(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    return array if array.shape == (3,) and np.all(np.isfinite(array)) else None


@register_scorer("navigation")
class NavigationScorer(Scorer):
    """Geodesic success, and execution success with SPL when a path is given.

    Args:
        scene: the scene whose geodesic distance is used.
        start_position: the Phase 1 end position (``(3,)``), the start of executed rollouts.
        radius_m: success radius.

    The prediction is ``None`` (no location), a ``(3,)`` goal position, or a mapping with
    ``"goal"`` ``(3,)`` and optionally ``"path"`` ``(K, 3)`` (the executed rollout, starting at
    the start position). ``item.answer`` holds ``"position"`` and optionally ``"goal_points"``
    (see the module docstring).
    """

    name = "navigation"
    tasks = frozenset({"navigation"})

    @classmethod
    def from_context(cls, context: ScorerContext) -> NavigationScorer:
        """Refused: it needs the episode's scene and start pose, which the DialogMem env gives it
        per episode (navigation items are scored by the env's geometry, not by ``task_scorers``)."""
        raise ConfigError("the navigation scorer is built by the DialogMem env per episode (it needs the scene)")

    def __init__(
        self, scene: Scene, start_position: Sequence[float] | None = None, radius_m: float = SUCCESS_DISTANCE_M
    ):
        self.scene = scene
        self.start = None if start_position is None else np.asarray(start_position, dtype=np.float64)
        self.radius_m = radius_m

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        goals = goal_points(item.answer)
        path = None
        if isinstance(prediction, dict):
            path = prediction.get("path")
            prediction = prediction.get("goal")
        goal = _position(prediction)
        distance = distance_to_goal(self.scene, goal, goals) if goal is not None else math.inf
        success = distance <= self.radius_m
        row: dict[str, Any] = {
            "geodesic_success": float(success),
            "distance_to_goal": distance if math.isfinite(distance) else None,
            "reward": float(success),
        }
        if path is not None and self.start is not None:
            row.update(self.execution(np.asarray(path, dtype=np.float64).reshape(-1, 3), goals))
        return row

    def execution(self, path: np.ndarray, goals: np.ndarray) -> dict[str, float]:
        """Execution success and SPL of an executed ``(K, 3)`` path from the start position."""
        d_start = distance_to_goal(self.scene, self.start, goals)
        end = path[-1] if len(path) else self.start
        d_end = distance_to_goal(self.scene, end, goals)
        success = d_end <= self.radius_m
        full = np.vstack([self.start[None], path]) if len(path) else self.start[None]
        return {
            "execution_success": float(success),
            "spl": spl(success, d_start, path_length(full)) if math.isfinite(d_start) else 0.0,
        }
