"""Reading habitat-sim ``.navmesh`` files (:func:`read_navmesh`)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from memgym.core.paths import require_file
from memgym.scenes.navmesh_file.format import (
    BV_NODE_SIZE,
    DETAIL,
    DT_NAVMESH_MAGIC,
    DT_NAVMESH_VERSION,
    DT_VERTS_PER_POLYGON,
    MAX_SETTINGS_BYTES,
    MESH_HEADER,
    NAVMESHSET_MAGIC,
    NAVMESHSET_VERSIONS,
    OFFMESH_SIZE,
    POLY,
    SET_HEADER,
    SETTINGS,
    NavMesh,
    NavMeshFileError,
    NavMeshSettings,
    NavMeshTile,
    align4,
)


def read_navmesh(path: str | Path) -> NavMesh:
    """Parse a habitat-sim ``.navmesh`` file; :class:`NavMeshFileError` names the file and the fault."""
    path = Path(path)
    require_file(path, "navmesh", "a .navmesh file", error=NavMeshFileError)
    data = path.read_bytes()
    if len(data) < SET_HEADER.size:
        raise NavMeshFileError(f"{path}: truncated: {len(data)} bytes, a navmesh set header needs {SET_HEADER.size}")
    magic, version, num_tiles, ox, oy, oz, tile_w, tile_h, max_tiles, max_polys = SET_HEADER.unpack_from(data)
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
    offset = SET_HEADER.size
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
    sizes = range(align4(SETTINGS.size), MAX_SETTINGS_BYTES + 1, 4) if version >= 2 else (0,)
    if num_tiles == 0:
        return len(data) - start, False
    for header_size, ref64 in ((8, False), (16, True)):  # habitat-sim's 32-bit refs first
        for size in sizes:
            at = start + size + header_size
            if data[at : at + 4] == magic:
                return size, ref64
    if len(data) < start + 8 + MESH_HEADER.size:
        raise NavMeshFileError(f"{path}: truncated: the header promises {num_tiles} tile(s) but the file ends")
    raise NavMeshFileError(
        f"{path}: no Detour tile ('DNAV' magic) where the first tile should start (version {version} layout)"
    )


def _parse_settings(block: bytes, path: Path) -> NavMeshSettings:
    if len(block) < SETTINGS.size:
        raise NavMeshFileError(
            f"{path}: NavMeshSettings block of {len(block)} bytes, expected at least {SETTINGS.size}"
        )
    return NavMeshSettings(*SETTINGS.unpack_from(block))


def _parse_tile(tile: bytes, ref64: bool, where: str) -> NavMeshTile:
    """One Detour tile's data (``dtMeshHeader`` and its sections; ``ref64``: 16-byte links)."""
    h = _tile_header(tile, where)
    tx, ty, layer = h[2:5]
    poly_count, vert_count, max_links, detail_count, detail_verts, detail_tris, bv_nodes, offmesh, _base = h[6:15]
    walkable_height, walkable_radius, walkable_climb = h[15:18]
    bounds = np.array([h[18:21], h[21:24]], np.float64)
    sections = [
        ("verts", 12 * vert_count),
        ("polys", POLY.itemsize * poly_count),
        ("links", (16 if ref64 else 12) * max_links),
        ("detail meshes", DETAIL.itemsize * detail_count),
        ("detail verts", 12 * detail_verts),
        ("detail tris", 4 * detail_tris),
        ("bv tree", BV_NODE_SIZE * bv_nodes),
        ("off-mesh connections", OFFMESH_SIZE * offmesh),
    ]
    offsets = _section_offsets(sections, len(tile), where)
    vertices = np.frombuffer(tile, "<f4", 3 * vert_count, offsets["verts"]).reshape(-1, 3).astype(np.float32)
    polys = np.frombuffer(tile, POLY, poly_count, offsets["polys"])
    details = np.frombuffer(tile, DETAIL, detail_count, offsets["detail meshes"])
    dverts = np.frombuffer(tile, "<f4", 3 * detail_verts, offsets["detail verts"]).reshape(-1, 3)
    dtris = np.frombuffer(tile, "u1", 4 * detail_tris, offsets["detail tris"]).reshape(-1, 4)
    polygons = _polygons(polys, vert_count, where)
    types = (polys["area_and_type"] >> 6).astype(np.uint8)
    if detail_count > poly_count:
        raise NavMeshFileError(f"{where}: {detail_count} detail meshes for {poly_count} polygons")
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
        detail_triangles=tuple(_detail_triangles(details, polygons, vertices, dverts, dtris, where)),
        walkable_height=walkable_height,
        walkable_radius=walkable_radius,
        walkable_climb=walkable_climb,
        bounds=bounds,
    )


