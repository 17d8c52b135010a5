"""Read and write habitat-sim's ``.navmesh`` files (a Recast/Detour tile set) without habitat-sim.

Layout (little-endian, the structs written raw by habitat-sim's ``PathFinder::saveNavMesh`` and
laid out by recastnavigation's ``dtCreateNavMeshData``; Detour built with 32-bit poly refs, as
habitat-sim builds it)::

    NavMeshSetHeader   int magic ('MSET'), int version (1 or 2), int numTiles,
                       dtNavMeshParams: float orig[3], tileWidth, tileHeight; int maxTiles, maxPolys
    NavMeshSettings    version 2 only: 13 floats (cellSize, cellHeight, agentHeight, agentRadius,
                       agentMaxClimb, agentMaxSlope, regionMinSize, regionMergeSize, edgeMaxLen,
                       edgeMaxError, vertsPerPoly, detailSampleDist, detailSampleMaxError) + 3 bools
    numTiles x         NavMeshTileHeader (uint32 tileRef, int dataSize), then dataSize bytes:
        dtMeshHeader   int magic ('DNAV'), version (7), x, y, layer; uint userId; int polyCount,
                       vertCount, maxLinkCount, detailMeshCount, detailVertCount, detailTriCount,
                       bvNodeCount, offMeshConCount, offMeshBase; float walkableHeight,
                       walkableRadius, walkableClimb, bmin[3], bmax[3], bvQuantFactor  (100 bytes)
        sections, each padded to 4 bytes: verts float[3] x vertCount (world coordinates);
        dtPoly (32 bytes: uint firstLink, ushort verts[6], neis[6], flags, uchar vertCount,
        areaAndtype = area | type << 6) x polyCount; dtLink (12 bytes) x maxLinkCount;
        dtPolyDetail (12 bytes: uint vertBase, triBase, uchar vertCount, triCount) x
        detailMeshCount; detail verts float[3] x detailVertCount; detail tris uchar[4] x
        detailTriCount; dtBVNode (16 bytes) x bvNodeCount; dtOffMeshConnection (36 bytes) x
        offMeshConCount.

Tile headers with 64-bit refs (``DT_POLYREF64`` builds: 16-byte tile headers, 16-byte links) are
recognised too. Coordinates are in the navmesh's own frame: Habitat's Y-up world frame for
habitat-sim files. Polygons are convex, 3-6 vertices, wound as Detour winds them (clockwise in
the (x, z) plane: negative ``sum(x_i z_{i+1} - x_{i+1} z_i)``); polygons with habitat's walk flag
(``flags & 1``) that are not off-mesh connections are walkable. Detail triangles refine their
heights.

:func:`write_navmesh` writes convex polygons as one tile, :func:`write_grid_navmesh` navigable
grid cells as one tile per row linked through Detour portals; both load in Detour (checked with
recastnavigation's own WebAssembly build, see ``tests/support/data/make_recast_wall.mjs``).
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.paths import require_file

NAVMESHSET_MAGIC = ord("M") << 24 | ord("S") << 16 | ord("E") << 8 | ord("T")
NAVMESHSET_VERSIONS = (1, 2)
DT_NAVMESH_MAGIC = ord("D") << 24 | ord("N") << 16 | ord("A") << 8 | ord("V")
DT_NAVMESH_VERSION = 7
DT_VERTS_PER_POLYGON = 6
DT_POLYTYPE_OFFMESH_CONNECTION = 1
DT_EXT_LINK = 0x8000
POLYFLAGS_WALK = 0x01
"""habitat-sim's walkable flag (its query filter includes only polygons carrying it)."""

_SET_HEADER = struct.Struct("<3i3f2f2i")  # magic, version, numTiles, dtNavMeshParams
_MESH_HEADER = struct.Struct("<5iI9i3f3f3ff")
_SETTINGS = struct.Struct("<13f3?")
_POLY = np.dtype(
    [
        ("first_link", "<u4"),
        ("verts", "<u2", (DT_VERTS_PER_POLYGON,)),
        ("neis", "<u2", (DT_VERTS_PER_POLYGON,)),
        ("flags", "<u2"),
        ("vert_count", "u1"),
        ("area_and_type", "u1"),
    ]
)
_DETAIL = np.dtype(
    [("vert_base", "<u4"), ("tri_base", "<u4"), ("vert_count", "u1"), ("tri_count", "u1"), ("pad", "u1", 2)]
)
_BV_NODE_SIZE = 16
_OFFMESH_SIZE = 36
_MAX_SETTINGS_BYTES = 512


class NavMeshFileError(MemgymError):
    """A ``.navmesh`` file that is not a habitat-sim / Detour tile set this reader understands."""


