"""Placing catalogue objects in the rooms of a generated house.

Shared by the furnishing of :mod:`memgym.scenes.procedural` and the real-house clutter of
:mod:`memgym.scenes.clutter`. A :class:`Placed` object is a catalogue category instanced as a
world-frame mesh in a room (metres, Y up); ``support`` is the index of the object it stands on.
Footprints are ``(x0, z0, x1, z1)`` rectangles on the floor; a room's ``inner`` rectangle is its
floor inside the walls; ``blocked`` rectangles keep doorways free.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from memgym.scenes.catalog import CATEGORY_BY_NAME, COMPANIONS, Category, build_mesh
from memgym.scenes.floorplan import Room
from memgym.scenes.meshes import TriangleSoup

WALL_YAW = {"z0": 0.0, "z1": math.pi, "x0": math.pi / 2, "x1": -math.pi / 2}
"""Wall side of a room -> yaw (radians) turning an object's front (+Z) away from that wall."""


@dataclasses.dataclass
class Placed:
    """A placed catalogue object (see the module docstring)."""

    category: Category
    mesh: TriangleSoup  # world frame
    yaw: float
    room: Room
    color: str
    material: str
    size_label: str
    support: int | None = None  # index of the supporting object

    @property
    def aabb(self) -> np.ndarray:
        return self.mesh.bounds()


def door_zone(door) -> tuple[float, float, float, float]:
    half, reach = door.width / 2 + 0.3, 1.1
    if door.axis == "x":
        return (door.x - reach, door.z - half, door.x + reach, door.z + half)
    return (door.x - half, door.z - reach, door.x + half, door.z + reach)


def overlaps(a, b, gap: float = 0.0) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def footprint(mesh: TriangleSoup) -> tuple[float, float, float, float]:
    lo, hi = mesh.bounds()
    return (float(lo[0]), float(lo[2]), float(hi[0]), float(hi[2]))


def make(rng, category: Category, yaw: float, center_xz, base_y: float, room: Room, size=None, size_label=None):
    if size is None:
        size, size_label = category.sample_size(rng)
    color = category.colors[int(rng.integers(len(category.colors)))]
    material = category.materials[int(rng.integers(len(category.materials)))]
    local = build_mesh(category, size, color, 0)
    mesh = transform(local, yaw, (center_xz[0], base_y, center_xz[1]))
    return Placed(category, mesh, yaw, room, color, material, size_label)


def transform(mesh: TriangleSoup, yaw: float, offset) -> TriangleSoup:
    c, s = math.cos(yaw), math.sin(yaw)
    rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], np.float32)
    return dataclasses.replace(
        mesh, vertices=(mesh.vertices @ rot.T + np.asarray(offset, np.float32)).astype(np.float32)
    )


def fits(fp, inner, blocked, placed: list[Placed], gap: float) -> bool:
    x0, z0, x1, z1 = inner
    if fp[0] < x0 + 0.01 or fp[1] < z0 + 0.01 or fp[2] > x1 - 0.01 or fp[3] > z1 - 0.01:
        return False
    if any(overlaps(fp, b) for b in blocked):
        return False
    return not any(
        p.support is None and p.category.placement != "hung" and overlaps(fp, footprint(p.mesh), gap) for p in placed
    )


