"""Navigation measures on a scene: geodesic success to an object's location on the navigation mesh.

DialogMem's rule (the paper's geodesic success): a predicted location succeeds when it lies within
``success_distance`` (1.0 m) geodesic distance of the object's ground-truth location, both snapped
onto the navigable floor. The object's location is its annotated centre (``SceneObject.position``);
it is snapped to (:func:`object_goal_points`):

* the nearest navigable point (:meth:`NavGrid.snap`, within ``snap_distance`` horizontally), as a
  predicted point is snapped -- so predicting the exact centre always succeeds; and
* where that point is not the right one to stand at -- on another island than the object's view
  points, or not seeing the object (behind a wall) -- also the nearest navigable cell centre on the
  view points' island from which a straight line at eye height reaches the object (its centre or
  the top of its box) before anything else.

The distance is the smaller of the two. Without the second point, a picture frame whose nearest
floor cell lies behind its wall, or an object beside a closed-off pocket of floor, could be reached
only by predicting that other room or pocket.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.objects import SceneObject

EYE_HEIGHT = 1.25
"""Height (m) above the floor of the line of sight that decides whether a floor point sees an object."""


def object_goal_points(scene: MeshScene, target: SceneObject, eye_height: float = EYE_HEIGHT) -> np.ndarray:
    """``(G, 3)`` (G = 0, 1 or 2) navigable points standing for ``target``'s location (module docstring)."""
    nav = scene.navgrid
    island = _view_island(scene, target)
    plain = nav.snap(np.asarray(target.position, float))
    if plain is not None and nav.island_of(plain) == island and _sees(scene, plain[None], target, eye_height)[0]:
        return plain[None]
    seeing = _nearest_seeing_point(scene, target, island, eye_height)
    points = [p for p in (plain, seeing) if p is not None]
    return np.asarray(points, float).reshape(-1, 3)


def _view_island(scene: MeshScene, target: SceneObject) -> int:
    """Island label of the object's view points (the most common; the largest island if none)."""
    nav = scene.navgrid
    labels = [nav.island_of(v.position) for v in target.view_points]
    labels = [label for label in labels if label > 0]
    if not labels:
        return nav.largest_island
    values, counts = np.unique(labels, return_counts=True)
    return int(values[np.argmax(counts)])


def _sees(scene: MeshScene, floor: np.ndarray, target: SceneObject, eye_height: float) -> np.ndarray:
    """``(N,) bool``: whether a ray from ``eye_height`` above each floor point ``(N, 3)`` reaches
    the object's centre or the top of its box before anything else."""
    eyes = np.asarray(floor, float) + (0.0, eye_height, 0.0)
    centre = np.asarray(target.position, float)
    top = np.array([centre[0], centre[1] + target.size[1] / 2 - 0.02, centre[2]])
    visible = np.zeros(len(eyes), bool)
    for aim in (centre, top):
        rays = np.concatenate([eyes, aim[None] - eyes], axis=1)  # the direction spans the segment: t = 1 at the aim
        clear = scene.cast_depth(rays) >= 1.0 - 1e-4
        visible |= clear | (scene.semantic_of_rays(rays) == target.semantic_id)
    return visible


def _nearest_seeing_point(scene: MeshScene, target: SceneObject, island: int, eye_height: float) -> np.ndarray | None:
    """Nearest navigable cell centre on ``island`` within ``snap_distance`` of the object's centre
    that sees it (:func:`_sees`); None if there is none."""
    floor = scene.navgrid.island_points_near(np.asarray(target.position, float), island)
    if not len(floor):
        return None
    visible = _sees(scene, floor, target, eye_height)
    return floor[int(np.argmax(visible))] if visible.any() else None


def geodesic_success(
    scene: MeshScene, predicted: Sequence[float], target: SceneObject, success_distance: float = 1.0
) -> dict[str, Any]:
    """Score a predicted goal location.

    Returns ``{"success": 0/1, "distance_to_goal": metres (inf if unreachable), "status": ...}``
    where the distance is geodesic from the (snapped) prediction to the nearer of ``target``'s
    goal points (:func:`object_goal_points`); ``status`` is the :class:`GeodesicResult` status
    (``ok``, ``start_off_navmesh`` when the prediction is farther than the snap distance from the
    floor, ``goal_off_navmesh`` for an object with no floor near it, ``unreachable``) or
    ``invalid_prediction`` (not three finite numbers).
    """
    predicted = np.asarray(predicted, float).reshape(-1)
    if predicted.shape != (3,) or not np.all(np.isfinite(predicted)):
        return {"success": 0.0, "distance_to_goal": math.inf, "status": "invalid_prediction"}
    goals = object_goal_points(scene, target)
    if not len(goals):
        return {"success": 0.0, "distance_to_goal": math.inf, "status": "goal_off_navmesh"}
    result = scene.geodesic(predicted, goals)
    success = float(result.status == "ok" and result.distance <= success_distance)
    return {"success": success, "distance_to_goal": float(result.distance), "status": result.status}
