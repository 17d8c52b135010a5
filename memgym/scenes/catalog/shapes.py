"""Mesh builders of the catalogue's shapes: each builds a category's parts in its local frame
(origin at the centre of its footprint, ``+Y`` up, front facing ``+Z``) from its size ``(3,)``
metres, its albedo and its semantic id."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memgym.scenes import meshes
from memgym.scenes.catalog.category import COLORS, Category
from memgym.scenes.meshes import TriangleSoup

PLANT_GREEN = (0.18, 0.48, 0.2)
SURFACE_DARK = (0.12, 0.12, 0.13)

ShapeBuilder = Callable[[np.ndarray, tuple[float, float, float], int], list[TriangleSoup]]


def _b(c, s, col, sid) -> TriangleSoup:
    return meshes.box(c, s, col, sid)


def _dark(color, f=0.55):
    return tuple(float(v) * f for v in color)


def _box(size, col, sid):
    w, h, d = size
    return [_b((0, h / 2, 0), (w, h, d), col, sid)]


def _cabinet(size, col, sid):
    w, h, d = size
    handle = (min(0.04, w / 8), min(0.25, h / 3), 0.03)
    return [
        _b((0, h / 2, 0), (w, h, d), col, sid),
        _b((w * 0.25, h * 0.6, d / 2 + 0.015), handle, _dark(col, 0.4), sid),
        _b((-w * 0.25, h * 0.6, d / 2 + 0.015), handle, _dark(col, 0.4), sid),
    ]


def _appliance(size, col, sid):
    w, h, d = size
    return [
        _b((0, h / 2, 0), (w, h, d), col, sid),
        _b((0, h * 0.55, d / 2 + 0.01), (w * 0.8, h * 0.55, 0.02), _dark(col, 0.7), sid),
    ]


def _table(size, col, sid):
    w, h, d = size
    t, leg = 0.04, 0.05
    parts = [_b((0, h - t / 2, 0), (w, t, d), col, sid)]
    for sx in (-1, 1):
        for sz in (-1, 1):
            parts.append(_b((sx * (w / 2 - leg), (h - t) / 2, sz * (d / 2 - leg)), (leg, h - t, leg), _dark(col), sid))
    return parts


def _chair(size, col, sid):
    w, h, d = size
    seat_h, leg = h * 0.5, 0.04
    parts = [
        _b((0, seat_h, 0), (w, 0.05, d), col, sid),
        _b((0, (seat_h + h) / 2, -d / 2 + 0.03), (w, h - seat_h, 0.05), col, sid),
    ]
    for sx in (-1, 1):
        for sz in (-1, 1):
            parts.append(_b((sx * (w / 2 - leg), seat_h / 2, sz * (d / 2 - leg)), (leg, seat_h, leg), _dark(col), sid))
    return parts


def _sofa(size, col, sid):
    w, h, d = size
    arm = 0.14 * w / 2
    return [
        _b((0, 0.22, 0.05 * d), (w, 0.44, d * 0.9), col, sid),
        _b((0, h / 2, -d / 2 + 0.1 * d), (w, h, 0.2 * d), _dark(col, 0.85), sid),
        _b((-w / 2 + arm / 2, 0.3, 0), (arm, 0.6, d), _dark(col, 0.9), sid),
        _b((w / 2 - arm / 2, 0.3, 0), (arm, 0.6, d), _dark(col, 0.9), sid),
    ]


def _bed(size, col, sid):
    w, h, d = size
    return [
        _b((0, 0.15, 0), (w, 0.3, d), col, sid),
        _b((0, 0.42, 0.03), (w * 0.96, 0.24, d * 0.94), COLORS["white"], sid),
        _b((0, h / 2, -d / 2 + 0.03), (w, h, 0.06), _dark(col, 0.8), sid),
        _b((0, 0.6, -d / 2 + 0.3), (w * 0.7, 0.12, 0.35), (0.95, 0.95, 0.97), sid),
    ]


def _shelf(size, col, sid):
    w, h, d = size
    t = 0.03
    parts = [
        _b((0, h / 2, -d / 2 + t / 2), (w, h, t), _dark(col, 0.8), sid),
        _b((-w / 2 + t / 2, h / 2, 0), (t, h, d), col, sid),
        _b((w / 2 - t / 2, h / 2, 0), (t, h, d), col, sid),
    ]
    book_colors = [COLORS["red"], COLORS["blue"], COLORS["green"], COLORS["yellow"]]
    for i, y in enumerate(np.linspace(t / 2, h - t / 2, 5)):
        parts.append(_b((0, y, 0), (w - 2 * t, t, d), col, sid))
        if 0 < i < 4:
            parts.append(_b((0, y + 0.12, -0.02), (w * 0.7, 0.2, d * 0.7), book_colors[i % 4], sid))
    return parts


def _cylinder(size, col, sid):
    w, h, _ = size
    return [meshes.cylinder((0, h / 2, 0), w / 2, h, col, sid)]


def _vase(size, col, sid):
    w, h, _ = size
    return [
        meshes.cylinder((0, h * 0.35, 0), w / 2, h * 0.7, col, sid),
        meshes.cylinder((0, h * 0.85, 0), w / 4, h * 0.3, col, sid),
    ]


def _plant(size, col, sid):
    w, h, _ = size
    pot_h = h * 0.3
    return [
        meshes.cylinder((0, pot_h / 2, 0), w * 0.3, pot_h, col, sid),
        meshes.ellipsoid((0, pot_h + (h - pot_h) / 2, 0), (w / 2, (h - pot_h) / 2, w / 2), PLANT_GREEN, sid),
    ]


def _floor_lamp(size, col, sid):
    w, h, _ = size
    return [
        meshes.cylinder((0, 0.02, 0), w * 0.45, 0.04, _dark(col), sid),
        meshes.cylinder((0, h / 2, 0), 0.015, h, _dark(col), sid),
        meshes.cylinder((0, h - 0.15, 0), w / 2, 0.3, col, sid),
    ]


def _table_lamp(size, col, sid):
    w, h, _ = size
    return [
        meshes.cylinder((0, h * 0.25, 0), w * 0.25, h * 0.5, _dark(col), sid),
        meshes.cylinder((0, h * 0.75, 0), w / 2, h * 0.5, col, sid),
    ]


def _toilet(size, col, sid):
    w, h, d = size
    return [
        _b((0, 0.2, 0.05), (w * 0.6, 0.4, d * 0.5), col, sid),
        meshes.cylinder((0, 0.38, 0.1 * d), w / 2, 0.12, col, sid),
        _b((0, (0.4 + h) / 2, -d / 2 + 0.1), (w, h - 0.4, 0.2), col, sid),
    ]


def _bathtub(size, col, sid):
    w, h, d = size
    return [
        _b((0, h / 2, 0), (w, h, d), col, sid),
        _b((0, h + 0.005, 0), (w - 0.12, 0.01, d - 0.12), (0.6, 0.75, 0.85), sid),
    ]


def _sink(size, col, sid):
    w, h, d = size
    return [
        _b((0, (h - 0.05) / 2, 0), (w, h - 0.05, d), col, sid),
        _b((0, h - 0.025, 0), (w, 0.05, d), COLORS["white"], sid),
        meshes.cylinder((0, h + 0.06, -d / 2 + 0.06), 0.02, 0.12, COLORS["silver"], sid),
    ]


def _screen(size, col, sid):
    w, h, d = size
    stand = min(0.08, h * 0.2)
    return [
        _b((0, stand / 2, 0), (w * 0.3, stand, d * 2), _dark(col), sid),
        _b((0, stand + (h - stand) / 2, 0), (w, h - stand, d), col, sid),
        _b((0, stand + (h - stand) / 2, d / 2 + 0.002), (w * 0.94, (h - stand) * 0.9, 0.004), SURFACE_DARK, sid),
    ]


def _laptop(size, col, sid):
    w, h, d = size
    return [
        _b((0, 0.01, 0), (w, 0.02, d), col, sid),
        _b((0, h / 2, -d / 2 + 0.01), (w, h, 0.015), col, sid),
        _b((0, h / 2, -d / 2 + 0.02), (w * 0.9, h * 0.85, 0.004), SURFACE_DARK, sid),
    ]


def _piano(size, col, sid):
    w, h, d = size
    return [
        _b((0, h / 2, -d * 0.2), (w, h, d * 0.6), col, sid),
        _b((0, 0.72, d * 0.2), (w, 0.06, d * 0.3), COLORS["white"], sid),
        _b((0, 0.36, d * 0.3), (w * 0.95, 0.72, 0.05), col, sid),
    ]


def _fireplace(size, col, sid):
    w, h, d = size
    return [
        _b((0, h / 2, 0), (w, h, d), col, sid),
        _b((0, h * 0.3, d / 2 + 0.005), (w * 0.5, h * 0.45, 0.01), SURFACE_DARK, sid),
    ]


def _coat_rack(size, col, sid):
    w, h, _ = size
    return [
        meshes.cylinder((0, 0.02, 0), w / 2, 0.04, col, sid),
        meshes.cylinder((0, h / 2, 0), 0.025, h, col, sid),
        meshes.ellipsoid((0, h * 0.8, 0), (w * 0.35, 0.2, w * 0.35), COLORS["navy"], sid),
    ]


def _fan(size, col, sid):
    w, h, _ = size
    return [
        meshes.cylinder((0, 0.02, 0), w * 0.4, 0.04, col, sid),
        meshes.cylinder((0, h / 2, 0), 0.02, h, col, sid),
        _b((0, h - w / 2, 0), (w, w, 0.12), col, sid),
    ]


def _treadmill(size, col, sid):
    w, h, d = size
    return [
        _b((0, 0.1, 0), (w, 0.2, d), SURFACE_DARK, sid),
        _b((-w / 2 + 0.04, h / 2, -d / 2 + 0.1), (0.05, h, 0.05), col, sid),
        _b((w / 2 - 0.04, h / 2, -d / 2 + 0.1), (0.05, h, 0.05), col, sid),
        _b((0, h - 0.1, -d / 2 + 0.1), (w, 0.2, 0.25), col, sid),
    ]


def _kettle(size, col, sid):
    w, h, _ = size
    return [
        meshes.cylinder((0, h * 0.35, 0), w / 2, h * 0.7, col, sid),
        meshes.cone((0, h * 0.7, 0), w / 2, h * 0.3, col, sid),
    ]


def _books(size, col, sid):
    w, h, d = size
    others = [COLORS["red"], COLORS["navy"], COLORS["green"]]
    return [
        _b((0, h * (i + 0.5) / 3, 0), (w * (1 - 0.08 * i), h / 3, d), col if i == 0 else others[i], sid)
        for i in range(3)
    ]


def _toy(size, col, sid):
    w, h, _ = size
    return [
        meshes.ellipsoid((0, h * 0.3, 0), (w / 2, h * 0.3, w / 2), col, sid),
        meshes.ellipsoid((0, h * 0.8, 0), (w / 3, h * 0.2, w / 3), col, sid),
    ]


def _microwave(size, col, sid):
    w, h, d = size
    return [
        _b((0, h / 2, 0), (w, h, d), col, sid),
        _b((-w * 0.1, h / 2, d / 2 + 0.005), (w * 0.65, h * 0.75, 0.01), SURFACE_DARK, sid),
    ]


def _stove(size, col, sid):
    w, h, d = size
    parts = [
        _b((0, h / 2, 0), (w, h, d), col, sid),
        _b((0, h * 0.45, d / 2 + 0.005), (w * 0.8, h * 0.5, 0.01), SURFACE_DARK, sid),
    ]
    for sx in (-1, 1):
        for sz in (-1, 1):
            parts.append(meshes.cylinder((sx * w / 4, h + 0.005, sz * d / 4), 0.09, 0.01, SURFACE_DARK, sid))
    return parts


SHAPES: dict[str, ShapeBuilder] = {
    "box": _box,
    "cabinet": _cabinet,
    "appliance": _appliance,
    "table": _table,
    "chair": _chair,
    "sofa": _sofa,
    "bed": _bed,
    "shelf": _shelf,
    "cylinder": _cylinder,
    "vase": _vase,
    "plant": _plant,
    "floor_lamp": _floor_lamp,
    "table_lamp": _table_lamp,
    "toilet": _toilet,
    "bathtub": _bathtub,
    "sink": _sink,
    "screen": _screen,
    "laptop": _laptop,
    "piano": _piano,
    "fireplace": _fireplace,
    "coat_rack": _coat_rack,
    "fan": _fan,
    "treadmill": _treadmill,
    "kettle": _kettle,
    "books": _books,
    "toy": _toy,
    "microwave": _microwave,
    "stove": _stove,
}
"""Shape name -> builder ``(size (3,), albedo, semantic id) -> [TriangleSoup]`` in the local frame."""


def build_mesh(category: Category, size: np.ndarray, color: str, semantic_id: int) -> TriangleSoup:
    """The object's mesh in its local frame (origin at its footprint centre on its support)."""
    parts = SHAPES[category.shape](np.asarray(size, float), COLORS[color], semantic_id)
    return TriangleSoup.concatenate(parts)
