"""Floor plans of generated houses: rooms from guillotine cuts, walls, doorways, region labels.

A rectangular house of ``width x depth`` metres (x and z) is cut recursively into rectangular
rooms. Every cut is an interior wall; the house outline is the exterior wall. Rooms that share a
wall stretch of at least ``min_door_span`` metres are adjacent; doorways are opened on a random
spanning tree of the adjacency graph (so every room is reachable) plus a few extra adjacent pairs.
"""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np

from memgym.scenes.catalog import ROOM_TYPES


@dataclasses.dataclass(frozen=True)
class Room:
    """A room rectangle ``(x0, z0, x1, z1)`` metres (wall centre lines) and its type."""

    index: int
    x0: float
    z0: float
    x1: float
    z1: float
    kind: str = ""

    @property
    def area(self) -> float:
        return (self.x1 - self.x0) * (self.z1 - self.z0)


@dataclasses.dataclass
class Wall:
    """A straight wall on the line ``axis = coord`` from ``start`` to ``end`` with door gaps.

    ``axis`` is ``"x"`` for a wall on a line of constant x (running along z) and ``"z"`` for
    constant z. ``gaps`` are ``(start, end)`` intervals along the wall left open as doorways.
    """

    axis: str
    coord: float
    start: float
    end: float
    gaps: list[tuple[float, float]] = dataclasses.field(default_factory=list)

    def solid_pieces(self) -> list[tuple[float, float]]:
        """Intervals of the wall that are not doorways."""
        pieces, cursor = [], self.start
        for g0, g1 in sorted(self.gaps):
            if g0 > cursor:
                pieces.append((cursor, g0))
            cursor = max(cursor, g1)
        if cursor < self.end:
            pieces.append((cursor, self.end))
        return pieces


@dataclasses.dataclass(frozen=True)
class Doorway:
    """An opening between rooms ``a`` and ``b``: centre ``(x, z)``, ``width`` metres, wall axis."""

    a: int
    b: int
    x: float
    z: float
    width: float
    axis: str


@dataclasses.dataclass
class FloorPlan:
    """Rooms, walls and doorways of one house."""

    width: float
    depth: float
    rooms: list[Room]
    walls: list[Wall]
    doorways: list[Doorway]


def generate_floor_plan(
    rng: np.random.Generator,
    *,
    num_rooms: int,
    width: float,
    depth: float,
    min_room: float = 2.6,
    door_width: float = 1.0,
    min_door_span: float = 1.4,
    extra_door_prob: float = 0.3,
) -> FloorPlan:
    """Cut a ``width x depth`` house into ``num_rooms`` rooms (fewer if rooms would get too small)."""
    rects, walls = _split_house(rng, num_rooms, width, depth, min_room)
    rooms = [Room(i, *r) for i, r in enumerate(rects)]
    rooms = _label_rooms(rng, rooms)
    pairs, shared = _door_pairs(rng, rooms, min_door_span, extra_door_prob)
    doorways = []
    for a, b in sorted(tuple(sorted(p)) for p in pairs):
        axis, coord, s0, s1 = shared[(a, b)]
        margin = door_width / 2 + 0.25
        centre = float(rng.uniform(s0 + margin, s1 - margin)) if s1 - s0 > 2 * margin else (s0 + s1) / 2
        gap = (centre - door_width / 2, centre + door_width / 2)
        wall = next(
            (
                w
                for w in walls
                if w.axis == axis and abs(w.coord - coord) < 1e-6 and w.start <= gap[0] and gap[1] <= w.end
            ),
            None,
        )
        if wall is not None:
            wall.gaps.append(gap)
        x, z = (coord, centre) if axis == "x" else (centre, coord)
        doorways.append(Doorway(a, b, x, z, door_width, axis))
    return FloorPlan(width, depth, rooms, walls, doorways)


