"""Triangle soups with per-triangle colour and semantic id, built from convex primitives.

A :class:`TriangleSoup` is the geometry the ray-casting renderer consumes: ``vertices``
``(N, 3) float32`` metres (Habitat frame, Y up), ``triangles`` ``(M, 3) int32`` vertex indices
wound counter-clockwise seen from outside, ``colors`` ``(M, 3) float32`` albedo in ``[0, 1]``
and ``semantic`` ``(M,) int32`` instance ids (0 = unannotated). Primitives are unit
meshes from ``trimesh.creation`` (built once), scaled and placed with a yaw about the vertical axis.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np
import trimesh


@dataclasses.dataclass
class TriangleSoup:
    """Geometry with per-triangle albedo and instance id (see the module docstring)."""

    vertices: np.ndarray
    triangles: np.ndarray
    colors: np.ndarray
    semantic: np.ndarray

    @staticmethod
    def empty() -> TriangleSoup:
        """A soup with no triangles."""
        return TriangleSoup(
            np.zeros((0, 3), np.float32),
            np.zeros((0, 3), np.int32),
            np.zeros((0, 3), np.float32),
            np.zeros(0, np.int32),
        )

    @property
    def num_triangles(self) -> int:
        return len(self.triangles)

    @staticmethod
    def concatenate(parts: Sequence[TriangleSoup]) -> TriangleSoup:
        """One soup holding all ``parts`` (vertex indices re-based)."""
        parts = [p for p in parts if p.num_triangles]
        if not parts:
            return TriangleSoup.empty()
        offsets = np.cumsum([0] + [len(p.vertices) for p in parts[:-1]])
        return TriangleSoup(
            np.concatenate([p.vertices for p in parts]).astype(np.float32),
            np.concatenate([p.triangles + o for p, o in zip(parts, offsets)]).astype(np.int32),
            np.concatenate([p.colors for p in parts]).astype(np.float32),
            np.concatenate([p.semantic for p in parts]).astype(np.int32),
        )

    def bounds(self) -> np.ndarray:
        """``(2, 3)`` min and max corner in metres."""
        return np.stack([self.vertices.min(0), self.vertices.max(0)])


@functools.cache
def _template(kind: str, sections: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Unit primitive from ``trimesh.creation`` (built once): ``(vertices, faces)``.

    ``box``: unit cube centred at the origin; ``cylinder``/``cone``: radius 1, height 1 along +Y
    (cylinder centred, cone with its base at y = 0); ``sphere``: unit icosphere.
    """
    if kind == "box":
        mesh = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    elif kind == "cylinder":
        mesh = trimesh.creation.cylinder(radius=1.0, height=1.0, sections=sections)
        mesh.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1.0, 0.0, 0.0]))
    elif kind == "cone":
        mesh = trimesh.creation.cone(radius=1.0, height=1.0, sections=sections)
        mesh.apply_transform(trimesh.transformations.rotation_matrix(-np.pi / 2, [1.0, 0.0, 0.0]))
    else:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    vertices = np.asarray(mesh.vertices, np.float64)
    faces = np.asarray(mesh.faces, np.int32)
    vertices.setflags(write=False)
    faces.setflags(write=False)
    return vertices, faces


def _primitive(kind: str, scale, center, yaw: float, color, semantic_id: int, sections: int = 16) -> TriangleSoup:
    vertices, faces = _template(kind, sections)
    v = vertices * np.asarray(scale, float)
    if yaw:
        c, s = math.cos(yaw), math.sin(yaw)
        v = v @ np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
    v = v + np.asarray(center, float)
    return TriangleSoup(
        v.astype(np.float32),
        faces.copy(),
        np.tile(np.asarray(color, np.float32), (len(faces), 1)),
        np.full(len(faces), semantic_id, np.int32),
    )


def box(
    center: Sequence[float], size: Sequence[float], color: Sequence[float], semantic_id: int, yaw: float = 0.0
) -> TriangleSoup:
    """Box of ``size`` (x, y, z extents, metres) centred at ``center``, rotated ``yaw`` rad about +Y."""
    return _primitive("box", size, center, yaw, color, semantic_id)


def cylinder(
    center: Sequence[float],
    radius: float,
    height: float,
    color: Sequence[float],
    semantic_id: int,
    sections: int = 16,
) -> TriangleSoup:
    """Vertical cylinder centred at ``center`` (axis along +Y)."""
    return _primitive("cylinder", (radius, height, radius), center, 0.0, color, semantic_id, sections)


def cone(
    center: Sequence[float],
    radius: float,
    height: float,
    color: Sequence[float],
    semantic_id: int,
    sections: int = 16,
) -> TriangleSoup:
    """Vertical cone whose base centre is ``center`` and apex points up (+Y)."""
    return _primitive("cone", (radius, height, radius), center, 0.0, color, semantic_id, sections)


def ellipsoid(
    center: Sequence[float], radii: Sequence[float], color: Sequence[float], semantic_id: int
) -> TriangleSoup:
    """Ellipsoid with semi-axes ``radii`` (x, y, z) centred at ``center``."""
    return _primitive("sphere", radii, center, 0.0, color, semantic_id)