def _tile_header(tile: bytes, where: str) -> tuple:
    """The fields of the tile's ``dtMeshHeader``, its magic, version and counts checked."""
    if len(tile) < MESH_HEADER.size:
        raise NavMeshFileError(f"{where}: truncated: {len(tile)} bytes, a Detour mesh header needs {MESH_HEADER.size}")
    h = MESH_HEADER.unpack_from(tile)
    magic, version = h[:2]
    if magic != DT_NAVMESH_MAGIC:
        raise NavMeshFileError(f"{where}: Detour tile magic {magic:#010x}, expected 'DNAV' ({DT_NAVMESH_MAGIC:#010x})")
    if version != DT_NAVMESH_VERSION:
        raise NavMeshFileError(f"{where}: unsupported Detour tile version {version}, expected {DT_NAVMESH_VERSION}")
    counts = h[6:14]
    if min(counts) < 0:
        raise NavMeshFileError(f"{where}: negative counts in the Detour header {counts}")
    return h


def _section_offsets(sections: list[tuple[str, int]], size: int, where: str) -> dict[str, int]:
    """Byte offset of each ``(name, bytes)`` section after the header (each padded to 4 bytes);
    an error unless they fill the tile's ``size`` bytes exactly."""
    offsets = {}
    offset = align4(MESH_HEADER.size)
    for name, length in sections:
        offsets[name] = offset
        offset += align4(length)
    if offset != size:
        raise NavMeshFileError(
            f"{where}: tile data size mismatch: the Detour header's counts need {offset} bytes, the tile holds {size}"
        )
    return offsets


def _polygons(polys: np.ndarray, vert_count: int, where: str) -> list[np.ndarray]:
    """Each ``dtPoly``'s ``(k,) int64`` vertex indices, checked against the tile's vertices."""
    polygons = []
    for i, poly in enumerate(polys):
        n = int(poly["vert_count"])
        idx = poly["verts"][:n].astype(np.int64)
        if n > DT_VERTS_PER_POLYGON or (idx >= vert_count).any():
            raise NavMeshFileError(
                f"{where}: polygon {i} has {n} vertices / indices {idx.tolist()} beyond {vert_count} vertices"
            )
        polygons.append(idx)
    return polygons


def _detail_triangles(
    details: np.ndarray,
    polygons: list[np.ndarray],
    vertices: np.ndarray,
    dverts: np.ndarray,
    dtris: np.ndarray,
    where: str,
) -> list[np.ndarray]:
    """Per detail mesh, its ``(T, 3, 3) float32`` triangles: corners index the polygon's vertices,
    then its detail vertices ``dverts`` ``(D, 3)``; ``dtris`` ``(N, 4)`` are all detail triangles."""
    triangles = []
    for i, detail in enumerate(details):
        nv = len(polygons[i])
        base, tri_base, dv_count, t_count = (
            int(detail[k]) for k in ("vert_base", "tri_base", "vert_count", "tri_count")
        )
        if tri_base + t_count > len(dtris) or base + dv_count > len(dverts):
            raise NavMeshFileError(f"{where}: detail mesh {i} points past the detail vertices / triangles")
        corners = dtris[tri_base : tri_base + t_count, :3].astype(np.int64)
        if (corners >= nv + dv_count).any():
            raise NavMeshFileError(f"{where}: detail mesh {i} indexes a vertex it does not have")
        local = np.concatenate([vertices[polygons[i]], dverts[base : base + dv_count]])
        triangles.append(local[corners].astype(np.float32))
    return triangles
