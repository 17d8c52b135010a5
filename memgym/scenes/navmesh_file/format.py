"""The ``.navmesh`` format (layout in :mod:`memgym.scenes.navmesh_file`): its constants and binary
structs, and the parsed file (:class:`NavMesh`, :class:`NavMeshTile`, :class:`NavMeshSettings`)."""

from __future__ import annotations

import dataclasses
import struct

import numpy as np

from memgym.core.errors import MemgymError

NAVMESHSET_MAGIC = ord("M") << 24 | ord("S") << 16 | ord("E") << 8 | ord("T")
NAVMESHSET_VERSIONS = (1, 2)
DT_NAVMESH_MAGIC = ord("D") << 24 | ord("N") << 16 | ord("A") << 8 | ord("V")
DT_NAVMESH_VERSION = 7
DT_VERTS_PER_POLYGON = 6
DT_POLYTYPE_OFFMESH_CONNECTION = 1
DT_EXT_LINK = 0x8000
POLYFLAGS_WALK = 0x01
"""habitat-sim's walkable flag (its query filter includes only polygons carrying it)."""

SET_HEADER = struct.Struct("<3i3f2f2i")  # magic, version, numTiles, dtNavMeshParams
MESH_HEADER = struct.Struct("<5iI9i3f3f3ff")
SETTINGS = struct.Struct("<13f3?")
POLY = np.dtype(
    [
        ("first_link", "<u4"),
        ("verts", "<u2", (DT_VERTS_PER_POLYGON,)),
        ("neis", "<u2", (DT_VERTS_PER_POLYGON,)),
        ("flags", "<u2"),
        ("vert_count", "u1"),
        ("area_and_type", "u1"),
    ]
)
DETAIL = np.dtype(
    [("vert_base", "<u4"), ("tri_base", "<u4"), ("vert_count", "u1"), ("tri_count", "u1"), ("pad", "u1", 2)]
)
BV_NODE_SIZE = 16
OFFMESH_SIZE = 36
MAX_SETTINGS_BYTES = 512


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


def align4(n: int) -> int:
    """``n`` bytes rounded up to a multiple of 4 (Detour pads every section to it)."""
    return (n + 3) & ~3
