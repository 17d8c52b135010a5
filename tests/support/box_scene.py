"""Hand-built scenes of boxes on a floor for perception and memory tests, and posed views of them.

A box is given by its centre ``(x, y, z)`` and size ``(sx, sy, sz)`` (metres, Habitat frame, Y up)
and carries a semantic instance id; the floor (id 0) is a large square at ``y = 0``.
"""

from __future__ import annotations

import math

import numpy as np

from memgym.scenes.mesh_scene import MeshScene, PerTriangleLookup
from memgym.scenes.poses import heading_to
from memgym.sensors.camera import CameraConfig, PoseSensor, RGBDCamera

_CORNERS = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
_FACES = np.array(
    [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4],
     [1, 5, 7], [1, 7, 3]]
)  # fmt: skip


def box_scene(boxes: list[tuple[tuple[float, float, float], tuple[float, float, float], int]]) -> MeshScene:
    """A floor plus ``boxes`` given as ``(centre, size, semantic id)``."""
    vertices = [np.array([[-20, 0, -20], [20, 0, -20], [20, 0, 20], [-20, 0, 20]], float)]
    triangles = [np.array([[0, 2, 1], [0, 3, 2]])]
    colors, semantic = [[0.6, 0.6, 0.6]] * 2, [0, 0]
    for k, (centre, size, instance) in enumerate(boxes):
        vertices.append(_CORNERS * np.asarray(size) + np.asarray(centre))
        triangles.append(_FACES + 4 + 8 * k)
        colors += [[0.8, 0.2 + 0.1 * k, 0.2]] * 12
        semantic += [instance] * 12
    return MeshScene(
        np.concatenate(vertices), np.concatenate(triangles), PerTriangleLookup(np.array(colors), np.array(semantic)),
        floor_height=0.0, scene_id="boxes",
    )  # fmt: skip


def views_around(
    scene: MeshScene,
    target: tuple[float, float, float],
    radius: float,
    headings: int,
    camera: CameraConfig,
    arc: float = 360.0,
) -> list[dict[str, np.ndarray | str]]:
    """Formation observations from ``headings`` agent positions spread evenly over ``arc`` degrees
    of a circle around ``target``, each facing it (``rgb``, ``depth``, ``semantic``, ``position``,
    ``rotation``, ``text``)."""
    sensor, pose = RGBDCamera(camera), PoseSensor()
    out = []
    for k in range(headings):
        angle = math.radians(arc) * k / headings
        position = np.array([target[0] + radius * math.cos(angle), 0.0, target[2] + radius * math.sin(angle)])
        yaw = heading_to(position, np.asarray(target))
        out.append({**sensor.observe(scene, position, yaw), **pose.observe(position, yaw), "text": ""})
    return out


TABLE_SCENE = [
    ((0.0, 0.3, 0.0), (0.6, 0.6, 0.6), 1),  # two crates 1.2 m apart (0.6 m gap)
    ((1.2, 0.3, 0.0), (0.6, 0.6, 0.6), 2),
    ((0.6, 0.4, -1.6), (1.0, 0.8, 0.6), 4),  # a table with a mug on it
    ((0.6, 0.925, -1.6), (0.25, 0.25, 0.25), 3),
]
"""Boxes ``(centre, size, semantic id)`` of the shared memory-test scene."""
TABLE_LABELS = {1: "crate", 2: "crate", 3: "mug", 4: "table"}
"""Its instance id -> category table."""

TABLE_MEMORY_OPTIONS = {"hfov": 80.0, "stride": 1, "voxel": 0.03, "perception": "exact"}
"""Visual-memory options matching :func:`views_around`'s test camera (80 degrees) at full resolution,
with exact perception (the tests built on it check memory logic against the scene's geometry)."""


def table_memory(name: str, views: list, upto: int | None = None):
    """The registered visual memory ``name`` with the ``gt`` labels of :data:`TABLE_SCENE`, fed ``views[:upto]``."""
    from memgym.core.registry import MEMORIES

    memory = MEMORIES.get(name)(**TABLE_MEMORY_OPTIONS)
    memory.detector.set_labels(TABLE_LABELS)
    for view in views[:upto]:
        memory.observe(view)
    return memory
