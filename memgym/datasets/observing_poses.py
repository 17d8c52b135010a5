"""Where an object can be observed from: rings of floor points around it from which it fills
enough of the camera's semantic view (:func:`observing_poses`); traversals walk to these poses."""

from __future__ import annotations

import math

import numpy as np

from memgym.scenes.coverage import InstanceCoverage
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.objects import SceneObject
from memgym.scenes.poses import heading_to, quat_from_yaw
from memgym.sensors.camera import RGBDCamera

OBSERVING_DISTANCES = (0.3, 0.6, 1.0, 1.5)
"""Distances (m) beyond an object's footprint radius of the rings of candidate observing poses."""
OBSERVING_DIRECTIONS = 12
"""Candidate poses per ring (evenly spaced directions around the object)."""
OBSERVING_MARGIN = 1.5
"""An observing pose shows the object at this multiple of ``min_coverage`` when faced exactly."""


def observing_poses(
    scene: MeshScene,
    obj: SceneObject,
    sensor: RGBDCamera,
    min_coverage: float,
    coverage: InstanceCoverage | None = None,
) -> np.ndarray:
    """``(P, 3)`` floor points on the main island from which ``obj`` covers at least
    ``min_coverage`` of ``sensor``'s semantic view when faced exactly (level camera at the
    sensor height), in ring order (nearest ring first, directions counter-clockwise from +x).
    The traversal passes ``OBSERVING_MARGIN * min_coverage``; ``coverage`` counts the pixels
    (one for ``sensor.intrinsics`` is made when None)."""
    nav = scene.navgrid
    coverage = coverage or InstanceCoverage(scene, sensor.intrinsics)
    centre = np.asarray(obj.position, float)
    radius = 0.5 * math.hypot(obj.size[0], obj.size[2])
    points = []
    for distance in OBSERVING_DISTANCES:
        for k in range(OBSERVING_DIRECTIONS):
            angle = 2 * math.pi * k / OBSERVING_DIRECTIONS
            point = centre + (radius + distance) * np.array([math.cos(angle), 0.0, math.sin(angle)])
            if not (nav.is_navigable(point) and nav.island_of(point) == nav.largest_island):
                continue
            row, col = nav.cell_of(point)
            point[1] = float(nav.heights[row, col])
            points.append(point)
    if not points:
        return np.zeros((0, 3))
    eyes = np.stack([sensor.camera_position(p) for p in points])
    rotations = np.stack([quat_from_yaw(heading_to(p, centre)) for p in points])
    counts = coverage.counts(eyes, rotations, min_coverage * coverage.size, [obj.semantic_id])
    return np.asarray([p for p, seen in zip(points, counts) if seen], float).reshape(-1, 3)