@dataclasses.dataclass(frozen=True)
class NavMeshSettings:
    """habitat-sim's ``NavMeshSettings`` (stored in version-2 files); lengths in metres."""

    cell_size: float = 0.05
    cell_height: float = 0.2
    agent_height: float = 1.5
    agent_radius: float = 0.1
    agent_max_climb: float = 0.2
    agent_max_slope: float = 45.0
    region_min_size: float = 20.0
    region_merge_size: float = 20.0
    edge_max_len: float = 12.0
    edge_max_error: float = 1.3
    verts_per_poly: float = 6.0
    detail_sample_dist: float = 6.0
    detail_sample_max_error: float = 1.0
    filter_low_hanging_obstacles: bool = True
    filter_ledge_spans: bool = True
    filter_walkable_low_height_spans: bool = True


@dataclasses.dataclass(frozen=True)
class NavMeshTile:
    """One Detour tile.

    Attributes:
        x, y, layer: the tile's place in the tile grid.
        vertices: ``(V, 3) float32`` polygon vertices, metres, navmesh frame.
        polygons: per polygon, its ``(k,)`` vertex indices (k = 3..6; 2 for off-mesh links).
        neighbours: ``(P, 6) uint16`` Detour ``neis`` (0: border, i + 1: polygon i of this tile,
            0x8000 set: a portal to another tile).
        flags: ``(P,) uint16`` polygon flags.
        areas: ``(P,) uint8`` area ids.
        types: ``(P,) uint8`` 0 ground, 1 off-mesh connection.
        detail_triangles: per ground polygon, ``(T, 3, 3) float32`` triangles of its detail mesh.
        walkable_height, walkable_radius, walkable_climb: the agent the tile was built for, m.
        bounds: ``(2, 3)`` tile bounding box.
    """

    x: int
    y: int
    layer: int
    vertices: np.ndarray
    polygons: tuple[np.ndarray, ...]
    neighbours: np.ndarray
    flags: np.ndarray
    areas: np.ndarray
    types: np.ndarray
    detail_triangles: tuple[np.ndarray, ...]
    walkable_height: float
    walkable_radius: float
    walkable_climb: float
    bounds: np.ndarray

    def walkable(self) -> np.ndarray:
        """``(P,) bool``: ground polygons carrying habitat's walk flag."""
        return (self.types != DT_POLYTYPE_OFFMESH_CONNECTION) & ((self.flags & POLYFLAGS_WALK) != 0)


@dataclasses.dataclass(frozen=True)
class NavMesh:
    """A parsed ``.navmesh`` file (see the module docstring)."""

    path: str
    version: int
    origin: tuple[float, float, float]
    tile_width: float
    tile_height: float
    max_tiles: int
    max_polys: int
    settings: NavMeshSettings | None
    tiles: tuple[NavMeshTile, ...]

    def walkable_polygons(self) -> list[np.ndarray]:
        """``(k, 3)`` vertex arrays of every walkable polygon, tile by tile."""
        out = []
        for tile in self.tiles:
            for poly, ok in zip(tile.polygons, tile.walkable()):
                if ok:
                    out.append(tile.vertices[poly])
        return out

    def walkable_triangles(self) -> np.ndarray:
        """``(T, 3, 3) float32`` detail triangles of every walkable polygon (the surface Detour uses)."""
        parts = [
            tris
            for tile in self.tiles
            for tris, ok in zip(tile.detail_triangles, tile.walkable()[: len(tile.detail_triangles)])
            if ok
        ]
        return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 3, 3), np.float32)

    @property
    def agent_radius(self) -> float:
        """Radius (m) the walkable area was eroded by: the tiles' ``walkableRadius`` (largest)."""
        return max((t.walkable_radius for t in self.tiles), default=0.0)

    def bounds(self) -> np.ndarray:
        """``(2, 3)`` box around all tiles (zeros when there are none)."""
        if not self.tiles:
            return np.zeros((2, 3))
        boxes = np.stack([t.bounds for t in self.tiles])
        return np.stack([boxes[:, 0].min(0), boxes[:, 1].max(0)])


