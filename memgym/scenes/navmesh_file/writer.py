"""Writing ``.navmesh`` files that habitat-sim and Detour load: convex polygons
(:func:`write_navmesh`) or navigable grid cells (:func:`write_grid_navmesh`)."""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.scenes.navmesh_file.format import (
    DETAIL,
    DT_EXT_LINK,
    DT_NAVMESH_MAGIC,
    DT_NAVMESH_VERSION,
    DT_VERTS_PER_POLYGON,
    MESH_HEADER,
    NAVMESHSET_MAGIC,
    POLY,
    POLYFLAGS_WALK,
    SET_HEADER,
    SETTINGS,
    NavMeshSettings,
    align4,
)


def write_navmesh(
    path: str | Path,
    polygons: Sequence[np.ndarray],
    *,
    flags: Sequence[int] | None = None,
    areas: Sequence[int] | None = None,
    walkable_height: float = 1.5,
    walkable_radius: float = 0.1,
    walkable_climb: float = 0.2,
    cell_size: float = 0.05,
    settings: NavMeshSettings | None = None,
) -> Path:
    """Write convex polygons as a one-tile navmesh that habitat-sim's ``loadNavMesh`` reads.

    Args:
        path: output file.
        polygons: ``(k, 3)`` vertices (metres, Y up) of each convex polygon, 3 <= k <= 6; either
            winding (they are stored in Detour's). Polygons sharing an edge (the same two
            vertices) become Detour neighbours; Detour cannot link polygons that share only part
            of an edge inside a tile (see :func:`write_grid_navmesh` for grid cells).
        flags: per-polygon flags (default habitat's walk flag, 1).
        areas: per-polygon area ids < 64 (default 0, habitat's ground).
        walkable_height, walkable_radius, walkable_climb: the agent the area was made for (m);
            ``walkable_radius`` is how far the area already keeps from obstacles.
        cell_size: the Recast cell size (sets the tile's BV quantisation factor).
        settings: when given, a version-2 file carrying these habitat-sim settings; else version 1.

    Tiles have no detail vertices (each polygon is fan-triangulated, as Detour does for a mesh
    without detail data), no BV tree (Detour then searches polygons linearly) and no off-mesh
    connections; link space is reserved as ``dtCreateNavMeshData`` does.
    """
    loops = [_detour_winding(np.asarray(p, np.float64), i) for i, p in enumerate(polygons)]
    count = len(loops)
    flags = np.full(count, POLYFLAGS_WALK, np.uint16) if flags is None else np.asarray(flags, np.uint16)
    areas = np.zeros(count, np.uint8) if areas is None else np.asarray(areas, np.uint8)
    if len(flags) != count or len(areas) != count or (areas >= 64).any():
        raise MemgymError(f"write_navmesh: need one flag and one area id (< 64) per polygon ({count} polygons)")
    agent = (walkable_height, walkable_radius, walkable_climb, cell_size)
    tile, bounds = _tile_data(loops, flags, areas, 0, None, agent)
    extent = bounds[1] - bounds[0]
    return _write_set(Path(path), [(tile, count)], (*bounds[0], extent[0], extent[2]), settings)


