"""View points: navigable poses from which an object is visible, nearest moderate distances first."""

from __future__ import annotations

import math

import numpy as np

from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.objects import ViewPoint
from memgym.scenes.poses import heading_to, quat_from_yaw


def compute_view_points(
    scene: MeshScene,
    semantic_id: int,
    aabb: np.ndarray,
    *,
    camera_height: float = 1.25,
    max_view_points: int = 6,
    max_elevation: float = 40.0,
) -> list[ViewPoint]:
    """Poses 0.5-2 m from the object's ``(2, 3)`` bounding box ``aabb`` on the main island.

    A candidate is kept when the object's centre lies within ``max_elevation`` degrees of a level
    camera at ``camera_height`` and a ray from the camera to the box centre or top centre first
    hits an instance with ``semantic_id``. Each pose faces the object.
    """
    nav = scene.navgrid
    lo, hi = np.asarray(aabb[0], float), np.asarray(aabb[1], float)
    center = (lo + hi) / 2
    radius = 0.5 * math.hypot(hi[0] - lo[0], hi[2] - lo[2])
    floor = nav.floor_height
    candidates = []
    for dist in (0.9, 1.4, 0.5, 2.0):
        for k in range(16):
            angle = 2 * math.pi * k / 16
            p = np.array(
                [center[0] + (radius + dist) * math.cos(angle), floor, center[2] + (radius + dist) * math.sin(angle)]
            )
            if nav.is_navigable(p) and nav.island_of(p) == nav.largest_island:
                candidates.append(p)
    targets = np.array([center, [center[0], hi[1] - 0.02, center[2]]], np.float32)
    poses, eyes = [], []
    for p in candidates:
        row, col = nav.cell_of(p)
        base = float(nav.heights[row, col])
        eye = np.array([p[0], base + camera_height, p[2]], np.float32)
        horizontal = math.hypot(center[0] - p[0], center[2] - p[2])
        if math.degrees(math.atan2(abs(eye[1] - center[1]), horizontal)) <= max_elevation:
            poses.append((p, base))
            eyes.append(eye)
    if not poses:
        return []
    # every candidate's two rays in one cast (each ray's hit does not depend on the others)
    origins = np.repeat(np.stack(eyes), len(targets), axis=0)
    rays = np.concatenate([origins, np.tile(targets, (len(eyes), 1)) - origins], axis=1)
    sees = (scene.semantic_of_rays(rays).reshape(len(eyes), len(targets)) == semantic_id).any(axis=1)
    out: list[ViewPoint] = []
    for (p, base), seen in zip(poses, sees):
        if not seen:
            continue
        position = np.array([p[0], base, p[2]])
        yaw = heading_to(position, center)
        out.append(
            ViewPoint(
                position=(round(float(p[0]), 4), round(base, 4), round(float(p[2]), 4)),
                rotation=tuple(float(v) for v in quat_from_yaw(yaw)),
            )
        )
        if len(out) >= max_view_points:
            break
    return out
