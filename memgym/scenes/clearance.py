"""How far each cell centre is from the obstacles in the agent's body, from the exact geometry of the faces.

The walkable cells of :class:`~memgym.scenes.navigation.NavGrid` are decided at cell centres, so
an obstacle edge may lie anywhere between a walkable centre and its blocked neighbour, and a
point between centres (a traversal pose on a string-pulled path, a view point on a ring around an
object) may be up to half a cell diagonal from the centre of its cell. :func:`centre_clearances`
measures instead, for every walkable centre, the horizontal distance to the part of each face
that lies in the agent's body (from ``max_climb`` above the floor level to ``height``): the face
is clipped to that height band and projected onto the floor plane (a convex polygon of up to 5
corners), and the distance to it is exact (0 inside it). A cell whose centre keeps ``radius``
plus half a cell diagonal (:func:`clearance_reach`) is navigable: every point of it keeps the
full radius. A centre that keeps only the radius may still be passed through on the way
(geodesic distances use those cells too: a passage as wide as the agent stays open)."""

from __future__ import annotations

import math

import numpy as np

from memgym.scenes.agent_spec import AgentSpec
from memgym.scenes.nav_raster import COINCIDENT, RASTER_CHUNK, chunks, index_range, pairs


def clearance_reach(agent: AgentSpec) -> float:
    """How far (metres) a navigable cell centre stays from the faces in the agent's body: the
    radius plus half a cell diagonal, so every point of the cell keeps the radius."""
    return agent.radius + agent.cell_size * math.sqrt(0.5)


def centre_clearances(
    tri: np.ndarray, frame: tuple[float, float, int, int], agent: AgentSpec, floor_height: float, cells: np.ndarray
) -> np.ndarray:
    """``(nz, nx) float``: for the ``(nz, nx) bool`` ``cells`` asked about, the distance (metres)
    from the centre to the nearest face of ``tri`` ``(T, 3, 3)`` (metres) clipped to the body band
    (module docstring) where it is below :func:`clearance_reach`; ``inf`` elsewhere (farther, or
    not asked about). Below the radius the value is an upper bound (such a centre is not passed).

    ``frame``: grid corner ``(x0, z0)`` and size ``(nx, nz)`` in ``agent.cell_size`` cells.
    """
    x0, z0, nx, nz = frame
    cell, reach = agent.cell_size, clearance_reach(agent)
    y_lo, y_hi = floor_height + agent.max_climb + COINCIDENT, floor_height + agent.height
    poly = clip_to_band(np.asarray(tri, np.float64), y_lo, y_hi)[..., [0, 2]]  # (T, 5, 2) x, z
    lo_xz, hi_xz = poly.min(axis=1) - reach, poly.max(axis=1) + reach
    lo_x, n_x = index_range((lo_xz[:, 0] - x0) / cell, (hi_xz[:, 0] - x0) / cell, 0.5, nx, 0.0)
    lo_z, n_z = index_range((lo_xz[:, 1] - z0) / cell, (hi_xz[:, 1] - z0) / cell, 0.5, nz, 0.0)
    lo, size = np.stack([lo_x, lo_z], 1), np.stack([n_x, n_z], 1)
    gap = np.full((nz, nx), np.inf)
    for w in chunks(size[:, 0] * size[:, 1], RASTER_CHUNK // 4):
        which, cols, rows = pairs(lo[w], size[w])
        keep = cells[rows, cols] & (gap[rows, cols] >= agent.radius)  # a centre closer than the radius is settled
        which, cols, rows = which[keep], cols[keep], rows[keep]
        centres = np.stack([x0 + (cols + 0.5) * cell, z0 + (rows + 0.5) * cell], axis=1)
        distance = polygon_distance(poly[w][which], centres)
        near = distance < reach
        np.minimum.at(gap, (rows[near], cols[near]), distance[near])
    return gap


def clip_to_band(tri: np.ndarray, y_lo: float, y_hi: float) -> np.ndarray:
    """The parts of triangles ``tri`` ``(T, 3, 3)`` with ``y_lo <= y <= y_hi``: ``(T', 5, 3)``
    convex polygons, corners in order, the last corner repeated to fill 5; triangles entirely
    outside the band are left out."""
    poly = tri
    for level, keep_above in ((y_lo, True), (y_hi, False)):
        poly = _clip(poly, level, keep_above)
    return poly


def _clip(poly: np.ndarray, level: float, keep_above: bool) -> np.ndarray:
    """One Sutherland-Hodgman step: polygons ``(P, K, 3)`` cut by the plane ``y = level``, keeping
    the side above (or below) it; ``(P', K + 1, 3)`` with empty polygons left out."""
    if not len(poly):
        return np.zeros((0, poly.shape[1] + 1, 3))
    side = poly[..., 1] - level if keep_above else level - poly[..., 1]
    inside = side >= 0
    nxt = np.roll(poly, -1, axis=1)
    side_next, inside_next = np.roll(side, -1, axis=1), np.roll(inside, -1, axis=1)
    crosses = inside != inside_next
    t = np.where(crosses, side / np.where(crosses, side - side_next, 1.0), 0.0)
    cut = poly + t[..., None] * (nxt - poly)
    out = np.stack([poly, cut], axis=2).reshape(len(poly), -1, 3)  # per edge: its start, then the cut
    valid = np.stack([inside, crosses], axis=2).reshape(len(poly), -1)
    order = np.argsort(~valid, axis=1, kind="stable")  # valid corners first, in order
    count = valid.sum(axis=1)
    out = np.take_along_axis(out, order[..., None], axis=1)
    keep = count > 0
    out, count = out[keep], count[keep]
    width = poly.shape[1] + 1
    slot = np.minimum(np.arange(width)[None, :], count[:, None] - 1)  # repeat the last corner
    return np.take_along_axis(out, slot[..., None], axis=1)


def polygon_distance(poly: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``(K,)`` distance from each of ``points`` ``(K, 2)`` to the convex polygon ``poly``
    ``(K, C, 2)`` (corners in order, repeats allowed; 0 inside, exact for degenerate ones)."""
    ax, az = poly[..., 0], poly[..., 1]
    ex, ez = np.roll(ax, -1, axis=1) - ax, np.roll(az, -1, axis=1) - az
    rx, rz = points[:, :1] - ax, points[:, 1:] - az
    length2 = ex * ex + ez * ez
    t = np.clip((rx * ex + rz * ez) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0)
    gx, gz = rx - t * ex, rz - t * ez
    distance = np.sqrt((gx * gx + gz * gz).min(axis=1))
    cross = ex * rz - ez * rx
    area = (ax * (az + ez) - (ax + ex) * az).sum(axis=1)
    inside = (np.abs(area) > 1e-12) & ((cross >= 0).all(axis=1) | (cross <= 0).all(axis=1))
    return np.where(inside, 0.0, distance)
