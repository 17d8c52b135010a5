"""Procedural houses: the embedded default scene backend, deterministic by seed.

``generate_house(seed)`` builds a multi-room house (floor plan with walls, doorways and region
labels from :mod:`memgym.scenes.floorplan`), furnishes each room from the catalogue
(:mod:`memgym.scenes.catalog`: furniture against walls, in corners and free-standing, chairs at
tables, small objects on surfaces; with ``clutter``, the repeats of common categories real houses
have, :mod:`memgym.scenes.clutter`), computes view points for every object (navigable poses on
the main island from which a ray from the camera reaches the object) and derives attributes,
relations and a ``lang_desc`` per object. Objects with no view point are removed, so every
annotated object is reachable and visible. The same seed and config give the same house,
byte for byte.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.registry import register_scene
from memgym.core.seeding import ADDED_FIELD
from memgym.scenes import meshes
from memgym.scenes.catalog import CATEGORY_BY_NAME, COMPANIONS, ROOM_FURNITURE
from memgym.scenes.clutter import add_clutter, load_clutter
from memgym.scenes.floorplan import FloorPlan, Room, generate_floor_plan
from memgym.scenes.mesh_scene import MeshScene, PerTriangleLookup
from memgym.scenes.meshes import TriangleSoup
from memgym.scenes.navigation import AgentSpec
from memgym.scenes.objects import Region, Relation, SceneObject, ViewPoint
from memgym.scenes.placement import Placed, companions, door_zone, try_on, try_place
from memgym.scenes.view_points import compute_view_points

FLOOR_COLORS = {
    "living room": (0.55, 0.38, 0.22),
    "kitchen": (0.72, 0.7, 0.66),
    "bedroom": (0.7, 0.62, 0.5),
    "bathroom": (0.85, 0.87, 0.88),
    "dining room": (0.5, 0.33, 0.2),
    "office": (0.45, 0.47, 0.5),
    "hallway": (0.6, 0.45, 0.3),
}
WALL_COLORS = ((0.93, 0.9, 0.82), (0.85, 0.9, 0.93), (0.9, 0.86, 0.8), (0.88, 0.92, 0.85), (0.95, 0.95, 0.95))
CEILING_COLOR = (0.97, 0.97, 0.97)


@dataclasses.dataclass(frozen=True)
class HouseConfig:
    """Knobs of house generation (all lengths in metres)."""

    min_rooms: int = dataclasses.field(default=4, metadata={"help": "fewest rooms", "min": 1})
    max_rooms: int = dataclasses.field(default=7, metadata={"help": "most rooms", "min": 1})
    room_area: float = dataclasses.field(default=18.0, metadata={"help": "mean floor area per room, m^2"})
    wall_height: float = dataclasses.field(default=2.6, metadata={"help": "wall and ceiling height"})
    wall_thickness: float = dataclasses.field(default=0.1, metadata={"help": "wall thickness"})
    door_width: float = dataclasses.field(default=1.0, metadata={"help": "doorway width"})
    small_object_prob: float = dataclasses.field(default=0.75, metadata={"help": "chance a surface gets small objects"})
    camera_height: float = dataclasses.field(default=1.25, metadata={"help": "eye height used for view points"})
    max_view_points: int = dataclasses.field(default=6, metadata={"help": "view points kept per object"})
    clutter: str = dataclasses.field(
        default="none",
        metadata={
            "help": "real-house clutter: none, hm3d or hm3d_v2 (repeats of common categories after HM3D-Semantics; "
            "memgym/configs/houses/clutter_<name>.yaml) or a clutter statistics YAML file (memgym.scenes.clutter)",
            **ADDED_FIELD,
        },
    )

    def __post_init__(self) -> None:
        if not 1 <= self.min_rooms <= self.max_rooms:
            raise MemgymError(
                f"house config: need 1 <= min_rooms <= max_rooms, got min_rooms={self.min_rooms}, "
                f"max_rooms={self.max_rooms} (set both when moving one past the other's default)"
            )
        load_clutter(self.clutter)  # an unreadable statistics file is a config error now


@register_scene("procedural")
class ProceduralHouse(MeshScene):
    """A generated house (see the module docstring); build one with :func:`generate_house`.

    Extra attributes: ``seed``, ``config``, ``floor_plan`` and ``semantic_table`` (instance id ->
    ``(category, region_id)`` for every id the semantic sensor reports, walls and floors included).
    """

    seed: int
    config: HouseConfig
    floor_plan: FloorPlan
    semantic_table: dict[int, tuple[str, int]]
    soup: TriangleSoup

    @classmethod
    def from_spec(cls, spec) -> ProceduralHouse:
        """The house of ``spec.seed`` with ``spec.options["house"]`` / ``["agent"]`` overrides."""
        from memgym.core.config import build_config

        house = build_config(HouseConfig, spec.options.get("house", {}), where="scene options.house")
        agent = build_config(AgentSpec, spec.options.get("agent", {}), where="scene options.agent")
        return generate_house(spec.seed, house, agent)


def generate_house(seed: int, config: HouseConfig | None = None, agent: AgentSpec | None = None) -> ProceduralHouse:
    """Generate the house of ``seed`` (a non-negative int); same inputs give the same house."""
    if seed < 0:
        raise MemgymError(f"house seed must be non-negative, got {seed}")
    config = config or HouseConfig()
    agent = agent or AgentSpec()
    for attempt in range(20):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), attempt, 0x484F555345])))
        house = _try_generate(rng, seed, config, agent)
        if house is not None:
            return house
    raise MemgymError(f"could not generate a connected house for seed {seed} in 20 attempts")


def _try_generate(rng: np.random.Generator, seed: int, config: HouseConfig, agent: AgentSpec) -> ProceduralHouse | None:
    num_rooms = int(rng.integers(config.min_rooms, config.max_rooms + 1))
    area = num_rooms * config.room_area * float(rng.uniform(0.85, 1.15))
    aspect = float(rng.uniform(1.1, 1.6))
    width, depth = round(math.sqrt(area * aspect), 2), round(math.sqrt(area / aspect), 2)
    plan = generate_floor_plan(rng, num_rooms=num_rooms, width=width, depth=depth, door_width=config.door_width)
    structure, table = _structure(rng, plan, config)
    placed = _furnish(rng, plan, config)
    next_id = max(table) + 1
    for _ in range(3):
        object_ids = list(range(next_id, next_id + len(placed)))
        soup = TriangleSoup.concatenate([structure] + [_with_id(p.mesh, sid) for p, sid in zip(placed, object_ids)])
        regions = [Region(region_id=r.index, name=r.kind, bounds=_inner(r, config.wall_thickness)) for r in plan.rooms]
        house = ProceduralHouse(
            soup.vertices,
            soup.triangles,
            PerTriangleLookup(soup.colors, soup.semantic),
            regions=regions,
            agent=agent,
            floor_height=0.0,
            scene_id=f"procedural-{seed}",
        )
        nav = house.navgrid
        for region in regions:
            x0, z0, x1, z1 = region.bounds
            r0, c0 = nav.cell_of((x0, 0, z0))
            r1, c1 = nav.cell_of((x1, 0, z1))
            if not (nav.islands[r0 : r1 + 1, c0 : c1 + 1] == nav.largest_island).any():
                return None  # a room is cut off: try another layout
        views = [_view_points(house, p, sid, config) for p, sid in zip(placed, object_ids)]
        missing = {i for i, v in enumerate(views) if not v}
        # an object without view points goes, and so do the objects standing on it
        missing |= {i for i, p in enumerate(placed) if p.support in missing}
        if not missing:
            break
        keep = [i for i in range(len(placed)) if i not in missing]
        remap = {old: new for new, old in enumerate(keep)}
        placed = [dataclasses.replace(placed[i], support=remap.get(placed[i].support)) for i in keep]
    else:
        return None
    for sid, p in zip(object_ids, placed):
        table[sid] = (p.category.name, p.room.index)
    house.set_objects(_annotate(placed, object_ids, views))
    house.seed, house.config, house.floor_plan, house.semantic_table, house.soup = seed, config, plan, table, soup
    return house


def _with_id(mesh: TriangleSoup, sid: int) -> TriangleSoup:
    return dataclasses.replace(mesh, semantic=np.full(mesh.num_triangles, sid, np.int32))


def _inner(room: Room, t: float) -> tuple[float, float, float, float]:
    return (room.x0 + t / 2, room.z0 + t / 2, room.x1 - t / 2, room.z1 - t / 2)


def _structure(rng, plan: FloorPlan, config: HouseConfig):
    """Floors (one per room, inset to the wall faces), doorway thresholds, walls, ceiling."""
    t, h = config.wall_thickness, config.wall_height
    parts: list[TriangleSoup] = []
    table: dict[int, tuple[str, int]] = {}
    sid = 1
    for room in plan.rooms:
        x0, z0, x1, z1 = _inner(room, t)
        parts.append(
            meshes.box(((x0 + x1) / 2, -0.05, (z0 + z1) / 2), (x1 - x0, 0.1, z1 - z0), FLOOR_COLORS[room.kind], sid)
        )
        table[sid] = ("floor", room.index)
        sid += 1
    for door in plan.doorways:
        size = (t + 0.002, 0.1, door.width) if door.axis == "x" else (door.width, 0.1, t + 0.002)
        floor_id = door.a + 1  # floors were numbered 1..rooms above
        parts.append(meshes.box((door.x, -0.05, door.z), size, FLOOR_COLORS[plan.rooms[door.a].kind], floor_id))
    wall_color = WALL_COLORS[int(rng.integers(len(WALL_COLORS)))]
    for wall in plan.walls:
        for p0, p1 in wall.solid_pieces():
            lo = p0 - t / 2 if abs(p0 - wall.start) < 1e-9 else p0
            hi = p1 + t / 2 if abs(p1 - wall.end) < 1e-9 else p1
            mid = (lo + hi) / 2
            if wall.axis == "x":
                parts.append(meshes.box((wall.coord, h / 2, mid), (t, h, hi - lo), wall_color, sid))
            else:
                parts.append(meshes.box((mid, h / 2, wall.coord), (hi - lo, h, t), wall_color, sid))
            table[sid] = ("wall", _room_at(plan, wall, mid))
            sid += 1
    parts.append(
        meshes.box(
            (plan.width / 2, h + 0.05, plan.depth / 2), (plan.width + t, 0.1, plan.depth + t), CEILING_COLOR, sid
        )
    )
    table[sid] = ("ceiling", -1)
    return TriangleSoup.concatenate(parts), table


def _room_at(plan: FloorPlan, wall, along: float) -> int:
    x, z = (wall.coord, along) if wall.axis == "x" else (along, wall.coord)
    for room in plan.rooms:
        if room.x0 - 1e-6 <= x <= room.x1 + 1e-6 and room.z0 - 1e-6 <= z <= room.z1 + 1e-6:
            return room.index
    return -1


# ----- furnishing ---------------------------------------------------------------------------------
def max_house_objects(config: HouseConfig) -> int:
    """An upper bound on the objects of any house generated from ``config``, read off
    :func:`_furnish`: per room, every furniture entry of its kind placed with its most companions,
    at most 2 small objects on each of those, and the most clutter of its kind; the largest room
    kind times ``max_rooms``."""
    stats = load_clutter(config.clutter)
    per_room = []
    for kind, furniture in ROOM_FURNITURE.items():
        floor = sum(1 + (COMPANIONS[name][2] if name in COMPANIONS else 0) for name, _ in furniture)
        clutter = sum(high for _, high in stats.rooms.get(kind, {}).values()) if stats is not None else 0
        per_room.append(3 * floor + clutter)
    return config.max_rooms * max(per_room)


def _furnish(rng, plan: FloorPlan, config: HouseConfig) -> list[Placed]:
    """Furniture per room (each kind of its room type with its probability), small objects on
    the surfaces placed so far, then clutter; every draw in this fixed order."""
    t = config.wall_thickness
    placed: list[Placed] = []
    for room in plan.rooms:
        _furnish_room(
            rng, room, _inner(room, t), [door_zone(d) for d in plan.doorways if room.index in (d.a, d.b)], placed
        )
    for index in range(len(placed)):
        support = placed[index]
        if support.category.surface and rng.uniform() < config.small_object_prob:
            _put_on(rng, index, placed)
    stats = load_clutter(config.clutter)
    if stats is not None:  # after every furnishing draw: the same seed keeps its furniture
        for room in plan.rooms:
            blocked = [door_zone(d) for d in plan.doorways if room.index in (d.a, d.b)]
            add_clutter(rng, stats, room, _inner(room, t), blocked, placed)
    return placed


def _furnish_room(rng, room: Room, inner, blocked: list, placed: list[Placed]) -> None:
    """Each furniture kind of ``room``'s type, drawn with its probability and placed (15 tries;
    with its companions), appended to ``placed``."""
    for name, prob in ROOM_FURNITURE[room.kind]:
        if rng.uniform() >= prob:
            continue
        category = CATEGORY_BY_NAME[name]
        for _ in range(15):
            item = try_place(rng, category, room, inner, blocked, placed)
            if item is not None:
                placed.append(item)
                if name in COMPANIONS:
                    companions(rng, item, inner, blocked, placed)
                break


def _put_on(rng, index: int, placed: list[Placed]) -> None:
    """One or two small objects that may stand on ``placed[index]`` (8 tries each), appended."""
    options = [c for c in CATEGORY_BY_NAME.values() if placed[index].category.name in c.supports]
    for _ in range(int(rng.integers(1, 3))):
        if not options:
            break
        category = options[int(rng.integers(len(options)))]
        for _ in range(8):
            item = try_on(rng, category, index, placed)
            if item is not None:
                placed.append(item)
                break


# ----- view points and annotations ----------------------------------------------------------------
def _view_points(house: ProceduralHouse, item: Placed, sid: int, config: HouseConfig) -> list[ViewPoint]:
    return compute_view_points(
        house, sid, item.aabb, camera_height=config.camera_height, max_view_points=config.max_view_points
    )


def _tuple3(v) -> tuple[float, float, float]:
    return (round(float(v[0]), 4), round(float(v[1]), 4), round(float(v[2]), 4))


def _annotate(placed: list[Placed], ids: list[int], views: list[list[ViewPoint]]) -> list[SceneObject]:
    object_ids = [f"{p.category.name.replace(' ', '_')}_{sid}" for p, sid in zip(placed, ids)]
    boxes = [p.aabb for p in placed]
    objects = []
    for i, p in enumerate(placed):
        relations = []
        if p.support is not None:
            relations.append(Relation(kind="on", target=object_ids[p.support]))
        near = []
        for j, q in enumerate(placed):
            if j == i or q.room.index != p.room.index or (p.support is None) != (q.support is None):
                continue
            if p.support is not None and p.support != q.support:
                continue
            gap = _aabb_gap(boxes[i], boxes[j])
            if gap < (0.5 if p.support is None else 0.3):
                near.append((gap, j))
        relations += [Relation(kind="next_to", target=object_ids[j]) for _, j in sorted(near)[:3]]
        relations.append(Relation(kind="in_region", target=p.room.kind))
        lo, hi = boxes[i]
        desc = f"the {p.color} {p.material} {p.category.name}"
        if p.support is not None:
            desc += f" on the {placed[p.support].category.name}"
        elif near:
            desc += f" next to the {placed[sorted(near)[0][1]].category.name}"
        desc += f" in the {p.room.kind}"
        objects.append(
            SceneObject(
                object_id=object_ids[i],
                semantic_id=ids[i],
                category=p.category.name,
                position=_tuple3((lo + hi) / 2),
                size=_tuple3(hi - lo),
                yaw=round(float(p.yaw), 4),
                region_id=p.room.index,
                region=p.room.kind,
                attributes={"color": p.color, "material": p.material, "size": p.size_label},
                relations=tuple(relations),
                view_points=tuple(views[i]),
                lang_desc=desc,
            )
        )
    return objects


def _aabb_gap(a: np.ndarray, b: np.ndarray) -> float:
    dx = max(0.0, float(max(a[0, 0], b[0, 0]) - min(a[1, 0], b[1, 0])))
    dz = max(0.0, float(max(a[0, 2], b[0, 2]) - min(a[1, 2], b[1, 2])))
    return math.hypot(dx, dz)