def _split_house(
    rng: np.random.Generator, num_rooms: int, width: float, depth: float, min_room: float
) -> tuple[list[tuple[float, float, float, float]], list[Wall]]:
    """The room rectangles (the largest cut first, until ``num_rooms`` or no room can be cut
    without one side under ``min_room``) and the walls: the outer four, then one per cut."""
    rects = [(0.0, 0.0, width, depth)]
    walls = [
        Wall("z", 0.0, 0.0, width),
        Wall("z", depth, 0.0, width),
        Wall("x", 0.0, 0.0, depth),
        Wall("x", width, 0.0, depth),
    ]
    while len(rects) < num_rooms:
        order = sorted(range(len(rects)), key=lambda i: -_area(rects[i]))
        for i in order:
            cut = _cut(rng, rects[i], min_room)
            if cut is not None:
                break
        else:
            break
        first, second, wall = cut
        rects[i : i + 1] = [first, second]
        walls.append(wall)
    return rects, walls


def _door_pairs(
    rng: np.random.Generator, rooms: list[Room], min_door_span: float, extra_door_prob: float
) -> tuple[set[tuple[int, int]], dict[tuple[int, int], tuple[str, float, float, float]]]:
    """The room pairs that get a door (a random spanning tree of the rooms sharing at least
    ``min_door_span`` of wall, plus each other such pair with ``extra_door_prob``) and the span
    each such pair shares."""
    graph = nx.Graph()
    graph.add_nodes_from(range(len(rooms)))
    shared: dict[tuple[int, int], tuple[str, float, float, float]] = {}
    for a in range(len(rooms)):
        for b in range(a + 1, len(rooms)):
            span = _shared_span(rooms[a], rooms[b])
            if span is not None and span[3] - span[2] >= min_door_span:
                shared[(a, b)] = span
                graph.add_edge(a, b, weight=float(rng.uniform()))
    tree = nx.minimum_spanning_tree(graph)
    pairs = set(tree.edges())
    for edge in graph.edges():
        if edge not in pairs and (edge[1], edge[0]) not in pairs and rng.uniform() < extra_door_prob:
            pairs.add(edge)
    return pairs, shared


def _area(rect) -> float:
    return (rect[2] - rect[0]) * (rect[3] - rect[1])


def _cut(rng, rect, min_room):
    x0, z0, x1, z1 = rect
    w, d = x1 - x0, z1 - z0
    options = []
    if w >= 2 * min_room:
        options.append("x")
    if d >= 2 * min_room:
        options.append("z")
    if not options:
        return None
    axis = options[0] if len(options) == 1 else ("x" if (w > d) == (rng.uniform() < 0.8) else "z")
    if axis == "x":
        c = round(float(rng.uniform(x0 + min_room, x1 - min_room)), 2)
        return (x0, z0, c, z1), (c, z0, x1, z1), Wall("x", c, z0, z1)
    c = round(float(rng.uniform(z0 + min_room, z1 - min_room)), 2)
    return (x0, z0, x1, c), (x0, c, x1, z1), Wall("z", c, x0, x1)


def _shared_span(a: Room, b: Room):
    for axis, (a_lo, a_hi, b_lo, b_hi), (a_s0, a_s1, b_s0, b_s1) in (
        ("x", (a.x0, a.x1, b.x0, b.x1), (a.z0, a.z1, b.z0, b.z1)),
        ("z", (a.z0, a.z1, b.z0, b.z1), (a.x0, a.x1, b.x0, b.x1)),
    ):
        for coord in (a_hi, a_lo):
            if abs(coord - (b_lo if coord == a_hi else b_hi)) < 1e-6:
                s0, s1 = max(a_s0, b_s0), min(a_s1, b_s1)
                if s1 > s0:
                    return axis, coord, s0, s1
    return None


def _label_rooms(rng, rooms: list[Room]) -> list[Room]:
    """Largest room: living room; then kitchen, bedroom, bathroom (smallest), then the rest."""
    by_area = sorted(rooms, key=lambda r: -r.area)
    kinds: dict[int, str] = {by_area[0].index: "living room"}
    if len(rooms) > 1:
        kinds[by_area[-1].index] = "bathroom"
    rest = [r for r in by_area if r.index not in kinds]
    queue = ["kitchen", "bedroom"]
    extras = [k for k in ROOM_TYPES if k not in ("living room", "kitchen", "bedroom", "bathroom")]
    queue += list(rng.permutation(extras + ["bedroom"]))
    for room, kind in zip(rest, queue):
        kinds[room.index] = str(kind)
    return [dataclasses.replace(r, kind=kinds.get(r.index, "bedroom")) for r in rooms]
