"""Scene triangles to the cells of the navigation grid (:class:`memgym.scenes.navigation.NavGrid`).

No decision takes the first of several coincident faces, as a ray cast would (which one a ray
tracer reports differs between CPUs); every face counts:

* the vertical line through each cell centre is crossed with every triangle, each crossing
  counted exactly once (a centre on an edge shared by two triangles goes to one of them by a
  top-left rule on exactly antisymmetric edge functions): :func:`column_floors`;
* a face meeting the vertical rectangle between two walkable neighbouring centres, within the
  agent's body, marks the centre behind it: :func:`crossed_cells`;
* walkable surface triangles (a navmesh's polygons) cover the cells whose centres they contain
  near the floor level: :func:`surface_floors`.

Grids are given by their ``frame`` ``(x0, z0, nx, nz)``: the corner of cell ``(0, 0)`` (metres)
and the number of columns (x) and rows (z); cells are ``agent.cell_size`` metres.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from scipy import ndimage

from memgym.scenes.agent_spec import AgentSpec


def edge_clearance(walkable: np.ndarray, cell: float) -> np.ndarray:
    """``(nz, nx)`` metres from each cell centre to the nearest centre of a non-walkable cell; outside
    the grid counts as non-walkable (a wall on the mesh's bounds keeps the agent a radius away)."""
    return ndimage.distance_transform_edt(np.pad(walkable, 1))[1:-1, 1:-1] * cell


def grid_frame(bounds: np.ndarray, cell: float) -> tuple[float, float, int, int]:
    """``(x0, z0, nx, nz)``: the corner and size of the grid of ``cell``-metre cells covering the
    ``(2, 3)`` ``bounds`` (float32 rounding past a whole number of cells does not add a row)."""
    box = np.asarray(bounds, np.float64)
    x0, z0 = float(box[0, 0]), float(box[0, 2])
    nx = max(1, math.ceil((box[1, 0] - x0) / cell - 1e-3))
    nz = max(1, math.ceil((box[1, 2] - z0) / cell - 1e-3))
    return x0, z0, nx, nz


RASTER_CHUNK = 1 << 20
"""About how many (triangle, cell) candidates one rasterisation step holds (bounds the memory)."""
COINCIDENT = 1e-3
"""Surfaces closer than this (metres) in height are one surface (coincident faces, rounding)."""
_PARALLEL = 1e-4
"""A face whose unit normal has a smaller component along a grid axis runs along that axis."""
_TOUCH = 1e-4
"""A face this close (metres) to a segment between neighbouring cell centres meets it, so that
faces through (or within rounding of) centres give the same cells whichever side they lie."""
_SLACK = 0.01
"""How far (cells) a triangle's box is widened when listing the centres or segments it may
meet: more than rounding and ``_TOUCH``, so the exact tests see every candidate."""


def chunks(counts: np.ndarray, limit: int) -> Iterator[slice]:
    """Consecutive slices of items whose ``counts`` sum to about ``limit`` (at least one item each)."""
    ends = np.cumsum(counts)
    start = 0
    while start < len(counts):
        base = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + limit, side="right")))
        yield slice(start, stop)
        start = stop


def index_range(
    lo: np.ndarray, hi: np.ndarray, first: float, count: int, slack: float
) -> tuple[np.ndarray, np.ndarray]:
    """First index and number of indices ``k`` in ``[0, count)`` whose points ``first + k`` (in
    cells) lie in ``[lo - slack, hi + slack]`` (in cells)."""
    start = np.maximum(np.ceil(lo - first - slack).astype(np.int64), 0)
    stop = np.minimum(np.floor(hi - first + slack).astype(np.int64), count - 1)
    return start, np.maximum(stop - start + 1, 0)


