"""Real-house clutter: repeated instances of the common categories of annotated houses.

A generated house furnished from :data:`~memgym.scenes.catalog.ROOM_FURNITURE` holds about one
object per category, where annotated real houses (HM3D-Semantics, the houses of GOAT-Bench and
DialogMem) hold many chairs, pictures, cushions, lamps, plants, towels and books. With
``house.clutter`` set, :func:`add_clutter` adds to each room, after its furniture and small
objects, the extra instances a *clutter statistics file* gives per room type: ``{room type:
{category: [min, max]}}`` under ``rooms``, a count drawn uniformly from ``min..max`` per room and
category (the shipped ``hm3d`` file, ``memgym/configs/houses/clutter_hm3d.yaml``, cites its
sources). Each instance is placed by its category's placement kind:

* ``wall``, ``corner``, ``free`` -- on the floor as the furniture is (15 tries);
* ``surface`` -- on a random supporting object of the room (8 tries);
* ``hung`` -- on a wall of the room, its centre :data:`HUNG_HEIGHT` above the floor, away from
  doorways, other hung objects and tall furniture in front of the wall (15 tries);
* ``seat`` -- on the seat of a sofa, armchair or bed of the room (:data:`SEAT_HEIGHT`), along its
  back (8 tries).

An instance that finds no place is skipped, and objects the camera cannot see from anywhere are
removed later with every other object (:mod:`memgym.scenes.procedural`), so the counts are upper
bounds. Clutter draws come after the furnishing's, so a cluttered house has the floor plan and
furniture of the same seed without clutter.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import numpy as np
import yaml

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.textfiles import read_text
from memgym.scenes.catalog import CATEGORY_BY_NAME, ROOM_TYPES, Category
from memgym.scenes.floorplan import Room
from memgym.scenes.placement import WALL_YAW, Placed, footprint, make, overlaps, transform, try_on, try_place

CLUTTER_DIR = Path(__file__).resolve().parent.parent / "configs" / "houses"
"""Folder of the shipped clutter statistics files (``clutter_<name>.yaml``)."""
HUNG_HEIGHT = {"picture": (1.25, 1.65), "towel": (0.9, 1.3)}
"""Hung category -> range of its centre's height above the floor, metres (others: pictures')."""
SEAT_HEIGHT = {"sofa": 0.44, "armchair": 0.44, "bed": 0.54}
"""Seat category -> height of its seat (mattress) top, metres, as :mod:`memgym.scenes.catalog` builds it."""
SEAT_BACK = {"sofa": 0.2, "armchair": 0.2, "bed": 0.3}
"""Seat category -> depth share taken by its back (headboard and pillow for a bed)."""


@dataclasses.dataclass(frozen=True)
class ClutterStats:
    """Extra instances per room type: ``rooms[room type][category] = (min, max)``."""

    name: str
    rooms: dict[str, dict[str, tuple[int, int]]]


def clutter_source(value: str) -> Path | None:
    """The statistics file ``house.clutter`` names: ``none`` (no clutter) -> None, a shipped name
    (``hm3d``) -> its file, anything else -> that path."""
    if value == "none":
        return None
    shipped = CLUTTER_DIR / f"clutter_{value}.yaml"
    return shipped if "/" not in value and shipped.is_file() else Path(value)


@functools.cache
def load_clutter(value: str) -> ClutterStats | None:
    """The :class:`ClutterStats` of ``house.clutter`` (None for ``none``).

    Raises:
        ConfigError: the file cannot be read, is not YAML, or does not map known room types to
            known categories with ``[min, max]`` counts (0 <= min <= max); the message names the
            file and the key.
    """
    path = clutter_source(value)
    if path is None:
        return None
    where = f"house.clutter={value}: {path}"
    try:
        data = yaml.safe_load(read_text(path))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the clutter statistics file ({exc.strerror or exc})") from None
    except (yaml.YAMLError, MemgymError) as exc:
        raise ConfigError(f"{where}: not a YAML clutter statistics file ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rooms"), dict):
        raise ConfigError(f"{where}: expected a mapping with 'rooms: {{room type: {{category: [min, max]}}}}'")
    rooms: dict[str, dict[str, tuple[int, int]]] = {}
    for room, counts in data["rooms"].items():
        if room not in ROOM_TYPES or not isinstance(counts, dict):
            raise ConfigError(f"{where}: rooms.{room}: expected one of {list(ROOM_TYPES)} mapping categories")
        rooms[room] = {category: _count_range(where, room, category, r) for category, r in counts.items()}
    return ClutterStats(name=str(data.get("name", value)), rooms=rooms)


def _count_range(where: str, room: str, category: str, value) -> tuple[int, int]:
    key = f"{where}: rooms.{room}.{category}"
    if category not in CATEGORY_BY_NAME:
        raise ConfigError(f"{key}: unknown category (the catalogue: memgym.scenes.catalog)")
    ok = isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)
    if not ok or not 0 <= value[0] <= value[1]:
        raise ConfigError(f"{key}: expected [min, max] whole counts with 0 <= min <= max, got {value!r}")
    return value[0], value[1]


def add_clutter(
    rng: np.random.Generator, stats: ClutterStats, room: Room, inner, blocked, placed: list[Placed]
) -> None:
    """Append ``room``'s clutter to ``placed`` (module docstring); ``inner`` is its floor rectangle
    inside the walls, ``blocked`` the doorway zones."""
    for name, (low, high) in stats.rooms.get(room.kind, {}).items():
        category = CATEGORY_BY_NAME[name]
        for _ in range(int(rng.integers(low, high + 1))):
            item = _place(rng, category, room, inner, blocked, placed)
            if item is not None:
                placed.append(item)


def _place(rng, category: Category, room: Room, inner, blocked, placed: list[Placed]) -> Placed | None:
    if category.placement in ("surface", "seat"):
        supports = [
            k
            for k, p in enumerate(placed)
            if p.room.index == room.index
            and p.support is None
            and p.category.name in category.supports
            and (p.category.surface or category.placement == "seat")
        ]
        for _ in range(8):
            if not supports:
                return None
            index = supports[int(rng.integers(len(supports)))]
            place = try_on if category.placement == "surface" else _on_seat
            item = place(rng, category, index, placed)
            if item is not None:
                return item
        return None
    for _ in range(15):
        place = _hang if category.placement == "hung" else try_place
        item = place(rng, category, room, inner, blocked, placed)
        if item is not None:
            return item
    return None


def _hang(rng, category: Category, room: Room, inner, blocked, placed: list[Placed]) -> Placed | None:
    """A ``hung`` object on a random wall of ``room``, facing into it."""
    x0, z0, x1, z1 = inner
    side = ("z0", "z1", "x0", "x1")[int(rng.integers(4))]
    item = make(rng, category, WALL_YAW[side], (0.0, 0.0), 0.0, room)
    fx0, fz0, fx1, fz1 = footprint(item.mesh)
    hw, hd = (fx1 - fx0) / 2, (fz1 - fz0) / 2
    low, high = HUNG_HEIGHT.get(category.name, HUNG_HEIGHT["picture"])
    lift = float(rng.uniform(low, high)) - float(item.aabb[1, 1]) / 2
    if side in ("z0", "z1"):
        if x1 - x0 < 2 * hw + 0.1:
            return None
        cx, cz = (
            float(rng.uniform(x0 + hw + 0.05, x1 - hw - 0.05)),
            (z0 + hd + 0.005 if side == "z0" else z1 - hd - 0.005),
        )
    else:
        if z1 - z0 < 2 * hd + 0.1:
            return None
        cx, cz = (
            (x0 + hw + 0.005 if side == "x0" else x1 - hw - 0.005),
            float(rng.uniform(z0 + hd + 0.05, z1 - hd - 0.05)),
        )
    item.mesh = transform(item.mesh, 0.0, (cx - (fx0 + fx1) / 2, lift, cz - (fz0 + fz1) / 2))
    fp, bottom = footprint(item.mesh), float(item.aabb[0, 1])
    if any(overlaps(fp, b) for b in blocked):
        return None
    for p in placed:
        if p.room.index != room.index or p.support is not None:
            continue
        hung = p.category.placement == "hung"
        if overlaps(fp, footprint(p.mesh), 0.15 if hung else 0.02) and (hung or float(p.aabb[1, 1]) > bottom):
            return None  # beside another hung object, or behind tall furniture
    return item


def _on_seat(rng, category: Category, support_index: int, placed: list[Placed]) -> Placed | None:
    """A ``seat`` object on the seat of ``placed[support_index]``, against its back."""
    seat = placed[support_index]
    lo, hi = seat.aabb
    quarter = round(seat.yaw / (math.pi / 2)) % 2  # 0: local x along world x; 1: swapped
    width, depth = (hi[0] - lo[0], hi[2] - lo[2]) if quarter == 0 else (hi[2] - lo[2], hi[0] - lo[0])
    item = make(rng, category, seat.yaw, (0.0, 0.0), 0.0, seat.room)
    cw = float(max(item.aabb[1, 0] - item.aabb[0, 0], item.aabb[1, 2] - item.aabb[0, 2]))
    arms = 0.14 * width if seat.category.name != "bed" else 0.05 * width
    span = width / 2 - arms - cw / 2
    if span <= 0:
        return None
    local_x = float(rng.uniform(-span, span))
    local_z = -depth / 2 + SEAT_BACK[seat.category.name] * depth + 0.12
    c, s = math.cos(seat.yaw), math.sin(seat.yaw)
    centre = ((lo[0] + hi[0]) / 2 + c * local_x + s * local_z, (lo[2] + hi[2]) / 2 - s * local_x + c * local_z)
    mid = ((item.aabb[0, 0] + item.aabb[1, 0]) / 2, (item.aabb[0, 2] + item.aabb[1, 2]) / 2)
    offset = (centre[0] - mid[0], SEAT_HEIGHT[seat.category.name] + 0.001, centre[1] - mid[1])
    item.mesh = transform(item.mesh, 0.0, offset)
    fp = footprint(item.mesh)
    if any(p.support == support_index and overlaps(fp, footprint(p.mesh), 0.02) for p in placed):
        return None
    item.support = support_index
    return item
