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

Modules: :mod:`.format` (constants, structs, the parsed records), :mod:`.reader`, :mod:`.writer`.
"""

from __future__ import annotations

from memgym.scenes.navmesh_file.format import (
    DT_NAVMESH_MAGIC,
    NAVMESHSET_MAGIC,
    NavMesh,
    NavMeshFileError,
    NavMeshSettings,
    NavMeshTile,
)
from memgym.scenes.navmesh_file.reader import read_navmesh
from memgym.scenes.navmesh_file.writer import write_grid_navmesh, write_navmesh

__all__ = [
    "DT_NAVMESH_MAGIC",
    "NAVMESHSET_MAGIC",
    "NavMesh",
    "NavMeshFileError",
    "NavMeshSettings",
    "NavMeshTile",
    "read_navmesh",
    "write_grid_navmesh",
    "write_navmesh",
]