def _centre_ranges(tri: np.ndarray, frame: tuple[float, float, int, int], cell: float, slack: float):
    """``(lo, size)`` ``(T, 2)``: first column/row and number of columns/rows of the cells whose
    centres can fall in each triangle's box seen from above, widened by ``slack`` cells."""
    x0, z0, nx, nz = frame
    (x_lo, x_hi), (z_lo, z_hi) = _span(tri, 0), _span(tri, 2)
    lo_x, n_x = index_range((x_lo - x0) / cell, (x_hi - x0) / cell, 0.5, nx, slack)
    lo_z, n_z = index_range((z_lo - z0) / cell, (z_hi - z0) / cell, 0.5, nz, slack)
    return np.stack([lo_x, lo_z], 1), np.stack([n_x, n_z], 1)


def _span(tri: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``(T,)`` smallest and largest coordinate ``axis`` of each triangle of ``(T, 3, 3)``."""
    a, b, c = tri[:, 0, axis], tri[:, 1, axis], tri[:, 2, axis]
    return np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c)


def pairs(lo: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (item, column, row) of items with ``(T, 2)`` first column/row ``lo`` and ``size``."""
    counts = size[:, 0] * size[:, 1]
    which = np.repeat(np.arange(len(lo)), counts)
    k = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    width = np.maximum(size[which, 0], 1)
    return which, lo[which, 0] + k % width, lo[which, 1] + k // width


def _surface_samples(
    tri: np.ndarray, lo: np.ndarray, size: np.ndarray, frame: tuple[float, float, int], cell: float
) -> tuple[np.ndarray, np.ndarray]:
    """Grid cells whose centres lie inside triangles ``tri`` ``(T, 3, 3)`` seen from above.

    ``lo``/``size`` ``(T, 2)``: first column/row and number of columns/rows of each triangle's
    candidate cells; ``frame``: grid corner ``(x0, z0)`` and columns ``nx``. Returns the flat
    cell index and the surface height (metres) of every covered cell centre.
    """
    x0, z0, nx = frame
    which, cols, rows = pairs(lo, size)
    a, b, c = tri[which, 0], tri[which, 1], tri[which, 2]
    px, pz = x0 + (cols + 0.5) * cell - a[:, 0], z0 + (rows + 0.5) * cell - a[:, 2]
    e1x, e1z, e2x, e2z = b[:, 0] - a[:, 0], b[:, 2] - a[:, 2], c[:, 0] - a[:, 0], c[:, 2] - a[:, 2]
    det = e1x * e2z - e2x * e1z
    flat = np.abs(det) < 1e-12  # vertical or degenerate: covers no cell centre
    det = np.where(flat, 1.0, det)
    u, v = (px * e2z - e2x * pz) / det, (e1x * pz - px * e1z) / det
    eps = 1e-9
    inside = ~flat & (u >= -eps) & (v >= -eps) & (u + v <= 1 + eps)
    height = (a[:, 1] + u * (b[:, 1] - a[:, 1]) + v * (c[:, 1] - a[:, 1]))[inside]
    return (rows * nx + cols)[inside], height


def surface_floors(
    tri: np.ndarray, frame: tuple[float, float, int, int], cell: float, floor_height: float, level_band: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(nz, nx)`` walkable cells and surface heights (metres) of walkable surface triangles ``tri``
    ``(T, 3, 3)``: a cell is walkable when its centre lies inside a triangle (seen from above) whose
    height there is within ``level_band`` of ``floor_height``; where triangles overlap (stacked
    floors, stairs) the one nearest the floor level gives the height."""
    x0, z0, nx, nz = frame
    lo, size = _centre_ranges(tri, frame, cell, slack=0.0)
    best = np.full(nz * nx, np.inf)  # |surface height - floor level| of the chosen surface
    heights = np.full(nz * nx, floor_height, np.float32)
    for window in chunks(size[:, 0] * size[:, 1], RASTER_CHUNK):
        cells, height = _surface_samples(tri[window], lo[window], size[window], (x0, z0, nx), cell)
        gap = np.abs(height - floor_height)
        keep = gap <= level_band
        cells, gap, height = cells[keep], gap[keep], height[keep]
        order = np.lexsort((gap, cells))  # per cell, the surface nearest the floor level first
        first = order[np.r_[True, np.diff(cells[order]) != 0]] if len(order) else order
        better = first[gap[first] < best[cells[first]]]
        best[cells[better]], heights[cells[better]] = gap[better], height[better]
    return np.isfinite(best).reshape(nz, nx), heights.reshape(nz, nx)


def _crossings(tri: np.ndarray, normal: np.ndarray, frame: tuple[float, float, int, int], cell: float):
    """Where vertical lines through cell centres cross triangles ``tri`` ``(T, 3, 3)`` (normals
    ``normal`` ``(T, 3)``), exactly once
    per surface: a centre on an edge or vertex shared by triangles belongs to one of them.

    Each edge function is computed from the edge's lexicographically smaller end, so the two
    triangles of a shared edge get exactly negated values, and a centre on the edge goes to the
    triangle for which the edge runs towards +z (or -x): a top-left rule. Along a row of centres
    an edge function is monotone (also in floating point), so each triangle's cells in a row are
    found by bisection, not one by one. Returns the flat cell index, the height (metres) and the
    triangle index of every crossing.
    """
    x0, z0, nx, nz = frame
    lo, size = _centre_ranges(tri, frame, cell, slack=_SLACK)  # centres on a box edge are tested too
    ccw = -normal[:, 1]  # > 0: counter-clockwise in (x, z), as the edge functions (exactly: float32 input)
    keep = np.flatnonzero((ccw != 0) & (size[:, 0] > 0) & (size[:, 1] > 0))  # vertical ones cross no line
    edges = _edge_functions(tri[keep], ccw[keep] < 0)
    tr, row, left, count = _row_runs(edges, lo[keep], size[keep], frame, cell)
    item = np.repeat(np.arange(len(tr)), count)
    cols = left[item] + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    rows, which = row[item], tr[item]
    slope = -normal[keep][:, [0, 2]] / normal[keep][:, 1:2]  # dy/dx, dy/dz of the triangle's plane
    base = tri[keep[which], 0]
    px, pz = x0 + (cols + 0.5) * cell, z0 + (rows + 0.5) * cell
    height = base[:, 1] + slope[which, 0] * (px - base[:, 0]) + slope[which, 1] * (pz - base[:, 2])
    return rows * nx + cols, height, keep[which]


def _edge_functions(tri: np.ndarray, clockwise: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(kx, kz, k0, owns)``, each ``(T, 3)``: per triangle of ``tri`` ``(T, 3, 3)`` (``clockwise``
    ``(T,) bool`` in (x, z)) and edge, ``e(x, z) = kx x + kz z + k0``, positive inside, computed from
    the edge's canonical (lexicographically smaller) end, and whether a centre on the edge belongs
    to the triangle (the top-left rule of :func:`_crossings`)."""
    a, b, c = (tri[:, i][:, [0, 2]] for i in range(3))
    flip = clockwise[:, None]
    xz = np.stack([a, np.where(flip, c, b), np.where(flip, b, c)], axis=1)
    p, q = xz[:, [1, 2, 0]], xz[:, [2, 0, 1]]
    swap = (q[..., 0] < p[..., 0]) | ((q[..., 0] == p[..., 0]) & (q[..., 1] < p[..., 1]))
    start, step = np.where(swap[..., None], q, p), np.where(swap[..., None], p - q, q - p)
    sign = np.where(swap, -1.0, 1.0)
    kx, kz = sign * -step[..., 1], sign * step[..., 0]
    k0 = sign * (step[..., 1] * start[..., 0] - step[..., 0] * start[..., 1])
    direction = q - p
    owns = (direction[..., 1] > 0) | ((direction[..., 1] == 0) & (direction[..., 0] < 0))
    return kx, kz, k0, owns


def _row_runs(
    edges: tuple[np.ndarray, ...], lo: np.ndarray, size: np.ndarray, frame: tuple[float, float, int, int], cell: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One item per (triangle, row of candidate centres): ``(triangle, row, first column, number of
    columns)`` of the centres inside the triangle, found by bisection on each of its ``edges``
    (:func:`_edge_functions`); ``lo``/``size`` ``(T, 2)``: first column/row and their numbers."""
    x0, z0 = frame[0], frame[1]
    kx, kz, k0, owns = edges
    tr = np.repeat(np.arange(len(lo)), size[:, 1])
    row = lo[tr, 1] + np.arange(len(tr)) - np.repeat(np.cumsum(size[:, 1]) - size[:, 1], size[:, 1])
    first = lo[tr, 0]
    left, right = first.copy(), first + size[tr, 0] - 1
    empty = size[tr, 0] == 0
    const = kz[tr] * (z0 + (row[:, None] + 0.5) * cell) + k0[tr]
    for j in range(3):
        k, c, own = kx[tr, j], const[:, j], owns[tr, j]
        rising = k > 0
        # a: the first column in [first, last + 1] where the edge test equals `rising` (it holds
        # from there on for a rising edge function, fails from there on for a falling one)
        a, b = first.copy(), first + size[tr, 0]
        active = np.flatnonzero(a < b)
        while len(active):
            mid = (a[active] + b[active]) // 2
            e = k[active] * (x0 + (mid + 0.5) * cell) + c[active]
            flip = ((e > 0) | ((e == 0) & own[active])) == rising[active]
            b[active] = np.where(flip, mid, b[active])
            a[active] = np.where(flip, a[active], mid + 1)
            active = active[a[active] < b[active]]
        left = np.where(rising, np.maximum(left, a), left)
        right = np.where(k < 0, np.minimum(right, a - 1), right)
        empty |= (k == 0) & ~((c > 0) | ((c == 0) & own))
    return tr, row, left, np.where(empty, 0, np.maximum(right - left + 1, 0))


def column_floors(
    tri: np.ndarray, normal: np.ndarray, frame: tuple[float, float, int, int], agent: AgentSpec, floor_height: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(nz, nx)`` walkable cells and surface heights from every surface of ``tri`` ``(T, 3, 3)``
    (outward normals ``normal`` ``(T, 3)``) crossing the vertical line through each cell centre.

    The agent stands on the highest upward surface (slope below ``max_slope``) within
    ``max_climb`` of the floor level; the cell is walkable when no other surface lies between
    1 mm above it and the agent's head (``floor_height + height``) and the point just above it is
    in no closed solid: the faces above it, counted +1 facing up and -1 facing down, sum to 0 or
    less (a wall standing on the floor, its bottom face coincident with the floor's top, gives 1).
    """
    x0, z0, nx, nz = frame
    cell = agent.cell_size
    cells, y, which = _crossings(tri, normal, frame, cell)
    n = normal[which]
    facing = np.sign(n[:, 1])
    upright = n[:, 1] >= math.cos(math.radians(agent.max_slope)) * np.linalg.norm(n, axis=1)
    support = upright & (np.abs(y - floor_height) <= agent.max_climb)
    stand = np.full(nz * nx, -np.inf)
    np.maximum.at(stand, cells[support], y[support])
    above = y > stand[cells] + COINCIDENT
    blocked = np.zeros(nz * nx, bool)
    blocked[cells[above & (y <= floor_height + agent.height)]] = True
    winding = np.bincount(cells[above], weights=facing[above], minlength=nz * nx)
    walkable = np.isfinite(stand) & ~blocked & (winding < 0.5)
    heights = np.where(walkable, stand, floor_height).astype(np.float32)
    return walkable.reshape(nz, nx), heights.reshape(nz, nx)


def crossed_cells(
    tri: np.ndarray,
    normal: np.ndarray,
    frame: tuple[float, float, int, int],
    agent: AgentSpec,
    floor_height: float,
    walkable: np.ndarray,
) -> np.ndarray:
    """``(nz, nx) bool``: walkable cells that a face of ``tri`` ``(T, 3, 3)`` (outward normals
    ``normal`` ``(T, 3)``) separates from a walkable neighbour.

    A face meeting (within ``_TOUCH``) the vertical rectangle between two neighbouring
    ``walkable`` cell centres, from ``max_climb`` (plus 1 mm) to ``height`` above the floor
    level, marks the centre behind it (the one its normal points away from). Faces of solids
    thicker than a cell lie between a walkable and a rejected centre and mark nothing; a wall
    thinner than a cell, down to a single quad, marks the centres on both sides (one for a
    one-sided quad), so it is never walked through.
    """
    x0, z0, nx, nz = frame
    cell = agent.cell_size
    y_lo, y_hi = floor_height + agent.max_climb + COINCIDENT, floor_height + agent.height
    y_min, y_max = _span(tri, 1)
    in_body = (y_min <= y_hi) & (y_max >= y_lo)
    t, normal = tri[in_body], normal[in_body]
    length = np.linalg.norm(normal, axis=1)
    blocked = np.zeros((nz, nx), bool)
    for axis, across, n_along, n_across, o_along, o_across in ((0, 2, nx, nz, x0, z0), (2, 0, nz, nx, z0, x0)):
        crossing = np.abs(normal[:, axis]) > _PARALLEL * length
        if n_along < 2 or not crossing.any():
            continue
        ta, side = t[crossing], normal[crossing, axis] < 0
        # segment k joins the centres k and k + 1 along the axis: k + 1 cells +- half a cell
        (a_lo, a_hi), (c_lo, c_hi) = _span(ta, axis), _span(ta, across)
        lo_a, n_a = index_range((a_lo - o_along) / cell - 0.5, (a_hi - o_along) / cell + 0.5, 1.0, n_along - 1, _SLACK)
        lo_c, n_c = index_range((c_lo - o_across) / cell, (c_hi - o_across) / cell, 0.5, n_across, _SLACK)
        lo, size = np.stack([lo_a, lo_c], 1), np.stack([n_a, n_c], 1)
        half = np.full(3, _TOUCH)  # widened a little: a face through a centre marks both its segments
        half[axis] += cell / 2
        half[1] += (y_hi - y_lo) / 2
        free = walkable if axis == 0 else walkable.T  # free[across index, along index]
        for w in chunks(size[:, 0] * size[:, 1], max(1, RASTER_CHUNK // 8)):
            which, k, r = pairs(lo[w], size[w])
            both = free[r, k] & free[r, k + 1]
            which, k, r = which[both], k[both], r[both]
            centre = np.empty((len(which), 3))
            centre[:, axis], centre[:, 1], centre[:, across] = o_along + (k + 1) * cell, (y_lo + y_hi) / 2, o_across
            centre[:, across] += (r + 0.5) * cell
            tw = ta[w][which]
            hit = _meets_box(tw[:, 0] - centre, tw[:, 1] - centre, tw[:, 2] - centre, half)
            behind = (k + side[w][which])[hit]  # the solid lies on the side the normal points away from
            if axis == 0:
                blocked[r[hit], behind] = True
            else:
                blocked[behind, r[hit]] = True
    return blocked


def _meets_box(v0: np.ndarray, v1: np.ndarray, v2: np.ndarray, half: np.ndarray) -> np.ndarray:
    """``(K,) bool``: whether triangles ``(K, 3)`` x 3 (relative to a box centre) meet the
    axis-aligned box of half-sizes ``half`` ``(3,)`` (zero allowed); touching counts.
    Separating-axis test: the box axes, the triangle normal and the 9 edge x axis products."""
    meets = np.ones(len(v0), bool)
    for k in range(3):
        coords = np.stack([v0[:, k], v1[:, k], v2[:, k]])
        meets &= (coords.min(0) <= half[k]) & (coords.max(0) >= -half[k])
    edges = (v1 - v0, v2 - v1, v0 - v2)
    normal = np.cross(edges[0], edges[1])
    meets &= np.abs((normal * v0).sum(1)) <= np.abs(normal) @ half
    for e in edges:
        for k in range(3):  # the axis unit_k x e: components i, j are -e_j, e_i
            i, j = (k + 1) % 3, (k + 2) % 3
            p0, p1, p2 = (e[:, i] * v[:, j] - e[:, j] * v[:, i] for v in (v0, v1, v2))
            radius = np.abs(e[:, j]) * half[i] + np.abs(e[:, i]) * half[j]
            meets &= (np.minimum(np.minimum(p0, p1), p2) <= radius) & (np.maximum(np.maximum(p0, p1), p2) >= -radius)
    return meets
