"""The object catalogue of generated houses: 58 categories with typical shape, size, colour,
material, placement and rooms.

Every category builds its mesh in a local frame whose origin is the centre of its footprint on
the floor (or on the supporting surface), ``+Y`` up and its front facing ``+Z``; sizes are
``(width x, height y, depth z)`` metres sampled uniformly between the category's bounds.
Placement kinds: ``wall`` (back against a wall, facing into the room), ``corner``, ``free``
(anywhere in the room), ``surface`` (on top of a supporting object whose category is in
``supports``), ``hung`` (on a wall above the floor: pictures, towels) and ``seat`` (on the seat of
a sofa, armchair or bed whose category is in ``supports``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from memgym.scenes import meshes
from memgym.scenes.meshes import TriangleSoup

COLORS: dict[str, tuple[float, float, float]] = {
    "white": (0.92, 0.92, 0.9),
    "black": (0.08, 0.08, 0.09),
    "gray": (0.5, 0.5, 0.52),
    "beige": (0.86, 0.8, 0.66),
    "brown": (0.45, 0.29, 0.16),
    "dark brown": (0.27, 0.17, 0.1),
    "red": (0.75, 0.12, 0.12),
    "orange": (0.92, 0.5, 0.12),
    "yellow": (0.93, 0.8, 0.2),
    "green": (0.2, 0.55, 0.25),
    "blue": (0.18, 0.32, 0.72),
    "navy": (0.1, 0.14, 0.36),
    "teal": (0.1, 0.5, 0.5),
    "purple": (0.45, 0.22, 0.55),
    "pink": (0.92, 0.55, 0.65),
    "silver": (0.75, 0.76, 0.78),
}
"""Colour name -> linear RGB albedo in ``[0, 1]``."""

PLANT_GREEN = (0.18, 0.48, 0.2)
SURFACE_DARK = (0.12, 0.12, 0.13)


@dataclasses.dataclass(frozen=True)
class Category:
    """One object category of the catalogue.

    Attributes:
        name: category label (HM3D-style, lower case).
        size_min / size_max: ``(x, y, z)`` extents bounds, metres.
        colors: colour names (keys of :data:`COLORS`) it may have.
        materials: materials it may be made of.
        shape: name of its mesh builder in :data:`SHAPES`.
        placement: ``wall``, ``corner``, ``free``, ``surface``, ``hung`` or ``seat``.
        rooms: room types it appears in (for ``surface``: ignored, follows its support).
        supports: for ``surface`` and ``seat`` objects, the categories it may stand on.
        surface: whether small objects may be put on its top.
    """

    name: str
    size_min: tuple[float, float, float]
    size_max: tuple[float, float, float]
    colors: tuple[str, ...]
    materials: tuple[str, ...]
    shape: str
    placement: str
    rooms: tuple[str, ...] = ()
    supports: tuple[str, ...] = ()
    surface: bool = False

    def sample_size(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        """A size ``(3,)`` metres and its label small/medium/large within the category's range."""
        u = float(rng.uniform())
        lo, hi = np.asarray(self.size_min), np.asarray(self.size_max)
        size = lo + u * (hi - lo)
        label = "small" if u < 1 / 3 else ("medium" if u < 2 / 3 else "large")
        return size, label


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

WOODS = ("brown", "dark brown", "beige", "white", "black")
FABRICS = ("gray", "beige", "blue", "navy", "green", "red", "teal", "brown", "purple")
APPLIANCE = ("white", "silver", "black")
_ALL_SURFACES = (
    "dining table",
    "coffee table",
    "desk",
    "nightstand",
    "dresser",
    "cabinet",
    "kitchen counter",
    "tv stand",
)


def _c(name, lo, hi, colors, materials, shape, placement, rooms=(), supports=(), surface=False) -> Category:
    return Category(
        name, lo, hi, tuple(colors), tuple(materials), shape, placement, tuple(rooms), tuple(supports), surface
    )