# ----- reading ------------------------------------------------------------------------------------
def read_navmesh(path: str | Path) -> NavMesh:
    """Parse a habitat-sim ``.navmesh`` file; :class:`NavMeshFileError` names the file and the fault."""
    path = Path(path)
    require_file(path, "navmesh", "a .navmesh file", error=NavMeshFileError)
    data = path.read_bytes()
    if len(data) < _SET_HEADER.size:
        raise NavMeshFileError(f"{path}: truncated: {len(data)} bytes, a navmesh set header needs {_SET_HEADER.size}")
    magic, version, num_tiles, ox, oy, oz, tile_w, tile_h, max_tiles, max_polys = _SET_HEADER.unpack_from(data)
    if magic != NAVMESHSET_MAGIC:
        swapped = int.from_bytes(NAVMESHSET_MAGIC.to_bytes(4, "little"), "big")
        hint = " (big-endian files are not supported)" if magic == swapped else ""
        raise NavMeshFileError(
            f"{path}: not a navmesh: magic {magic:#010x}, expected 'MSET' ({NAVMESHSET_MAGIC:#010x}){hint}"
        )
    if version not in NAVMESHSET_VERSIONS:
        raise NavMeshFileError(
            f"{path}: unsupported navmesh set version {version}, expected one of {NAVMESHSET_VERSIONS}"
        )
    if num_tiles < 0:
        raise NavMeshFileError(f"{path}: negative tile count {num_tiles}")
    offset = _SET_HEADER.size
    settings = None
    ref64 = False
    if num_tiles > 0 or version >= 2:
        settings_size, ref64 = _locate_first_tile(data, offset, version, num_tiles, path)
        if version >= 2:
            settings = _parse_settings(data[offset : offset + settings_size], path)
        offset += settings_size
    tile_header = struct.Struct("<Qi4x" if ref64 else "<Ii")
    tiles = []
    for index in range(num_tiles):
        if offset + tile_header.size > len(data):
            raise NavMeshFileError(f"{path}: truncated: tile {index} of {num_tiles} has no tile header")
        tile_ref, size = tile_header.unpack_from(data, offset)
        offset += tile_header.size
        if tile_ref == 0 or size == 0:  # habitat-sim stops loading at such an entry
            break
        if size < 0 or offset + size > len(data):
            raise NavMeshFileError(
                f"{path}: truncated: tile {index} declares {size} bytes of data, {len(data) - offset} remain"
            )
        tiles.append(_parse_tile(data[offset : offset + size], ref64, f"{path}: tile {index}"))
        offset += size
    return NavMesh(
        path=str(path),
        version=version,
        origin=(ox, oy, oz),
        tile_width=tile_w,
        tile_height=tile_h,
        max_tiles=max_tiles,
        max_polys=max_polys,
        settings=settings,
        tiles=tuple(tiles),
    )


def _locate_first_tile(data: bytes, start: int, version: int, num_tiles: int, path: Path) -> tuple[int, bool]:
    """``(bytes of the settings block, 64-bit tile refs?)``, found from where the first 'DNAV' tile starts."""
    magic = DT_NAVMESH_MAGIC.to_bytes(4, "little")
    sizes = range(_align4(_SETTINGS.size), _MAX_SETTINGS_BYTES + 1, 4) if version >= 2 else (0,)
    if num_tiles == 0:
        return len(data) - start, False
    for header_size, ref64 in ((8, False), (16, True)):  # habitat-sim's 32-bit refs first
        for size in sizes:
            at = start + size + header_size
            if data[at : at + 4] == magic:
                return size, ref64
    if len(data) < start + 8 + _MESH_HEADER.size:
        raise NavMeshFileError(f"{path}: truncated: the header promises {num_tiles} tile(s) but the file ends")
    raise NavMeshFileError(
        f"{path}: no Detour tile ('DNAV' magic) where the first tile should start (version {version} layout)"
    )


def _parse_settings(block: bytes, path: Path) -> NavMeshSettings:
    if len(block) < _SETTINGS.size:
        raise NavMeshFileError(
            f"{path}: NavMeshSettings block of {len(block)} bytes, expected at least {_SETTINGS.size}"
        )
    return NavMeshSettings(*_SETTINGS.unpack_from(block))


