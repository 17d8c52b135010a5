"""Navigation measures on a scene: geodesic success to the nearest view point of an object."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.objects import SceneObject


def goal_positions(target: SceneObject) -> np.ndarray:
    """``(K, 3)`` points success is measured to: the view points, or the object centre if none."""
    if target.view_points:
        return np.array([v.position for v in target.view_points], float)
    return np.array([target.position], float)


def geodesic_success(
    scene: MeshScene, predicted: Sequence[float], target: SceneObject, success_distance: float = 1.0
) -> dict[str, Any]:
    """Score a predicted goal location.

    Returns ``{"success": 0/1, "distance_to_goal": metres (inf if unreachable), "status": ...}``
    where the distance is geodesic from the (snapped) prediction to the nearest view point of
    ``target``; ``status`` is the :class:`GeodesicResult` status (``ok``, ``start_off_navmesh``
    when the prediction is farther than the snap distance from the floor, ``unreachable``).
    """
    predicted = np.asarray(predicted, float).reshape(-1)
    if predicted.shape != (3,) or not np.all(np.isfinite(predicted)):
        return {"success": 0.0, "distance_to_goal": math.inf, "status": "invalid_prediction"}
    result = scene.geodesic(predicted, goal_positions(target))
    success = float(result.status == "ok" and result.distance <= success_distance)
    return {"success": success, "distance_to_goal": float(result.distance), "status": result.status}