CATEGORIES: tuple[Category, ...] = (
    # ---- furniture and fixtures on the floor -------------------------------------------------------
    _c("sofa", (1.8, 0.8, 0.85), (2.4, 0.95, 1.0), FABRICS, ("fabric", "leather"), "sofa", "wall", ("living room",)),
    _c(
        "armchair",
        (0.75, 0.8, 0.75),
        (0.95, 1.0, 0.9),
        FABRICS,
        ("fabric", "leather"),
        "sofa",
        "free",
        ("living room", "bedroom", "office"),
    ),
    _c(
        "bed",
        (1.4, 0.9, 1.95),
        (1.9, 1.2, 2.1),
        WOODS + ("gray", "navy"),
        ("wood", "fabric"),
        "bed",
        "wall",
        ("bedroom",),
    ),
    _c(
        "nightstand",
        (0.4, 0.45, 0.35),
        (0.55, 0.6, 0.45),
        WOODS,
        ("wood",),
        "cabinet",
        "wall",
        ("bedroom",),
        surface=True,
    ),
    _c("wardrobe", (1.0, 1.9, 0.55), (1.6, 2.2, 0.65), WOODS, ("wood",), "cabinet", "wall", ("bedroom",)),
    _c(
        "dresser", (0.9, 0.75, 0.45), (1.4, 0.95, 0.55), WOODS, ("wood",), "cabinet", "wall", ("bedroom",), surface=True
    ),
    _c(
        "cabinet",
        (0.6, 0.8, 0.4),
        (1.2, 1.1, 0.55),
        WOODS,
        ("wood", "metal"),
        "cabinet",
        "wall",
        ("living room", "dining room", "hallway", "office", "kitchen"),
        surface=True,
    ),
    _c(
        "bookshelf",
        (0.8, 1.6, 0.3),
        (1.2, 2.0, 0.4),
        WOODS,
        ("wood",),
        "shelf",
        "wall",
        ("living room", "office", "bedroom"),
    ),
    _c(
        "dining table",
        (1.2, 0.72, 0.8),
        (1.8, 0.78, 1.0),
        WOODS,
        ("wood", "glass"),
        "table",
        "free",
        ("dining room", "kitchen"),
        surface=True,
    ),
    _c(
        "coffee table",
        (0.9, 0.4, 0.5),
        (1.2, 0.48, 0.7),
        WOODS,
        ("wood", "glass"),
        "table",
        "free",
        ("living room",),
        surface=True,
    ),
    _c(
        "desk",
        (1.0, 0.72, 0.55),
        (1.5, 0.78, 0.75),
        WOODS,
        ("wood", "metal"),
        "table",
        "wall",
        ("office", "bedroom"),
        surface=True,
    ),
    _c(
        "chair",
        (0.42, 0.85, 0.45),
        (0.5, 1.0, 0.55),
        WOODS + ("red", "blue"),
        ("wood", "plastic"),
        "chair",
        "free",
        ("dining room", "kitchen", "office"),
    ),
    _c(
        "stool",
        (0.32, 0.45, 0.32),
        (0.4, 0.65, 0.4),
        WOODS + ("silver",),
        ("wood", "metal"),
        "cylinder",
        "free",
        ("kitchen",),
    ),
    _c("bench", (1.0, 0.42, 0.35), (1.5, 0.48, 0.45), WOODS, ("wood",), "table", "wall", ("hallway", "dining room")),
    _c(
        "tv stand",
        (1.2, 0.45, 0.4),
        (1.8, 0.6, 0.5),
        WOODS,
        ("wood",),
        "cabinet",
        "wall",
        ("living room",),
        surface=True,
    ),
    _c("fridge", (0.6, 1.7, 0.65), (0.8, 1.9, 0.75), APPLIANCE, ("metal",), "appliance", "wall", ("kitchen",)),
    _c(
        "stove",
        (0.6, 0.85, 0.6),
        (0.76, 0.92, 0.65),
        APPLIANCE,
        ("metal",),
        "stove",
        "wall",
        ("kitchen",),
        surface=True,
    ),
    _c(
        "kitchen counter",
        (1.2, 0.88, 0.6),
        (2.2, 0.92, 0.65),
        WOODS + ("gray",),
        ("wood", "stone"),
        "cabinet",
        "wall",
        ("kitchen",),
        surface=True,
    ),
    _c("dishwasher", (0.58, 0.83, 0.58), (0.62, 0.87, 0.62), APPLIANCE, ("metal",), "appliance", "wall", ("kitchen",)),
    _c(
        "washing machine",
        (0.58, 0.83, 0.58),
        (0.62, 0.87, 0.62),
        APPLIANCE,
        ("metal",),
        "appliance",
        "wall",
        ("bathroom", "hallway"),
    ),
    _c("toilet", (0.38, 0.75, 0.65), (0.45, 0.85, 0.75), ("white",), ("ceramic",), "toilet", "wall", ("bathroom",)),
    _c("bathtub", (1.5, 0.5, 0.7), (1.7, 0.6, 0.8), ("white",), ("ceramic",), "bathtub", "wall", ("bathroom",)),
    _c(
        "bathroom sink",
        (0.6, 0.8, 0.45),
        (0.9, 0.9, 0.55),
        WOODS,
        ("wood", "ceramic"),
        "sink",
        "wall",
        ("bathroom",),
        surface=True,
    ),
    _c(
        "potted plant",
        (0.4, 0.8, 0.4),
        (0.6, 1.4, 0.6),
        ("white", "orange", "gray", "brown"),
        ("ceramic", "clay"),
        "plant",
        "corner",
        ("living room", "office", "hallway", "dining room", "bedroom"),
    ),
    _c(
        "floor lamp",
        (0.3, 1.5, 0.3),
        (0.4, 1.8, 0.4),
        ("white", "beige", "black", "yellow"),
        ("metal", "fabric"),
        "floor_lamp",
        "corner",
        ("living room", "bedroom", "office"),
    ),
    _c(
        "piano",
        (1.4, 1.1, 0.55),
        (1.55, 1.3, 0.65),
        ("black", "dark brown", "white"),
        ("wood",),
        "piano",
        "wall",
        ("living room",),
    ),
    _c(
        "ottoman",
        (0.5, 0.4, 0.5),
        (0.7, 0.45, 0.7),
        FABRICS,
        ("fabric", "leather"),
        "box",
        "free",
        ("living room", "bedroom"),
    ),
    _c("shoe rack", (0.6, 0.4, 0.3), (1.0, 0.8, 0.35), WOODS, ("wood", "metal"), "shelf", "wall", ("hallway",)),
    _c(
        "trash can",
        (0.25, 0.4, 0.25),
        (0.35, 0.7, 0.35),
        ("silver", "black", "white", "gray"),
        ("metal", "plastic"),
        "cylinder",
        "corner",
        ("kitchen", "office", "bathroom"),
    ),
    _c(
        "laundry basket",
        (0.4, 0.5, 0.4),
        (0.5, 0.6, 0.5),
        ("white", "beige", "blue"),
        ("plastic", "wicker"),
        "cylinder",
        "corner",
        ("bedroom", "bathroom"),
    ),
    _c(
        "mirror",
        (0.5, 1.5, 0.05),
        (0.7, 1.8, 0.08),
        ("silver", "white", "black"),
        ("glass",),
        "box",
        "wall",
        ("bedroom", "hallway", "bathroom"),
    ),
    _c(
        "fireplace",
        (1.2, 1.0, 0.4),
        (1.6, 1.2, 0.5),
        ("white", "gray", "red"),
        ("stone", "brick"),
        "fireplace",
        "wall",
        ("living room",),
    ),
    _c("coat rack", (0.4, 1.7, 0.4), (0.5, 1.9, 0.5), WOODS, ("wood", "metal"), "coat_rack", "corner", ("hallway",)),
    _c(
        "fan",
        (0.35, 1.1, 0.35),
        (0.45, 1.3, 0.45),
        ("white", "black", "silver"),
        ("plastic", "metal"),
        "fan",
        "corner",
        ("bedroom", "office", "living room"),
    ),
    _c(
        "treadmill",
        (0.7, 1.2, 1.6),
        (0.9, 1.4, 1.9),
        ("black", "gray"),
        ("metal", "plastic"),
        "treadmill",
        "wall",
        ("office",),
    ),
    _c(
        "suitcase",
        (0.4, 0.6, 0.25),
        (0.5, 0.75, 0.3),
        ("black", "red", "navy", "silver"),
        ("plastic", "fabric"),
        "box",
        "wall",
        ("bedroom", "hallway"),
    ),
    _c(
        "storage box",
        (0.4, 0.3, 0.3),
        (0.6, 0.5, 0.5),
        ("brown", "white", "blue"),
        ("cardboard", "plastic"),
        "box",
        "corner",
        ("office", "hallway", "bedroom"),
    ),
    # ---- small objects on surfaces ------------------------------------------------------------------
    _c(
        "table lamp",
        (0.25, 0.4, 0.25),
        (0.35, 0.6, 0.35),
        ("white", "beige", "yellow", "blue"),
        ("ceramic", "fabric"),
        "table_lamp",
        "surface",
        supports=("nightstand", "desk", "dresser", "cabinet"),
    ),
    _c(
        "tv",
        (0.9, 0.55, 0.08),
        (1.3, 0.8, 0.1),
        ("black", "silver"),
        ("plastic",),
        "screen",
        "surface",
        supports=("tv stand",),
    ),
    _c(
        "laptop",
        (0.3, 0.22, 0.22),
        (0.36, 0.25, 0.25),
        ("silver", "black", "gray"),
        ("metal", "plastic"),
        "laptop",
        "surface",
        supports=("desk", "dining table", "coffee table"),
    ),
    _c(
        "monitor",
        (0.5, 0.35, 0.05),
        (0.6, 0.45, 0.06),
        ("black", "silver"),
        ("plastic",),
        "screen",
        "surface",
        supports=("desk",),
    ),
    _c(
        "vase",
        (0.12, 0.25, 0.12),
        (0.2, 0.45, 0.2),
        ("white", "blue", "red", "green", "yellow"),
        ("ceramic", "glass"),
        "vase",
        "surface",
        supports=_ALL_SURFACES,
    ),
    _c(
        "books",
        (0.2, 0.12, 0.15),
        (0.3, 0.2, 0.22),
        ("red", "blue", "green", "yellow", "black"),
        ("paper",),
        "books",
        "surface",
        supports=("desk", "nightstand", "coffee table", "dresser", "cabinet"),
    ),
    _c(
        "bowl",
        (0.18, 0.07, 0.18),
        (0.28, 0.1, 0.28),
        ("white", "blue", "red", "green"),
        ("ceramic", "glass", "wood"),
        "cylinder",
        "surface",
        supports=("dining table", "kitchen counter", "coffee table"),
    ),
    _c(
        "microwave",
        (0.45, 0.28, 0.35),
        (0.55, 0.32, 0.4),
        APPLIANCE,
        ("metal",),
        "microwave",
        "surface",
        supports=("kitchen counter",),
    ),
    _c(
        "kettle",
        (0.18, 0.22, 0.18),
        (0.22, 0.28, 0.22),
        ("silver", "white", "red", "black"),
        ("metal", "plastic"),
        "kettle",
        "surface",
        supports=("kitchen counter", "stove"),
    ),
    _c(
        "toaster",
        (0.25, 0.18, 0.15),
        (0.3, 0.2, 0.18),
        ("silver", "red", "white"),
        ("metal",),
        "box",
        "surface",
        supports=("kitchen counter",),
    ),
    _c(
        "clock",
        (0.2, 0.2, 0.06),
        (0.3, 0.3, 0.08),
        ("white", "black", "brown"),
        ("wood", "plastic"),
        "box",
        "surface",
        supports=("nightstand", "dresser", "cabinet", "desk"),
    ),
    _c(
        "picture frame",
        (0.2, 0.25, 0.03),
        (0.35, 0.35, 0.04),
        ("black", "white", "brown", "silver"),
        ("wood", "metal"),
        "box",
        "surface",
        supports=("nightstand", "dresser", "cabinet", "tv stand", "desk"),
    ),
    _c(
        "candle",
        (0.06, 0.12, 0.06),
        (0.09, 0.25, 0.09),
        ("white", "red", "yellow", "purple"),
        ("wax",),
        "cylinder",
        "surface",
        supports=("dining table", "coffee table", "dresser"),
    ),
    _c(
        "mug",
        (0.08, 0.09, 0.08),
        (0.1, 0.11, 0.1),
        ("white", "red", "blue", "black", "yellow"),
        ("ceramic",),
        "cylinder",
        "surface",
        supports=("desk", "dining table", "kitchen counter", "coffee table"),
    ),
    _c(
        "basket",
        (0.3, 0.15, 0.3),
        (0.4, 0.25, 0.4),
        ("brown", "beige"),
        ("wicker",),
        "cylinder",
        "surface",
        supports=("dining table", "kitchen counter", "cabinet", "dresser"),
    ),
    _c(
        "toy",
        (0.2, 0.2, 0.2),
        (0.3, 0.3, 0.3),
        ("pink", "yellow", "orange", "purple", "brown"),
        ("fabric", "plastic"),
        "toy",
        "surface",
        supports=("nightstand", "dresser", "coffee table"),
    ),
    _c(
        "speaker",
        (0.15, 0.25, 0.15),
        (0.25, 0.4, 0.25),
        ("black", "white", "gray"),
        ("plastic", "wood"),
        "box",
        "surface",
        supports=("tv stand", "desk", "cabinet"),
    ),
    _c(
        "houseplant",
        (0.15, 0.25, 0.15),
        (0.25, 0.4, 0.25),
        ("white", "orange", "gray"),
        ("ceramic", "clay"),
        "plant",
        "surface",
        supports=_ALL_SURFACES,
    ),
    # ---- real-house clutter only (house.clutter, memgym.scenes.clutter) ---------------------------
    _c(
        "picture",
        (0.4, 0.3, 0.03),
        (1.0, 0.8, 0.04),
        ("black", "white", "brown", "silver", "blue", "red", "green"),
        ("wood", "metal", "canvas"),
        "box",
        "hung",
        ("living room", "bedroom", "dining room", "office", "hallway", "kitchen"),
    ),
    _c(
        "towel",
        (0.35, 0.5, 0.04),
        (0.6, 0.8, 0.06),
        ("white", "beige", "blue", "pink", "gray", "teal"),
        ("fabric",),
        "box",
        "hung",
        ("bathroom", "kitchen"),
    ),
    _c(
        "cushion",
        (0.35, 0.3, 0.12),
        (0.5, 0.45, 0.18),
        FABRICS + ("white", "yellow", "pink", "orange"),
        ("fabric", "velvet"),
        "box",
        "seat",
        supports=("sofa", "armchair", "bed"),
    ),
)
"""The catalogue, in a fixed order (generation draws depend on it). The last three (``hung`` and
``seat`` placements) are placed only by real-house clutter, never by the furnishing of
:data:`ROOM_FURNITURE`, so houses without clutter are what they were before they existed."""