def _parse_tile(tile: bytes, ref64: bool, where: str) -> NavMeshTile:
    if len(tile) < _MESH_HEADER.size:
        raise NavMeshFileError(f"{where}: truncated: {len(tile)} bytes, a Detour mesh header needs {_MESH_HEADER.size}")
    h = _MESH_HEADER.unpack_from(tile)
    magic, version, tx, ty, layer, _user = h[:6]
    poly_count, vert_count, max_links, detail_count, detail_verts, detail_tris, bv_nodes, offmesh, _base = h[6:15]
    walkable_height, walkable_radius, walkable_climb = h[15:18]
    bounds = np.array([h[18:21], h[21:24]], np.float64)
    if magic != DT_NAVMESH_MAGIC:
        raise NavMeshFileError(f"{where}: Detour tile magic {magic:#010x}, expected 'DNAV' ({DT_NAVMESH_MAGIC:#010x})")
    if version != DT_NAVMESH_VERSION:
        raise NavMeshFileError(f"{where}: unsupported Detour tile version {version}, expected {DT_NAVMESH_VERSION}")
    counts = (poly_count, vert_count, max_links, detail_count, detail_verts, detail_tris, bv_nodes, offmesh)
    if min(counts) < 0:
        raise NavMeshFileError(f"{where}: negative counts in the Detour header {counts}")
    sections = [
        ("verts", 12 * vert_count),
        ("polys", _POLY.itemsize * poly_count),
        ("links", (16 if ref64 else 12) * max_links),
        ("detail meshes", _DETAIL.itemsize * detail_count),
        ("detail verts", 12 * detail_verts),
        ("detail tris", 4 * detail_tris),
        ("bv tree", _BV_NODE_SIZE * bv_nodes),
        ("off-mesh connections", _OFFMESH_SIZE * offmesh),
    ]
    offsets = {}
    offset = _align4(_MESH_HEADER.size)
    for name, size in sections:
        offsets[name] = offset
        offset += _align4(size)
    if offset != len(tile):
        raise NavMeshFileError(
            f"{where}: tile data size mismatch: the Detour header's counts need {offset} bytes, the tile holds {len(tile)}"
        )
    vertices = np.frombuffer(tile, "<f4", 3 * vert_count, offsets["verts"]).reshape(-1, 3).astype(np.float32)
    polys = np.frombuffer(tile, _POLY, poly_count, offsets["polys"])
    details = np.frombuffer(tile, _DETAIL, detail_count, offsets["detail meshes"])
    dverts = np.frombuffer(tile, "<f4", 3 * detail_verts, offsets["detail verts"]).reshape(-1, 3)
    dtris = np.frombuffer(tile, "u1", 4 * detail_tris, offsets["detail tris"]).reshape(-1, 4)
    polygons = []
    for i, poly in enumerate(polys):
        n = int(poly["vert_count"])
        idx = poly["verts"][:n].astype(np.int64)
        if n > DT_VERTS_PER_POLYGON or (idx >= vert_count).any():
            raise NavMeshFileError(
                f"{where}: polygon {i} has {n} vertices / indices {idx.tolist()} beyond {vert_count} vertices"
            )
        polygons.append(idx)
    types = (polys["area_and_type"] >> 6).astype(np.uint8)
    if detail_count > poly_count:
        raise NavMeshFileError(f"{where}: {detail_count} detail meshes for {poly_count} polygons")
    triangles = []
    for i, detail in enumerate(details):
        nv = len(polygons[i])
        base, tri_base, dv_count, t_count = (
            int(detail[k]) for k in ("vert_base", "tri_base", "vert_count", "tri_count")
        )
        if tri_base + t_count > detail_tris or base + dv_count > detail_verts:
            raise NavMeshFileError(f"{where}: detail mesh {i} points past the detail vertices / triangles")
        corners = dtris[tri_base : tri_base + t_count, :3].astype(np.int64)
        if (corners >= nv + dv_count).any():
            raise NavMeshFileError(f"{where}: detail mesh {i} indexes a vertex it does not have")
        local = np.concatenate([vertices[polygons[i]], dverts[base : base + dv_count]])
        triangles.append(local[corners].astype(np.float32))
    return NavMeshTile(
        x=tx,
        y=ty,
        layer=layer,
        vertices=vertices,
        polygons=tuple(polygons),
        neighbours=polys["neis"].copy(),
        flags=polys["flags"].copy(),
        areas=(polys["area_and_type"] & 0x3F).astype(np.uint8),
        types=types,
        detail_triangles=tuple(triangles),
        walkable_height=walkable_height,
        walkable_radius=walkable_radius,
        walkable_climb=walkable_climb,
        bounds=bounds,
    )


def _align4(n: int) -> int:
    return (n + 3) & ~3


# ----- writing ------------------------------------------------------------------------------------
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
    polys = np.zeros(count, _POLY)
    polys["flags"], polys["area_and_type"] = flags, areas
    edge_owner = {(int(v[j]), int(v[(j + 1) % len(v)])): i for i, v in enumerate(indices) for j in range(len(v))}
    tris = []
    details = np.zeros(count, _DETAIL)
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
    bmin = vertices.min(0) if len(vertices) else np.zeros(3, np.float32)
    bmax = vertices.max(0) if len(vertices) else np.zeros(3, np.float32)
    if border is not None:
        bmin[[0, 2]], bmax[[0, 2]] = border[:2], border[2:]
    height, radius, climb, cell_size = agent
    max_links = sum(len(v) for v in indices) + 2 * portals  # as dtCreateNavMeshData reserves them
    header = _MESH_HEADER.pack(
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
    return b"".join(s + bytes(_align4(len(s)) - len(s)) for s in sections), np.stack([bmin, bmax])


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
    out = [_SET_HEADER.pack(NAVMESHSET_MAGIC, version, len(tiles), *params, len(tiles), max_polys)]
    if settings is not None:
        block = _SETTINGS.pack(*dataclasses.astuple(settings))
        out.append(block + bytes(_align4(len(block)) - len(block)))
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