def write_grid_navmesh(
    path: str | Path,
    navigable: np.ndarray,
    heights: np.ndarray,
    origin: Sequence[float],
    cell: float,
    *,
    walkable_height: float = 1.5,
    walkable_radius: float = 0.1,
    walkable_climb: float = 0.2,
    settings: NavMeshSettings | None = None,
) -> Path:
    """Export navigable grid cells (e.g. a :class:`~memgym.scenes.navigation.NavGrid`'s) as a navmesh.

    Args:
        path: output file.
        navigable: ``(nz, nx) bool`` cells; row ``r``, column ``c`` spans
            ``x in origin[0] + [c, c + 1) * cell``, ``z in origin[1] + [r, r + 1) * cell``.
        heights: ``(nz, nx)`` surface height of each cell, metres.
        origin: ``(x, z)`` corner of cell ``(0, 0)``.
        cell: cell size, metres.
        walkable_height, walkable_radius, walkable_climb, settings: as in :func:`write_navmesh`.

    Each grid row becomes one tile holding one flat quad per run of cells (at the run's mean
    height); the quads' edges on the row borders are Detour portals, which Detour links to the
    overlapping quads of the neighbouring rows when it adds the tiles, so the runs need not meet
    edge to edge.
    """
    navigable = np.asarray(navigable, bool)
    nz, nx = navigable.shape
    agent = (walkable_height, walkable_radius, walkable_climb, cell)
    x0, x1 = float(origin[0]), float(origin[0]) + nx * cell
    tiles, low = [], math.inf
    for row in range(nz):
        edges = np.flatnonzero(np.diff(np.concatenate([[0], navigable[row].astype(np.int8), [0]])))
        if not len(edges):
            continue
        z0, z1 = float(origin[1]) + row * cell, float(origin[1]) + (row + 1) * cell
        quads = []
        for c0, c1 in zip(edges[::2], edges[1::2]):
            y = float(np.mean(heights[row, c0:c1]))
            xa, xb = x0 + c0 * cell, x0 + c1 * cell
            quads.append(np.array([[xa, y, z0], [xa, y, z1], [xb, y, z1], [xb, y, z0]]))
        walk = np.full(len(quads), POLYFLAGS_WALK, np.uint16)
        tile, bounds = _tile_data(quads, walk, np.zeros(len(quads), np.uint8), row, (x0, z0, x1, z1), agent)
        tiles.append((tile, len(quads)))
        low = min(low, float(bounds[0, 1]))
    origin3 = (x0, 0.0 if not tiles else low, float(origin[1]))
    return _write_set(Path(path), tiles, (*origin3, nx * cell, cell), settings)


def _tile_data(
    loops: list[np.ndarray],
    flags: np.ndarray,
    areas: np.ndarray,
    tile_y: int,
    border: tuple[float, float, float, float] | None,
    agent: tuple[float, float, float, float],
) -> tuple[bytes, np.ndarray]:
    """``(Detour tile bytes, (2, 3) bounds)`` of Detour-wound ``loops`` at tile ``(0, tile_y)``.

    Edges on the ``border`` box ``(x0, z0, x1, z1)`` become portals to the neighbouring tiles.
    ``agent`` is ``(walkable height, radius, climb, cell size)``.
    """
    count = len(loops)
    points = np.concatenate(loops).astype(np.float32) if loops else np.zeros((0, 3), np.float32)
    vertices, inverse = np.unique(points, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(vertices) > 0xFFFF:
        raise MemgymError(f"write_navmesh: {len(vertices)} distinct vertices, one Detour tile holds at most 65535")
    starts = np.cumsum([0] + [len(p) for p in loops])
    indices = [inverse[starts[i] : starts[i + 1]] for i in range(count)]
    polys, details, tris, portals = _polygon_records(indices, vertices, flags, areas, border)
    bmin = vertices.min(0) if len(vertices) else np.zeros(3, np.float32)
    bmax = vertices.max(0) if len(vertices) else np.zeros(3, np.float32)
    if border is not None:
        bmin[[0, 2]], bmax[[0, 2]] = border[:2], border[2:]
    height, radius, climb, cell_size = agent
    max_links = sum(len(v) for v in indices) + 2 * portals  # as dtCreateNavMeshData reserves them
    header = MESH_HEADER.pack(
        DT_NAVMESH_MAGIC, DT_NAVMESH_VERSION, 0, tile_y, 0, 0,
        count, len(vertices), max_links, count, 0, len(tris), 0, 0, count,
        height, radius, climb, *bmin, *bmax, 1.0 / cell_size,
    )  # fmt: skip
    sections = [
        header,
        vertices.astype("<f4").tobytes(),
        polys.tobytes(),
        bytes(12 * max_links),
        details.tobytes(),
        np.asarray(tris, np.uint8).reshape(-1, 4).tobytes(),
    ]
    return b"".join(s + bytes(align4(len(s)) - len(s)) for s in sections), np.stack([bmin, bmax])


def _polygon_records(
    indices: list[np.ndarray],
    vertices: np.ndarray,
    flags: np.ndarray,
    areas: np.ndarray,
    border: tuple[float, float, float, float] | None,
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int, int]], int]:
    """``(dtPoly records, dtPolyDetail records, detail triangles, number of portal edges)`` of the
    polygons whose vertex ``indices`` into ``vertices`` ``(V, 3)`` are in Detour's winding: shared
    edges link neighbours, edges on ``border`` become portals, each polygon is fan-triangulated."""
    count = len(indices)
    polys = np.zeros(count, POLY)
    polys["flags"], polys["area_and_type"] = flags, areas
    edge_owner = {(int(v[j]), int(v[(j + 1) % len(v)])): i for i, v in enumerate(indices) for j in range(len(v))}
    tris = []
    details = np.zeros(count, DETAIL)
    portals = 0
    for i, v in enumerate(indices):
        n = len(v)
        polys["vert_count"][i] = n
        polys["verts"][i, :n] = v
        for j in range(n):
            a, b = int(v[j]), int(v[(j + 1) % n])
            side = _border_side(vertices[a], vertices[b], border)
            if (b, a) in edge_owner:
                polys["neis"][i, j] = edge_owner[(b, a)] + 1
            elif side is not None:
                polys["neis"][i, j] = DT_EXT_LINK | side
                portals += 1
        details["tri_base"][i], details["tri_count"][i] = len(tris), n - 2
        for j in range(2, n):  # the fan dtCreateNavMeshData builds without detail data, with edge flags
            tris.append((0, j - 1, j, (1 << 2) | (1 if j == 2 else 0) | ((1 << 4) if j == n - 1 else 0)))
    return polys, details, tris, portals