def try_place(rng, category: Category, room: Room, inner, blocked, placed) -> Placed | None:
    x0, z0, x1, z1 = inner
    if category.placement in ("wall", "corner"):
        side = ("z0", "z1", "x0", "x1")[int(rng.integers(4))]
        yaw = WALL_YAW[side]
        item = make(rng, category, yaw, (0.0, 0.0), 0.0, room)
        fx0, fz0, fx1, fz1 = footprint(item.mesh)
        hw, hd = (fx1 - fx0) / 2, (fz1 - fz0) / 2
        if side in ("z0", "z1"):
            lo, hi = x0 + hw + 0.02, x1 - hw - 0.02
            along = (lo if rng.uniform() < 0.5 else hi) if category.placement == "corner" else rng.uniform(lo, hi)
            cz = z0 + hd + 0.02 if side == "z0" else z1 - hd - 0.02
            cx = along
        else:
            lo, hi = z0 + hd + 0.02, z1 - hd - 0.02
            along = (lo if rng.uniform() < 0.5 else hi) if category.placement == "corner" else rng.uniform(lo, hi)
            cx = x0 + hw + 0.02 if side == "x0" else x1 - hw - 0.02
            cz = along
        if lo > hi:
            return None
        mid = ((fx0 + fx1) / 2, (fz0 + fz1) / 2)
        item.mesh = transform(item.mesh, 0.0, (cx - mid[0], 0.0, cz - mid[1]))
        gap = 0.05
    else:
        yaw = float(rng.integers(4)) * math.pi / 2
        margin = 0.7
        if x1 - x0 < 2 * margin + 0.5 or z1 - z0 < 2 * margin + 0.5:
            return None
        cx, cz = rng.uniform(x0 + margin, x1 - margin), rng.uniform(z0 + margin, z1 - margin)
        item = make(rng, category, yaw, (cx, cz), 0.0, room)
        gap = 0.45
    return item if fits(footprint(item.mesh), inner, blocked, placed, gap) else None


def companions(rng, table: Placed, inner, blocked, placed: list[Placed]) -> None:
    name, lo, hi = COMPANIONS[table.category.name]
    category = CATEGORY_BY_NAME[name]
    fx0, fz0, fx1, fz1 = footprint(table.mesh)
    cx, cz = (fx0 + fx1) / 2, (fz0 + fz1) / 2
    # (x, z) of the table edge, yaw of the outward direction, which side
    sides = [
        (cx, fz0, math.pi, "z-"),
        (cx, fz1, 0.0, "z+"),
        (fx0, cz, -math.pi / 2, "x-"),
        (fx1, cz, math.pi / 2, "x+"),
    ]
    order = rng.permutation(len(sides))
    wanted, count = int(rng.integers(lo, hi + 1)), 0
    size, label = category.sample_size(rng)
    for k in order:
        if count >= wanted:
            break
        sx, sz, yaw, side = sides[k]
        face_yaw = yaw + math.pi  # the chair's front (+Z local) points back at the table
        item = make(rng, category, face_yaw, (0.0, 0.0), 0.0, table.room, size, label)
        ix0, iz0, ix1, iz1 = footprint(item.mesh)
        hw, hd = (ix1 - ix0) / 2, (iz1 - iz0) / 2
        off = {
            "z-": (sx, sz - hd - 0.05),
            "z+": (sx, sz + hd + 0.05),
            "x-": (sx - hw - 0.05, sz),
            "x+": (sx + hw + 0.05, sz),
        }
        tx, tz = off[side]
        item.mesh = transform(item.mesh, 0.0, (tx - (ix0 + ix1) / 2, 0.0, tz - (iz0 + iz1) / 2))
        others = [p for p in placed if p is not table]
        fp = footprint(item.mesh)
        if fits(fp, inner, blocked, others, 0.3) and not overlaps(fp, footprint(table.mesh)):
            placed.append(item)
            count += 1


def try_on(rng, category: Category, support_index: int, placed: list[Placed]) -> Placed | None:
    support = placed[support_index]
    lo, hi = support.aabb
    item = make(rng, category, support.yaw, (0.0, 0.0), 0.0, support.room)
    ix0, iz0, ix1, iz1 = footprint(item.mesh)
    hw, hd = (ix1 - ix0) / 2, (iz1 - iz0) / 2
    if lo[0] + hw + 0.03 > hi[0] - hw - 0.03 or lo[2] + hd + 0.03 > hi[2] - hd - 0.03:
        return None
    cx = rng.uniform(lo[0] + hw + 0.03, hi[0] - hw - 0.03)
    cz = rng.uniform(lo[2] + hd + 0.03, hi[2] - hd - 0.03)
    if category.name == "tv":
        cx, cz = (lo[0] + hi[0]) / 2, (lo[2] + hi[2]) / 2
    item.mesh = transform(item.mesh, 0.0, (cx - (ix0 + ix1) / 2, float(hi[1]) + 0.001, cz - (iz0 + iz1) / 2))
    fp = footprint(item.mesh)
    if any(p.support == support_index and overlaps(fp, footprint(p.mesh), 0.03) for p in placed):
        return None
    item.support = support_index
    return item
