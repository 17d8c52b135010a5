"""Navigable floor, islands, geodesic distance and shortest paths on a fine grid.

:class:`NavGrid` is computed from the scene's triangles for a cylinder agent (:class:`AgentSpec`)
(:meth:`NavGrid.from_mesh`). No decision takes the first of several coincident faces, as a ray
cast would (which one a ray tracer reports differs between CPUs); every face counts:

* (:mod:`memgym.scenes.nav_raster`) the vertical line through each cell centre is crossed with every triangle, each crossing
  counted exactly once (a centre on an edge shared by two triangles goes to one of them by a
  top-left rule on exactly antisymmetric edge functions). The agent stands on the highest
  upward surface (slope below ``max_slope``) within ``max_climb`` of the floor level; the cell is
  walkable when no other surface lies between it and the agent's head (``floor_height +
  height``) and the point just above it is inside no closed solid: the faces above it, counted
  +1 facing up and -1 facing down, sum to 0 or less. A wall standing on the floor, its bottom
  face coincident with the floor's top face, sums to 1 and is not walked on;
* a face meeting the vertical rectangle between two such walkable neighbouring centres, within
  the agent's body (above ``max_climb``, below ``height``), marks the centre behind it: walls
  thinner than a cell, down to a single quad, separate the cells on their two sides.

Walkable cells closer than ``radius`` to a non-walkable cell or to the grid's edge are removed
(the cylinder must fit). Of the rest, the distance from each cell centre to the faces in the
agent's body is measured exactly (:mod:`memgym.scenes.clearance`): a cell whose centre keeps
``radius`` plus half a cell diagonal is *navigable* (every point of it keeps the full radius:
poses, snapping, islands, the follower's steps), one whose centre keeps the radius is *passable*
(geodesics may pass it, as a navmesh eroded by the radius at its cells would; Recast and
habitat-sim do that). Each set is split into 8-connected islands. Alternatively
(:meth:`NavGrid.from_surface_triangles`) the walkable cells are the cells whose centres a given
walkable surface covers near the floor level, e.g. the polygons of a habitat-sim navmesh
(``memgym.scenes.navmesh_file``), already eroded by its agent radius.

Geodesic distance is found by Dijkstra on the 16-neighbour graph of the passable cells (the 8
neighbours and the 8 knight moves, no corner cutting: an 8-connected graph's octile metric is up
to 8% off the Euclidean one, enough to choose the longer way round an obstacle; 16 neighbours
keep it within 3%) and the resulting cell path is shortened by string pulling, so open space gives
straight-line distances rather than grid ones, and each of its corners is then pulled taut (moved
to the passable cell centre within 4 cells that shortens its two legs most). A pulled segment
stays on navigable cells or keeps the radius by the centre clearances (a point ``p`` of cell
``c`` keeps at least the clearance of ``c`` less ``|p - c|``), so the path keeps the radius
wherever it leaves the navigable cells. Cells are 2.5 cm (``AgentSpec.cell_size``). Geodesics are
within 3% of an independent shortest path on a 3 cm raster of the points that keep the radius
on DialogMem's 12 default houses (tests/scenes/test_clearance.py, docs/embodied.md); passages
whose band of such points is narrower than a cell (gaps 0.34-0.37 m wide) are open or closed
depending on where the cell centres fall. The follower (:meth:`NavGrid.next_waypoint`) walks the
navigable cells only. Points are snapped to the nearest navigable cell (a geodesic's ends on
passable cells stay where they are) within ``snap_distance`` metres horizontally, like Habitat's
``snap_point``; a point farther away is reported ``off_navmesh`` and the distance is ``inf``,
as is a goal on another island (``unreachable``). Vertical position is ignored: one grid covers
one floor level.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import ndimage

from memgym.scenes.agent_spec import AgentSpec
from memgym.scenes.cell_graph import CellGraph
from memgym.scenes.clearance import centre_clearances, clearance_reach
from memgym.scenes.nav_raster import column_floors, crossed_cells, edge_clearance, grid_frame, surface_floors

GeodesicStatus = Literal["ok", "start_off_navmesh", "goal_off_navmesh", "unreachable"]
LEVEL_BAND = 0.5
"""How far (metres) a navmesh surface may lie above or below the floor level and still count as
that floor: habitat-sim's ``isNavigable`` default ``maxYDelta`` (Recast heights are voxelised)."""