CATEGORY_BY_NAME: dict[str, Category] = {c.name: c for c in CATEGORIES}

ROOM_TYPES = ("living room", "kitchen", "bedroom", "bathroom", "dining room", "office", "hallway")
"""Region labels of generated houses."""

ROOM_FURNITURE: dict[str, tuple[tuple[str, float], ...]] = {
    "living room": (
        ("sofa", 1.0),
        ("coffee table", 0.9),
        ("tv stand", 0.9),
        ("armchair", 0.7),
        ("bookshelf", 0.5),
        ("potted plant", 0.7),
        ("floor lamp", 0.6),
        ("piano", 0.25),
        ("fireplace", 0.3),
        ("ottoman", 0.3),
        ("cabinet", 0.3),
        ("fan", 0.2),
    ),
    "kitchen": (
        ("fridge", 1.0),
        ("kitchen counter", 1.0),
        ("stove", 0.9),
        ("dishwasher", 0.5),
        ("trash can", 0.8),
        ("dining table", 0.3),
        ("stool", 0.4),
        ("cabinet", 0.3),
    ),
    "bedroom": (
        ("bed", 1.0),
        ("nightstand", 0.9),
        ("wardrobe", 0.8),
        ("dresser", 0.6),
        ("desk", 0.3),
        ("mirror", 0.3),
        ("laundry basket", 0.4),
        ("floor lamp", 0.3),
        ("armchair", 0.2),
        ("suitcase", 0.3),
        ("potted plant", 0.3),
        ("storage box", 0.2),
        ("nightstand", 0.5),
    ),
    "bathroom": (
        ("toilet", 1.0),
        ("bathroom sink", 1.0),
        ("bathtub", 0.7),
        ("washing machine", 0.3),
        ("laundry basket", 0.3),
        ("trash can", 0.4),
        ("mirror", 0.2),
    ),
    "dining room": (("dining table", 1.0), ("cabinet", 0.6), ("potted plant", 0.5), ("bench", 0.3)),
    "office": (
        ("desk", 1.0),
        ("bookshelf", 0.8),
        ("armchair", 0.3),
        ("trash can", 0.6),
        ("potted plant", 0.4),
        ("treadmill", 0.2),
        ("storage box", 0.4),
        ("floor lamp", 0.3),
        ("cabinet", 0.4),
    ),
    "hallway": (
        ("shoe rack", 0.8),
        ("coat rack", 0.6),
        ("bench", 0.4),
        ("mirror", 0.4),
        ("potted plant", 0.4),
        ("cabinet", 0.3),
        ("washing machine", 0.2),
        ("storage box", 0.2),
    ),
}
"""Room type -> furniture (category, probability of trying to place it), in placement order."""

COMPANIONS: dict[str, tuple[str, int, int]] = {"dining table": ("chair", 2, 4), "desk": ("chair", 1, 1)}
"""Furniture that brings chairs: category -> (companion category, min count, max count)."""


def build_mesh(category: Category, size: np.ndarray, color: str, semantic_id: int) -> TriangleSoup:
    """The object's mesh in its local frame (origin at its footprint centre on its support)."""
    parts = SHAPES[category.shape](np.asarray(size, float), COLORS[color], semantic_id)
    return TriangleSoup.concatenate(parts)