def _border_side(a: np.ndarray, b: np.ndarray, border: tuple[float, float, float, float] | None) -> int | None:
    """Detour's side code (0 +x, 2 +z, 4 -x, 6 -z) of the edge ``a -> b`` when it lies on ``border``."""
    if border is None:
        return None
    x0, z0, x1, z1 = border
    for side, axis, value in ((0, 0, x1), (2, 2, z1), (4, 0, x0), (6, 2, z0)):
        if abs(a[axis] - value) < 1e-5 and abs(b[axis] - value) < 1e-5:
            return side
    return None


def _write_set(
    path: Path, tiles: list[tuple[bytes, int]], params: tuple[float, ...], settings: NavMeshSettings | None
) -> Path:
    """Write the set header (``params``: origin x, y, z, tile width, tile height), settings and tiles."""
    tile_bits = max(len(tiles) - 1, 0).bit_length()  # ilog2(nextPow2(maxTiles)), as dtNavMesh::init
    max_polys = max([count for _, count in tiles] + [1])
    poly_bits = (max_polys - 1).bit_length()
    if tile_bits + poly_bits > 22:
        raise MemgymError(
            f"write_navmesh: {len(tiles)} tiles of up to {max_polys} polygons leave Detour fewer than 10 salt bits"
        )
    version = 1 if settings is None else 2
    out = [SET_HEADER.pack(NAVMESHSET_MAGIC, version, len(tiles), *params, len(tiles), max_polys)]
    if settings is not None:
        block = SETTINGS.pack(*dataclasses.astuple(settings))
        out.append(block + bytes(align4(len(block)) - len(block)))
    for index, (tile, _) in enumerate(tiles):
        tile_ref = (1 << (poly_bits + tile_bits)) | (index << poly_bits)  # salt 1, tile index
        out += [struct.pack("<Ii", tile_ref, len(tile)), tile]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(out))
    return path


def _detour_winding(loop: np.ndarray, index: int) -> np.ndarray:
    """The convex polygon ``loop`` ``(k, 3)`` in Detour's winding; a clear error if it is not one."""
    if loop.ndim != 2 or loop.shape[1] != 3 or not 3 <= len(loop) <= DT_VERTS_PER_POLYGON:
        raise MemgymError(f"write_navmesh: polygon {index} must be (k, 3) with 3 <= k <= 6, got {loop.shape}")
    x, z = loop[:, 0], loop[:, 2]
    cross = (np.roll(x, -1) - x) * (np.roll(z, -2) - np.roll(z, -1)) - (np.roll(z, -1) - z) * (
        np.roll(x, -2) - np.roll(x, -1)
    )
    if not ((cross > 0).all() or (cross < 0).all()):
        raise MemgymError(f"write_navmesh: polygon {index} is not strictly convex in the (x, z) plane")
    return loop if cross[0] < 0 else loop[::-1]