@dataclasses.dataclass(frozen=True)
class GeodesicResult:
    """Outcome of a geodesic query.

    Attributes:
        distance: path length in metres (``inf`` unless ``status == "ok"``).
        path: ``(K, 3)`` waypoints from the snapped start to the snapped goal (empty if none).
        status: ``ok``, ``start_off_navmesh``, ``goal_off_navmesh`` or ``unreachable``.
        goal_index: index of the goal reached (of the goals passed), -1 if none.
    """

    distance: float
    path: np.ndarray
    status: GeodesicStatus
    goal_index: int = -1


class NavGrid:
    """Navigable cells of one floor level (see the module docstring).

    Args:
        walkable: ``(nz, nx) bool`` walkable surface before the radius erosion.
        heights: ``(nz, nx) float32`` surface height (metres) of each cell.
        origin: ``(x, z)`` of the corner of cell ``(0, 0)``.
        agent: the agent body.
        floor_height: the floor level the grid was built for, metres.
        erosion: how far (metres) navigable cells must be from non-walkable ones and the grid's edge;
            default the agent radius (0 for a surface that already keeps the radius away from obstacles).
        clearance: ``(nz, nx) float`` metres from each cell centre to the nearest face in the agent's
            body (:func:`memgym.scenes.clearance.centre_clearances`; ``inf`` where farther than
            :func:`~memgym.scenes.clearance.clearance_reach`); default none measured. Cells keeping
            the reach are navigable; cells keeping only the radius are passable (geodesics only).
    """

    def __init__(
        self,
        walkable: np.ndarray,
        heights: np.ndarray,
        origin: tuple[float, float],
        agent: AgentSpec,
        floor_height: float,
        erosion: float | None = None,
        clearance: np.ndarray | None = None,
    ) -> None:
        self.agent = agent
        self.cell = agent.cell_size
        self.origin = np.asarray(origin, float)
        self.floor_height = float(floor_height)
        self.heights = heights.astype(np.float32)
        self.navigable = edge_clearance(walkable, self.cell) > (agent.radius if erosion is None else erosion)
        self.passable = self.navigable.copy()
        # how much more than the radius each passable centre keeps (inf: unmeasured; -inf: not passable)
        self._spare = np.where(self.navigable, np.inf, -np.inf)
        if clearance is not None:
            self.passable &= clearance >= agent.radius
            self.navigable &= clearance >= clearance_reach(agent)
            self._spare = np.where(self.passable, clearance - agent.radius, -np.inf)
        self.islands, self.num_islands = ndimage.label(self.navigable, structure=np.ones((3, 3), bool))
        sizes = np.bincount(self.islands.ravel(), minlength=self.num_islands + 1)
        sizes[0] = 0
        self.largest_island = int(np.argmax(sizes)) if self.num_islands else 0
        self._island_sizes = sizes
        # nearest navigable cell of every cell, for snapping
        _, nearest = ndimage.distance_transform_edt(~self.navigable, return_indices=True)
        self._nearest = nearest
        self._walk = CellGraph(self.navigable, self.cell, self.islands)
        self._route_graph: CellGraph | None = None
        self._targets: OrderedDict[tuple[bytes, tuple[int, ...], int], dict[int, np.ndarray]] = OrderedDict()

    # ----- construction -----------------------------------------------------------------------
    @classmethod
    def from_mesh(cls, triangles: np.ndarray, bounds: np.ndarray, agent: AgentSpec, floor_height: float) -> NavGrid:
        """Build the grid from the scene's triangles ``(T, 3, 3)`` (metres) over the ``(2, 3)`` ``bounds``.

        Every decision reads all triangles, never the first of several coincident ones (see the
        module docstring): walls flush with the floor or with other walls, overlapping walls and
        zero-thickness walls give the same grid on any CPU.
        """
        cell = agent.cell_size
        x0, z0, nx, nz = grid_frame(bounds, cell)
        tri = np.asarray(triangles, np.float32).reshape(-1, 3, 3).astype(np.float64)  # as the render mesh
        normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])  # outward for counter-clockwise faces
        walkable, heights = column_floors(tri, normal, (x0, z0, nx, nz), agent, floor_height)
        walkable &= ~crossed_cells(tri, normal, (x0, z0, nx, nz), agent, floor_height, walkable)
        candidates = walkable & (edge_clearance(walkable, cell) > agent.radius)  # the others are not navigable
        clearance = centre_clearances(tri, (x0, z0, nx, nz), agent, floor_height, candidates)
        return cls(walkable, heights, (x0, z0), agent, floor_height, clearance=clearance)

    @classmethod
    def from_surface_triangles(
        cls,
        triangles: np.ndarray,
        bounds: np.ndarray,
        agent: AgentSpec,
        floor_height: float,
        *,
        level_band: float = LEVEL_BAND,
        erosion: float = 0.0,
        obstacles: np.ndarray | None = None,
    ) -> NavGrid:
        """Build the grid from walkable surface triangles ``(T, 3, 3)`` (metres), e.g. a navmesh's.

        A cell is walkable when its centre lies inside a triangle (seen from above) whose height
        there is within ``level_band`` of ``floor_height``; where triangles overlap (stacked
        floors, stairs) the one nearest the floor level gives the height. ``erosion`` is the
        extra clearance to remove (a navmesh is already eroded by the radius it was built for).
        With the scene's triangles ``obstacles`` ``(T, 3, 3)``, cells too close to a face in the
        agent's body are removed as in :meth:`from_mesh` (a navmesh keeps its radius only at its
        own voxel resolution).
        """
        cell = agent.cell_size
        x0, z0, nx, nz = grid_frame(bounds, cell)
        tri = np.asarray(triangles, np.float64).reshape(-1, 3, 3)
        walkable, heights = surface_floors(tri, (x0, z0, nx, nz), cell, floor_height, level_band)
        clearance = None
        if obstacles is not None:
            candidates = walkable & (edge_clearance(walkable, cell) > erosion)
            clearance = centre_clearances(obstacles, (x0, z0, nx, nz), agent, floor_height, candidates)
        return cls(walkable, heights, (x0, z0), agent, floor_height, erosion, clearance)

    @property
    def _route(self) -> CellGraph:
        """The graph geodesics search: the passable cells (built on first use; the walking graph
        when every passable cell is navigable)."""
        if self._route_graph is None:
            extra = bool((self.passable & ~self.navigable).any())
            self._route_graph = CellGraph(self.passable, self.cell) if extra else self._walk
        return self._route_graph

    # ----- cells and points -------------------------------------------------------------------
    def cell_of(self, position: Sequence[float]) -> tuple[int, int]:
        """``(row z, col x)`` of the cell containing ``position`` (clamped to the grid)."""
        nz, nx = self.navigable.shape
        col = min(max(int((position[0] - self.origin[0]) // self.cell), 0), nx - 1)
        row = min(max(int((position[2] - self.origin[1]) // self.cell), 0), nz - 1)
        return row, col

    def cell_center(self, row: int, col: int) -> np.ndarray:
        """``(3,)`` world point at the centre of a cell, on its surface."""
        return np.array(
            [
                self.origin[0] + (col + 0.5) * self.cell,
                float(self.heights[row, col]),
                self.origin[1] + (row + 0.5) * self.cell,
            ]
        )

    def _centres(self, cells: np.ndarray) -> np.ndarray:
        """``(K, 3)`` world points at the centres of ``cells`` ``(K, 2)`` (row, col), on their surface."""
        return np.stack(
            [
                self.origin[0] + (cells[:, 1] + 0.5) * self.cell,
                self.heights[cells[:, 0], cells[:, 1]].astype(float),
                self.origin[1] + (cells[:, 0] + 0.5) * self.cell,
            ],
            axis=1,
        )

    def _inside(self, position: Sequence[float]) -> bool:
        x, z = position[0] - self.origin[0], position[2] - self.origin[1]
        nz, nx = self.navigable.shape
        return 0 <= x < nx * self.cell and 0 <= z < nz * self.cell

    def is_navigable(self, position: Sequence[float]) -> bool:
        """Whether the agent (its base centre) fits at ``position`` (vertical ignored)."""
        return self._inside(position) and bool(self.navigable[self.cell_of(position)])

    def island_of(self, position: Sequence[float]) -> int:
        """Island label of the cell under ``position`` (0 = not navigable)."""
        return int(self.islands[self.cell_of(position)]) if self._inside(position) else 0

    def snap(self, position: Sequence[float]) -> np.ndarray | None:
        """Nearest navigable point within ``snap_distance`` (``(3,)``), or None."""
        row, col = self.cell_of(position)
        if not self.navigable.any():
            return None
        nrow, ncol = self._nearest[0][row, col], self._nearest[1][row, col]
        point = self.cell_center(nrow, ncol)
        if self.navigable[row, col] and self._inside(position):
            point = np.array([position[0], point[1], position[2]], float)
        if math.hypot(point[0] - position[0], point[2] - position[2]) > self.agent.snap_distance:
            return None
        return point

    def island_points_near(self, position: Sequence[float], island: int) -> np.ndarray:
        """``(K, 3)`` centres of the cells of ``island`` within ``snap_distance`` (horizontal) of
        ``position``, nearest first (ties in cell order)."""
        reach = self.agent.snap_distance
        row0, col0 = self.cell_of((position[0] - reach, 0.0, position[2] - reach))
        row1, col1 = self.cell_of((position[0] + reach, 0.0, position[2] + reach))
        rows, cols = np.nonzero(self.islands[row0 : row1 + 1, col0 : col1 + 1] == island)
        rows, cols = rows + row0, cols + col0
        xs = self.origin[0] + (cols + 0.5) * self.cell
        zs = self.origin[1] + (rows + 0.5) * self.cell
        distance = np.hypot(xs - position[0], zs - position[2])
        order = np.lexsort((cols, rows, distance))
        order = order[distance[order] <= reach]
        return np.stack([xs[order], self.heights[rows[order], cols[order]].astype(float), zs[order]], axis=1)

    def sample_navigable(self, rng: np.random.Generator, island: int | None = None) -> np.ndarray:
        """A uniformly random navigable cell centre (on ``island``, default the largest)."""
        island = self.largest_island if island is None else island
        cells = np.argwhere(self.islands == island)
        if len(cells) == 0:
            raise ValueError(f"island {island} has no navigable cells")
        row, col = cells[rng.integers(len(cells))]
        return self.cell_center(int(row), int(col))

    def line_of_sight(self, a: Sequence[float], b: Sequence[float]) -> bool:
        """Whether the straight segment ``a -> b`` stays on navigable cells."""
        return self.free_fraction(a, b) >= 1.0

    def free_fraction(self, a: Sequence[float], b: Sequence[float]) -> float:
        """Fraction (0..1) of the segment ``a -> b`` the agent covers before leaving the floor."""
        a, b = np.asarray(a, float), np.asarray(b, float)
        length = math.hypot(b[0] - a[0], b[2] - a[2])
        steps = max(2, int(math.ceil(length / (self.cell * 0.5))) + 1)
        ts = np.linspace(0.0, 1.0, steps)
        xs = a[0] + ts * (b[0] - a[0]) - self.origin[0]
        zs = a[2] + ts * (b[2] - a[2]) - self.origin[1]
        nz, nx = self.navigable.shape
        cols, rows = np.floor(xs / self.cell).astype(int), np.floor(zs / self.cell).astype(int)
        ok = (cols >= 0) & (cols < nx) & (rows >= 0) & (rows < nz)
        ok[ok] = self.navigable[rows[ok], cols[ok]]
        if ok.all():
            return 1.0
        first_bad = int(np.argmin(ok))
        return float(ts[max(first_bad - 1, 0)])

    # ----- geodesics ------------------------------------------------------------------------
    def geodesic(self, start: Sequence[float], goals: np.ndarray | Sequence[Sequence[float]]) -> GeodesicResult:
        """Shortest path from ``start`` to the nearest of ``goals`` (``(K, 3)`` or one ``(3,)``)."""
        goals = np.atleast_2d(np.asarray(goals, float))
        empty = np.zeros((0, 3))
        s = self._snap_passable(start)
        if s is None:
            return GeodesicResult(math.inf, empty, "start_off_navmesh")
        snapped = [(i, self._snap_passable(g)) for i, g in enumerate(goals)]
        snapped = [(i, g) for i, g in snapped if g is not None]
        if not snapped:
            return GeodesicResult(math.inf, empty, "goal_off_navmesh")
        route = self._route
        island = route.islands[self.cell_of(s)]
        snapped = [(i, g) for i, g in snapped if route.islands[self.cell_of(g)] == island]
        if not snapped:
            return GeodesicResult(math.inf, empty, "unreachable")
        goal_nodes = {}
        for i, g in snapped:
            goal_nodes.setdefault(int(route.node_of[self.cell_of(g)]), (i, g))
        dist, pred, sources = route.field(tuple(sorted(goal_nodes)))
        node = int(route.node_of[self.cell_of(s)])
        if not np.isfinite(dist[node]):
            return GeodesicResult(math.inf, empty, "unreachable")
        chain = [node]
        while pred[chain[-1]] >= 0:
            chain.append(int(pred[chain[-1]]))
        goal_index, goal_point = goal_nodes[int(sources[node])]
        inner = self._centres(route.cells[chain[1:-1]])
        path = np.concatenate([s[None], inner, np.asarray(goal_point, float)[None]])
        path = self._tighten(self._string_pull(path, route=True), route=True)
        length = float(np.sum(np.hypot(np.diff(path[:, 0]), np.diff(path[:, 2]))))
        return GeodesicResult(length, path, "ok", goal_index)

    def next_waypoint(
        self, start: Sequence[float], goals: np.ndarray | Sequence[Sequence[float]], lookahead: float = 3.0
    ) -> tuple[np.ndarray, float] | None:
        """Where to head next on a shortest path to the nearest goal, cheaply (for followers).

        Returns ``(waypoint (3,), remaining distance m)`` — the farthest point of the cell path
        within ``lookahead`` metres that is in straight view, and the grid distance still to
        go — or None when no goal is reachable.
        """
        goals = np.atleast_2d(np.asarray(goals, float))
        s = self.snap(start)
        if s is None:
            return None
        goal_nodes = self._goal_nodes(goals, self.island_of(s))
        if not goal_nodes:
            return None
        walk = self._walk
        dist, pred, sources = walk.field(tuple(sorted(goal_nodes)))
        node = int(walk.node_of[self.cell_of(s)])
        if not np.isfinite(dist[node]):
            return None
        goal_point = goal_nodes[int(sources[node])]
        chain = [node]
        limit = int(lookahead / self.cell * 1.5)
        while pred[chain[-1]] >= 0 and len(chain) <= limit:
            chain.append(int(pred[chain[-1]]))
        points = self._centres(walk.cells[chain[1:]]).reshape(-1, 3)
        if pred[chain[-1]] < 0:  # the chain reached the goal cell: aim at the goal point itself
            points = (
                np.concatenate([points[:-1], np.asarray(goal_point, float)[None]]) if len(points) else goal_point[None]
            )
        k = self.visible_prefix(np.asarray(start, float), points) if len(points) else 0
        reached_goal = pred[chain[-1]] < 0
        if reached_goal and k == len(points):  # the goal is in straight view: exact distance
            remaining = math.hypot(goal_point[0] - start[0], goal_point[2] - start[2])
        else:
            remaining = float(dist[node])
        waypoint = points[max(k, 1) - 1] if len(points) else np.asarray(goal_point, float)
        return waypoint.copy(), remaining

    def _goal_nodes(self, goals: np.ndarray, island: int) -> dict[int, np.ndarray]:
        """Graph node -> snapped goal point of the first of ``goals`` ``(K, 3)`` snapping into each
        node of ``island`` (remembered for the last few goal sets: followers ask every step)."""
        key = (goals.tobytes(), goals.shape, island)
        if key in self._targets:
            return self._targets[key]
        goal_nodes: dict[int, np.ndarray] = {}
        for g in goals:
            snapped = self.snap(g)
            if snapped is not None and self.island_of(snapped) == island:
                goal_nodes.setdefault(int(self._walk.node_of[self.cell_of(snapped)]), snapped)
        self._targets[key] = goal_nodes
        if len(self._targets) > 16:
            self._targets.popitem(last=False)
        return goal_nodes

    def geodesic_distance(self, start: Sequence[float], goal: Sequence[float]) -> float:
        """Metres along the shortest navigable path, ``inf`` if there is none."""
        return self.geodesic(start, goal).distance

    def _snap_passable(self, position: Sequence[float]) -> np.ndarray | None:
        """``position`` on its surface when its cell is passable, else :meth:`snap`'s point."""
        if self._inside(position) and self.passable[self.cell_of(position)]:
            return np.array([position[0], float(self.heights[self.cell_of(position)]), position[2]], float)
        return self.snap(position)

    def _string_pull(self, path: np.ndarray, route: bool) -> np.ndarray:
        """Drop path points that the previous kept point sees directly (greedy funnel; ``route``:
        over the passable cells, see :meth:`_visible`)."""
        if len(path) <= 2:
            return path
        out = [path[0]]
        i = 0
        while i < len(path) - 1:
            visible = self._visible(path[i], path[i + 1 :], route=route)
            k = max(1, int(np.argmin(visible)) if not visible.all() else len(visible))
            i += k
            out.append(path[i])
        return np.array(out)

    def _tighten(self, path: np.ndarray, route: bool, reach: int = 4, passes: int = 3) -> np.ndarray:
        """Move each inner corner of a string-pulled ``path`` ``(K, 3)`` to the navigable (``route``:
        passable) cell centre within ``reach`` cells that shortens the two legs through it most
        while both stay in straight view (:meth:`_visible`), sampled every eighth of a cell (pulls
        corners taut against obstacles)."""
        mask = self.passable if route else self.navigable
        if len(path) <= 2:
            return path
        path = path.copy()
        offsets = np.array([(dz, dx) for dz in range(-reach, reach + 1) for dx in range(-reach, reach + 1)])
        for _ in range(passes):
            for i in range(1, len(path) - 1):
                row, col = self.cell_of(path[i])
                cells = offsets + (row, col)
                inside = (cells >= 0).all(axis=1) & (cells < self.navigable.shape).all(axis=1)
                cells = cells[inside]
                cells = cells[mask[cells[:, 0], cells[:, 1]]]
                points = self._centres(cells)
                legs = np.hypot(points[:, 0] - path[i - 1, 0], points[:, 2] - path[i - 1, 2])
                legs += np.hypot(points[:, 0] - path[i + 1, 0], points[:, 2] - path[i + 1, 2])
                seen = self._visible(path[i - 1], points, 0.125, route) & self._visible(
                    path[i + 1], points, 0.125, route
                )
                now = math.hypot(*(path[i] - path[i - 1])[[0, 2]]) + math.hypot(*(path[i] - path[i + 1])[[0, 2]])
                if seen.any() and legs[seen].min() < now - 1e-9:
                    path[i] = points[seen][np.argmin(legs[seen])]
        return path

    def visible_prefix(self, anchor: np.ndarray, points: np.ndarray) -> int:
        """How many of ``points`` ``(P, 3)``, in order, are seen from ``anchor`` over navigable cells."""
        visible = self._visible(anchor, points)
        return int(np.argmin(visible)) if not visible.all() else len(points)

    def _visible(self, anchor: np.ndarray, points: np.ndarray, step: float = 0.5, route: bool = False) -> np.ndarray:
        """``(P,) bool``: which of ``points`` ``(P, 3)`` are seen from ``anchor``, the segments
        sampled every ``step`` cells (or more densely): every sample on a navigable cell, or with
        ``route`` also samples on passable cells that keep the radius by the centre clearances: a
        sample ``p`` in cell ``c`` keeps at least the clearance of ``c`` less ``|p - c|``, and the
        points within half the sample spacing of it that much less."""
        dx, dz = points[:, 0] - anchor[0], points[:, 2] - anchor[2]
        longest = float(np.sqrt(dx * dx + dz * dz).max())
        samples = max(2, int(math.ceil(longest / (self.cell * step))) + 1)
        ts = np.linspace(0.0, 1.0, samples)[None, :]
        xs = anchor[0] - self.origin[0] + ts * dx[:, None]
        zs = anchor[2] - self.origin[1] + ts * dz[:, None]
        nz, nx = self.navigable.shape
        cols = np.clip(np.floor(xs / self.cell).astype(np.int64), 0, nx - 1)
        rows = np.clip(np.floor(zs / self.cell).astype(np.int64), 0, nz - 1)
        inside = (xs >= 0) & (zs >= 0) & (xs < nx * self.cell) & (zs < nz * self.cell)
        if not route:
            return (self.navigable[rows, cols] & inside).all(axis=1)
        spacing = longest / (samples - 1)
        off = np.hypot(xs - (cols + 0.5) * self.cell, zs - (rows + 0.5) * self.cell)
        keeps = self.navigable[rows, cols] | (self._spare[rows, cols] >= off + spacing / 2)
        return (keeps & inside).all(axis=1)
