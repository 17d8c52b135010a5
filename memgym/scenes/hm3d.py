"""HM3D scenes read directly from their files (no habitat-sim), and an exporter to that layout.

Layout of one scene ``X`` (as in ``hm3d/val/00800-TEEsavR23oF/``)::

    X.glb              textured geometry, Z up (HM3D v0.2 ships X.basis.glb instead, read when X.glb is absent)
    X.semantic.glb     the same surfaces textured with one flat colour per instance
    X.semantic.txt     "HM3D Semantic Annotations", then rows  id,HEXCOLOR,"category",region_id
    X.navmesh          optional habitat-sim navmesh (Recast/Detour); read by memgym.scenes.navmesh_file
                       (HM3D v0.2 names it X.basis.navmesh, read when X.navmesh is absent)
    X.objects.json.gz  optional GOAT-Bench-style object annotations (or pass ``annotations=``)

``X.basis.glb`` holds the same geometry with Basis Universal textures (glTF extension
``KHR_texture_basisu``, ``image/ktx2`` images), which cannot be decoded here: its geometry and depth
are exact, and surfaces whose texture cannot be decoded take their vertex colours (``COLOR_0``)
and/or their material's ``baseColorFactor`` instead (grey without either), with one
:class:`UndecodedTextureWarning` per file. ``X.semantic.glb`` must carry decodable textures (or
colours): instance ids cannot be read from a texture that cannot be decoded.

Geometry is converted from the files' Z-up frame to Habitat's Y-up frame:
``(x, y, z) -> (x, z, -y)``. Instance ids are read from ``X.semantic.glb``'s texture at the hit's
UV (nearest texel), mapped through the hex colours of ``X.semantic.txt``; colours without a row
give id 0. Object annotations follow GOAT-Bench's goals (or ObjectNav's ``goals_by_category``): ``{"goals": {"X.basis.glb_<category>":
[{"object_id", "object_category", "position", "view_points": [{"agent_state": {"position",
"rotation"}}], "lang_desc", ...}]}}`` with positions already in the Habitat frame; the instance
id of an annotation is its ``semantic_id`` field or the integer ending its ``object_id``. Without
annotations every annotated instance except walls, floors and ceilings becomes an object, and
view points are computed.

Navigation (``navigation=``): ``"navmesh"`` rasterises the walkable polygons of ``X.navmesh`` (or
``X.basis.navmesh``) onto the navigation grid at the floor level (they are already eroded by the radius the navmesh
was built for; a larger agent radius erodes the difference, and cells too close to the mesh's faces
are removed as with ``"mesh"``), so islands, geodesics and snapping follow habitat-sim's navmesh; ``"mesh"`` computes navigability from ``X.glb``; ``"auto"`` (the
default) uses the navmesh when the file exists and the mesh otherwise.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import gzip
import io
import json
import re
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import trimesh
from PIL import Image

from memgym.core.errors import MemgymError
from memgym.core.paths import require_file
from memgym.core.registry import register_scene
from memgym.core.textfiles import read_text
from memgym.scenes.mesh_scene import MeshScene, SurfaceLookup, estimate_floor_height
from memgym.scenes.navigation import AgentSpec, NavGrid
from memgym.scenes.navmesh_file import NavMesh, read_navmesh
from memgym.scenes.objects import Region, Relation, SceneObject, ViewPoint
from memgym.scenes.view_points import compute_view_points

HEADER = "HM3D Semantic Annotations"
NAVIGATION_SOURCES = ("auto", "navmesh", "mesh")
MESH_SUFFIXES = (".glb", ".basis.glb")
"""Textured-geometry file names of a scene stem ``X``, in order of preference."""
NAVMESH_SUFFIXES = (".navmesh", ".basis.navmesh")
"""Navmesh file names of a scene stem ``X``, in order of preference (HM3D v0.2 ships the second)."""
STRUCTURE = {"wall", "floor", "ceiling", "unknown", "misc"}
Z_UP_TO_Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
"""Maps Z-up file coordinates to Habitat's Y-up frame: ``(x, y, z) -> (x, z, -y)``."""


# ----- reading ------------------------------------------------------------------------------------
class TexturedLookup(SurfaceLookup):
    """Per-hit albedo / instance id from textures (nearest texel at the interpolated UV).

    Args:
        tri_uv: ``(M, 3, 2)`` texture coordinates of each triangle's corners (origin bottom-left).
        tri_texture: ``(M,)`` index into ``textures`` (-1: use ``tri_color``).
        textures: ``(H, W, 3+) uint8`` images.
        tri_color: ``(M, 3) uint8`` fallback colour of triangles without a texture.
        color_to_id: packed 24-bit RGB -> instance id, for semantic textures (None for albedo).

    A triangle that reads one texel wherever it is hit (flat colour, or a UV footprint inside one
    texel, as in :func:`export_hm3d`'s atlases) has its colour, albedo and instance id looked up
    once at construction; hits on it then cost one ``np.take``, with the same values as the
    per-hit texture arithmetic.
    """

    def __init__(self, tri_uv, tri_texture, textures, tri_color, color_to_id: dict[int, int] | None = None) -> None:
        self.tri_uv = np.asarray(tri_uv, np.float32)
        self.tri_texture = np.asarray(tri_texture, np.int64)
        images = [np.asarray(t, np.uint8)[:, :, :3] for t in textures]
        tri_color = np.asarray(tri_color, np.uint8).reshape(-1, 3)
        # one colour table: the M flat triangle colours, then each texture's texels row by row, so
        # that a hit's colour is one np.take at its texel index (see texel_index)
        self._table = np.concatenate([tri_color, *(image.reshape(-1, 3) for image in images)])
        sizes = [image.shape[0] * image.shape[1] for image in images]
        self._start = len(tri_color) + np.cumsum([0, *sizes[:-1]]).astype(np.int64)
        self._shape = np.array([image.shape[:2] for image in images], np.int64).reshape(-1, 2)  # (height, width)
        self.tri_color = self._table[: len(tri_color)]
        self.textures = [
            self._table[start : start + size].reshape(image.shape[0], image.shape[1], 3)
            for start, size, image in zip(self._start, sizes, images)
        ]
        self.color_to_id = color_to_id
        if color_to_id:
            self._keys = np.array(sorted(color_to_id), np.int32)  # packed 24-bit colours
            self._values = np.array([color_to_id[int(k)] for k in self._keys], np.int32)
        # per triangle: the table row every hit reads (-1: it varies); its albedo and instance id
        # are tabled on first use (_tri_albedo, _tri_semantic)
        self._tri_row = self._constant_rows()
        self._all_constant = bool((self._tri_row >= 0).all())

    @functools.cached_property
    def _tri_albedo(self) -> np.ndarray:
        """``(M, 3) float32`` albedo of each single-texel triangle (rows of the others: unused)."""
        return self._albedo_of(np.take(self._table, np.maximum(self._tri_row, 0), axis=0))

    @functools.cached_property
    def _tri_semantic(self) -> np.ndarray:
        """``(M,) int32`` instance id of each single-texel triangle (-1 for the others)."""
        ids = self._semantic_of(np.take(self._table, np.maximum(self._tri_row, 0), axis=0))
        return np.where(self._tri_row >= 0, ids, -1).astype(np.int32)

    def _constant_rows(self) -> np.ndarray:
        """``(M,) int64`` colour-table row each triangle reads wherever it is hit, -1 where that varies:
        a flat triangle's own row; for a textured one, the texel of its UV bounding box when the box,
        widened by a margin far above the float32 rounding of the interpolated UV, neither crosses a
        wrap seam nor spans two texels (the texel arithmetic is monotone in the UV between seams)."""
        rows = np.arange(len(self.tri_texture), dtype=np.int64)
        textured = np.flatnonzero(self.tri_texture >= 0)
        if len(textured) == 0:
            return rows
        which = self.tri_texture[textured]
        corners = self.tri_uv[textured]
        margin = (1e-5 * np.maximum(1.0, np.abs(corners).max(1))).astype(np.float32)
        lo, hi = corners.min(1) - margin, corners.max(1) + margin
        constant = (np.floor(lo) == np.floor(hi)).all(1)
        texel = []
        for axis, extent in ((0, self._shape[which, 1]), (1, self._shape[which, 0])):
            first = _nearest_texel(lo[:, axis].copy(), axis, extent)
            constant &= first == _nearest_texel(hi[:, axis].copy(), axis, extent)
            texel.append(first)
        cols, texel_rows = texel
        rows[textured] = np.where(constant, texel_rows * self._shape[which, 1] + cols + self._start[which], -1)
        return rows

    def texel_index(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """``(N,) int64`` row of the colour table seen by each hit: the triangle's own row when it
        has no texture, else its texture's texel at the interpolated UV (nearest, wrapping)."""
        ids = np.asarray(primitive_ids).astype(np.int64, copy=False)
        rows = np.take(self._tri_row, ids)
        if self._all_constant:
            return rows
        varies = rows < 0
        if varies.all():
            return self._interpolated_texels(ids, uvs)
        if varies.any():
            rows[varies] = self._interpolated_texels(ids[varies], uvs[varies])
        return rows

    def _interpolated_texels(self, ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """:meth:`texel_index` of hits ``ids`` ``(N,) int64`` on textured triangles, at ``uvs`` ``(N, 2)``."""
        which = np.take(self.tri_texture, ids)

        def per_hit(values: np.ndarray) -> np.ndarray:
            """A per-texture value at each hit (one texture: the scalar, same arithmetic)."""
            return values[0] if len(values) == 1 else np.take(values, which)

        corners = np.take(self.tri_uv, ids, axis=0)
        u, v = uvs[:, 0], uvs[:, 1]
        w0 = 1 - u - v
        texel = []
        for axis, size in ((0, self._shape[:, 1]), (1, self._shape[:, 0])):
            # per component on 1-D arrays (a (N, 2) broadcast is several times slower)
            coord = w0 * corners[:, 0, axis]
            coord += u * corners[:, 1, axis]
            coord += v * corners[:, 2, axis]
            texel.append(_nearest_texel(coord, axis, per_hit(size)))
        cols, rows = texel
        rows *= per_hit(self._shape[:, 1])
        rows += cols
        rows += per_hit(self._start)
        return rows

    def arrays(self) -> tuple[np.ndarray, ...]:
        ids = (self._keys, self._values) if self.color_to_id else ()
        return self.tri_uv, self.tri_texture, self._table, self._shape, *ids

    def colors(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """``(N, 3) uint8`` texel colours at the hits."""
        return np.take(self._table, self.texel_index(primitive_ids, uvs), axis=0)

    def albedo(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        return self._per_hit(self._tri_albedo, primitive_ids, uvs, self._albedo_of)

    def semantic(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        if not self.color_to_id:
            return np.zeros(len(primitive_ids), np.int32)
        return self._per_hit(self._tri_semantic, primitive_ids, uvs, self._semantic_of)

    def _per_hit(self, per_triangle: np.ndarray, primitive_ids: np.ndarray, uvs: np.ndarray, of_colors) -> np.ndarray:
        """``per_triangle`` values at the hits, with ``of_colors`` of the texel colours of hits on
        triangles whose texel varies."""
        ids = np.asarray(primitive_ids).astype(np.int64, copy=False)
        values = np.take(per_triangle, ids, axis=0)
        if self._all_constant:
            return values
        varies = np.take(self._tri_row, ids) < 0
        if varies.any():
            values[varies] = of_colors(
                np.take(self._table, self._interpolated_texels(ids[varies], uvs[varies]), axis=0)
            )
        return values

    @staticmethod
    def _albedo_of(rgb: np.ndarray) -> np.ndarray:
        """``(N, 3) float32`` albedo in [0, 1] of ``(N, 3) uint8`` colours."""
        albedo = rgb.astype(np.float32)
        albedo /= 255.0
        return albedo

    def _semantic_of(self, rgb: np.ndarray) -> np.ndarray:
        """``(N,) int32`` instance ids of ``(N, 3) uint8`` semantic colours (0 without a row)."""
        if not self.color_to_id:
            return np.zeros(len(rgb), np.int32)
        packed = rgb[:, 0].astype(np.int32) << 16
        packed |= rgb[:, 1].astype(np.int32) << 8
        packed |= rgb[:, 2]
        idx = np.minimum(np.searchsorted(self._keys, packed), len(self._keys) - 1)
        return np.where(self._keys[idx] == packed, self._values[idx], 0).astype(np.int32)


def _nearest_texel(coord: np.ndarray, axis: int, extent: np.ndarray) -> np.ndarray:
    """``int64`` nearest texel along ``axis`` (0: column from u; 1: row from v, counted from the top)
    of float32 texture coordinates ``coord`` (overwritten) in textures ``extent`` texels long, wrapping."""
    # wrap into [0, 1) with x - floor(x): the same single rounding as np.mod(x, 1.0), faster
    coord -= np.floor(coord)
    if axis == 1:
        np.subtract(1.0, coord, out=coord)  # rows count from the top
    coord *= extent.astype(np.float32)  # float32 products, as with a Python int
    index = np.floor(coord, out=coord).astype(np.int64)
    return np.clip(index, 0, extent - 1, out=index)


def read_semantic_txt(path: Path) -> list[tuple[int, str, str, int]]:
    """Rows ``(instance id, HEX colour, category, region id)`` of an HM3D ``semantic.txt``."""
    require_file(path, "HM3D semantic annotations", "a semantic.txt file")
    rows = []
    lines = read_text(path).splitlines()
    for number, row in enumerate(csv.reader(lines), start=1):
        if not row or (number == 1 and row[0].strip() == HEADER):
            continue
        try:
            instance, color, category, region = int(row[0]), row[1].strip().upper(), row[2], int(row[3])
            int(color, 16)
            if len(color) != 6 or len(row) != 4:
                raise ValueError
        except (ValueError, IndexError):
            raise MemgymError(
                f'{path}:{number}: expected \'id,HEXCOLOR,"category",region_id\' (e.g. 12,4B8AF2,"chair",3), got {lines[number - 1]!r}'
            ) from None
        rows.append((instance, color, category, region))
    if not rows:
        raise MemgymError(f"{path}: no annotation rows")
    return rows


class UndecodedTextureWarning(UserWarning):
    """A GLB's textures cannot be decoded (e.g. Basis Universal); flat colours stand in."""


_warned_files: set[Path] = set()


def undecodable_textures(path: Path) -> list[str]:
    """Descriptions of the textures of GLB ``path`` that cannot be decoded here: Basis Universal
    (``KHR_texture_basisu`` without a PNG/JPEG ``source`` fallback, or an ``image/ktx2`` source);
    ``[]`` when all can be."""
    try:
        with open(path, "rb") as handle:
            magic, _, _, json_length, json_type = struct.unpack("<4sIIII", handle.read(20))
            if magic != b"glTF" or json_type != 0x4E4F534A:
                return []
            header = json.loads(handle.read(json_length))
    except (OSError, struct.error, ValueError) as exc:
        raise MemgymError(f"{path}: cannot read the GLB header ({exc})") from None
    if not isinstance(header, dict):
        raise MemgymError(f"{path}: the GLB's JSON chunk is not an object")
    images = [image if isinstance(image, dict) else {} for image in header.get("images", [])]

    def is_ktx2(index: Any) -> bool:
        return isinstance(index, int) and 0 <= index < len(images) and images[index].get("mimeType") == "image/ktx2"

    bad = []
    for number, texture in enumerate(header.get("textures", [])):
        if not isinstance(texture, dict):
            continue
        basisu = (texture.get("extensions") or {}).get("KHR_texture_basisu")
        source = texture.get("source")
        if is_ktx2(source) or (source is None and isinstance(basisu, dict)):
            image = source if source is not None else basisu.get("source")
            via = "KHR_texture_basisu, " if isinstance(basisu, dict) else ""
            bad.append(f"textures[{number}] ({via}images[{image}] image/ktx2)")
    return bad


def load_textured_glb(path: Path, up_axis: str = "z", *, need_textures: bool = False):
    """``(vertices (N,3) float32 Y-up, triangles (M,3), tri_uv, tri_texture, textures, tri_color)``.

    Surfaces whose texture cannot be decoded (see :func:`undecodable_textures`) get flat colours
    (``tri_texture`` -1) and one :class:`UndecodedTextureWarning` per file and process; with
    ``need_textures`` (instance-id textures) such a file is an error instead.
    """
    require_file(path, "HM3D mesh", "a .glb file")
    undecodable = undecodable_textures(path)
    if undecodable and need_textures:
        raise MemgymError(
            f"{path}: {', '.join(undecodable)} cannot be decoded here (Basis Universal); instance ids need "
            "a GLB with PNG/JPEG textures"
        )
    if undecodable and path.resolve() not in _warned_files:
        _warned_files.add(path.resolve())
        warnings.warn(
            f"{path}: {', '.join(undecodable)} cannot be decoded here (Basis Universal); those surfaces "
            "use vertex colours / their material's baseColorFactor (grey without). "
            "Geometry, depth and instance ids are unaffected; use X.glb for textured colours.",
            UndecodedTextureWarning,
            stacklevel=2,
        )
    try:
        loaded = trimesh.load(str(path), force="scene", process=False)
    except Exception as exc:  # trimesh raises many types for corrupt files
        raise MemgymError(f"{path}: cannot read as GLB ({exc})") from None
    verts, tris, uvs, tex_index, textures, colors = [], [], [], [], [], []
    offset = 0
    texture_ids: dict[int, int] = {}
    for node in loaded.graph.nodes_geometry:
        transform, name = loaded.graph[node]
        geom = loaded.geometry[name]
        if not isinstance(geom, trimesh.Trimesh) or len(geom.faces) == 0:
            continue
        v = trimesh.transformations.transform_points(np.asarray(geom.vertices, float), transform)
        f = np.asarray(geom.faces, np.int64)
        visual = geom.visual
        uv = getattr(visual, "uv", None)
        material = getattr(visual, "material", None)
        image = None
        if material is not None:
            image = getattr(material, "baseColorTexture", None) or getattr(material, "image", None)
        if uv is not None and image is not None:
            key = id(image)
            if key not in texture_ids:
                texture_ids[key] = len(textures)
                textures.append(np.asarray(image.convert("RGB"), np.uint8))
            uvs.append(np.asarray(uv, np.float32)[f])
            tex_index.append(np.full(len(f), texture_ids[key]))
            colors.append(np.zeros((len(f), 3), np.uint8))
        else:
            uvs.append(np.zeros((len(f), 3, 2), np.float32))
            tex_index.append(np.full(len(f), -1))
            colors.append(_flat_colors(geom, f))
        verts.append(v)
        tris.append(f + offset)
        offset += len(v)
    if not tris:
        raise MemgymError(f"{path}: the GLB holds no triangle meshes")
    vertices = np.concatenate(verts)
    if up_axis == "z":
        vertices = vertices @ Z_UP_TO_Y_UP.T
    elif up_axis != "y":
        raise MemgymError(f"up_axis must be 'z' (HM3D files) or 'y', got {up_axis!r}")
    return (
        vertices.astype(np.float32),
        np.concatenate(tris).astype(np.int32),
        np.concatenate(uvs),
        np.concatenate(tex_index),
        textures,
        np.concatenate(colors),
    )


def _flat_colors(geom: trimesh.Trimesh, faces: np.ndarray) -> np.ndarray:
    """``(M, 3) uint8`` colour of each face without a decodable texture: face or vertex colours
    (``COLOR_0``, first corner) times the material's ``baseColorFactor``; grey without either."""
    visual = geom.visual
    if getattr(visual, "kind", None) == "face":
        return np.asarray(visual.face_colors, np.uint8)[:, :3]
    if getattr(visual, "kind", None) == "vertex":
        return np.asarray(visual.vertex_colors, np.uint8)[faces[:, 0], :3]
    material = getattr(visual, "material", None)
    factor = getattr(material, "baseColorFactor", None)
    vertex = getattr(visual, "vertex_attributes", {}).get("color")
    if vertex is not None:
        vertex = np.asarray(vertex)
        scale = 255.0 if vertex.dtype.kind == "f" else 255.0 / np.iinfo(vertex.dtype).max
        color = vertex[faces[:, 0], :3] * scale
        if factor is not None:
            color = color * _unit_rgb(factor)
        return np.clip(np.round(color), 0, 255).astype(np.uint8)
    color = _unit_rgb(factor) * 255 if factor is not None else np.full(3, 180.0)
    return np.tile(np.clip(np.round(color), 0, 255).astype(np.uint8), (len(faces), 1))


def _unit_rgb(factor) -> np.ndarray:
    """A base colour factor (trimesh stores uint8 0..255 or floats 0..1) as ``(3,)`` floats in [0, 1]."""
    factor = np.asarray(factor)[:3]
    return factor / 255.0 if factor.dtype.kind in "ui" or factor.max() > 1.0 else factor.astype(float)


@register_scene("hm3d")
class HM3DScene(MeshScene):
    """An HM3D scene read from its files (module docstring). Build with :meth:`load`."""

    semantic_table: dict[int, tuple[str, int]]
    navmesh_path: Path | None
    navmesh: NavMesh | None = None
    """The parsed ``X.navmesh`` when navigation uses it (``navigation`` ``"navmesh"``/``"auto"``)."""

    @classmethod
    def from_spec(cls, spec) -> HM3DScene:
        options = dict(spec.options)
        agent = options.pop("agent", None)
        return cls.load(spec.path, agent=AgentSpec(**agent) if agent else None, **options)

    @classmethod
    def load(
        cls,
        stem: str | Path,
        *,
        annotations: str | Path | None = None,
        floor_height: float | None = None,
        agent: AgentSpec | None = None,
        up_axis: str = "z",
        camera_height: float = 1.25,
        navigation: str = "auto",
    ) -> HM3DScene:
        """Read ``stem.glb`` (or ``stem.basis.glb``), ``stem.semantic.glb``, ``stem.semantic.txt`` and annotations.

        Args:
            stem: path without extension, e.g. ``hm3d/val/00800-TEEsavR23oF/TEEsavR23oF``, or one
                of the mesh files itself (``X.glb``, ``X.basis.glb``); see :func:`scene_files`.
            annotations: GOAT-Bench-style goals file (``.json`` or ``.json.gz``); default
                ``stem.objects.json.gz`` when it exists.
            floor_height: floor level to navigate (metres, Y up); default: the median height of
                the annotated view points, else the level with the most upward-facing area.
            agent: agent body for navigation.
            up_axis: ``"z"`` for HM3D files, ``"y"`` for meshes already in the Habitat frame.
            camera_height: eye height used when view points have to be computed.
            navigation: where navigability comes from: ``"navmesh"`` (``stem.navmesh``, else
                ``stem.basis.navmesh``; one must exist), ``"mesh"`` (``stem.glb``) or ``"auto"``
                (the navmesh if present).
        """
        if navigation not in NAVIGATION_SOURCES:
            raise MemgymError(f"HM3D navigation must be one of {NAVIGATION_SOURCES}, got {navigation!r}")
        stem, mesh = scene_files(stem)
        files = {k: Path(f"{stem}{k}") for k in (".semantic.glb", ".semantic.txt")}
        if files[".semantic.glb"].is_file() != files[".semantic.txt"].is_file():
            have, lack = (
                (".semantic.glb", ".semantic.txt")
                if files[".semantic.glb"].is_file()
                else (".semantic.txt", ".semantic.glb")
            )
            raise MemgymError(f"HM3D scene {stem}: {files[have]} exists but {files[lack]} is missing")
        v, t, uv, tex, textures, colors = load_textured_glb(mesh, up_axis)
        lookup = TexturedLookup(uv, tex, textures, colors)
        semantic_mesh = None
        table: dict[int, tuple[str, int]] = {}
        if files[".semantic.txt"].is_file():
            rows = read_semantic_txt(files[".semantic.txt"])
            color_to_id = {int(c, 16): i for i, c, _, _ in rows}
            table = {i: (cat, reg) for i, _, cat, reg in rows}
            sv, st, suv, stex, stextures, scolors = load_textured_glb(
                files[".semantic.glb"], up_axis, need_textures=True
            )
            semantic_mesh = (sv, st, TexturedLookup(suv, stex, stextures, scolors, color_to_id))
        goals = _read_goals(
            Path(annotations) if annotations else Path(f"{stem}.objects.json.gz"), required=annotations is not None
        )
        if floor_height is None:
            heights = [vp.position[1] for o in goals for vp in o.view_points]
            floor_height = float(np.median(heights)) if heights else estimate_floor_height(v, t)
        scene = cls(
            v,
            t,
            lookup,
            semantic_mesh=semantic_mesh,
            agent=agent,
            floor_height=floor_height,
            scene_id=f"hm3d:{stem.name}",
        )
        scene.semantic_table = table
        navmeshes = [Path(f"{stem}{suffix}") for suffix in NAVMESH_SUFFIXES]
        scene.navmesh_path = next((p for p in navmeshes if p.is_file()), None)
        if navigation == "navmesh" and scene.navmesh_path is None:
            raise MemgymError(
                f"HM3D scene {stem}: navigation='navmesh' but neither {navmeshes[0]} nor {navmeshes[1]} exists"
            )
        use_navmesh = navigation != "mesh" and scene.navmesh_path is not None
        scene.navmesh = read_navmesh(scene.navmesh_path) if use_navmesh else None
        boxes = scene._instance_boxes() if semantic_mesh is not None else {}
        if goals:
            objects = []
            for obj in goals:
                if table and obj.semantic_id not in table:
                    raise MemgymError(
                        f"HM3D scene {stem}: annotated object '{obj.object_id}' has instance id {obj.semantic_id}, "
                        f"which {files['.semantic.txt']} does not list"
                    )
                box = boxes.get(obj.semantic_id)
                size = tuple(round(float(s), 4) for s in (box[1] - box[0])) if box is not None else obj.size
                region = table.get(obj.semantic_id, ("", -1))[1]
                objects.append(
                    _with(obj, size=size, region_id=region, region=f"region {region}" if region >= 0 else "")
                )
        else:
            objects = []
            for sid, (category, region) in sorted(table.items()):
                if category.lower() in STRUCTURE or sid not in boxes:
                    continue
                box = boxes[sid]
                views = compute_view_points(scene, sid, box, camera_height=camera_height)
                objects.append(
                    SceneObject(
                        object_id=f"{category.replace(' ', '_')}_{sid}",
                        semantic_id=sid,
                        category=category,
                        position=tuple(round(float(c), 4) for c in (box[0] + box[1]) / 2),
                        size=tuple(round(float(s), 4) for s in box[1] - box[0]),
                        region_id=region,
                        region=f"region {region}" if region >= 0 else "",
                        relations=(Relation(kind="in_region", target=f"region {region}"),) if region >= 0 else (),
                        view_points=tuple(views),
                    )
                )
        scene.set_objects(objects)
        scene.regions = _regions(objects)
        return scene

    def _build_navgrid(self) -> NavGrid:
        """From the navmesh's walkable polygons when it is used, else from the mesh."""
        if self.navmesh is None:
            return super()._build_navgrid()
        box = self.bounds()
        if self.navmesh.tiles:
            nav_box = self.navmesh.bounds()
            box = np.stack([np.minimum(box[0], nav_box[0]), np.maximum(box[1], nav_box[1])])
        erosion = max(0.0, self.agent.radius - self.navmesh.agent_radius)
        return NavGrid.from_surface_triangles(
            self.navmesh.walkable_triangles(),
            box,
            self.agent,
            self.floor_height,
            erosion=erosion,
            obstacles=self.vertices[self.triangles],
        )

    def _instance_boxes(self) -> dict[int, np.ndarray]:
        """Instance id -> ``(2, 3)`` bounding box of the semantic-mesh triangles carrying it."""
        _, lookup = self._semantic
        sv, st = self.semantic_geometry
        centre_uv = np.full((len(st), 2), 1.0 / 3.0, np.float32)
        ids = lookup.semantic(np.arange(len(st)), centre_uv)
        boxes = {}
        for sid in np.unique(ids):
            if sid == 0:
                continue
            pts = sv[st[ids == sid]].reshape(-1, 3)
            boxes[int(sid)] = np.stack([pts.min(0), pts.max(0)])
        return boxes


def scene_files(path: str | Path) -> tuple[Path, Path]:
    """``(stem, mesh file)`` of a scene given as its stem ``X`` (``X.glb``, else ``X.basis.glb``) or
    as a mesh file ``X.glb`` / ``X.basis.glb`` (that file); a clear error names the candidates."""
    path = Path(path)
    for suffix in MESH_SUFFIXES[::-1]:  # ".basis.glb" before ".glb": the longer name first
        if path.name.endswith(suffix) and not path.name.endswith(".semantic.glb"):
            stem = path.with_name(path.name[: -len(suffix)])
            require_file(path, f"HM3D scene {stem}:", "a .glb file")
            return stem, path
    candidates = [Path(f"{path}{suffix}") for suffix in MESH_SUFFIXES]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise MemgymError(
            f"HM3D scene {path}: neither {candidates[0]} nor {candidates[1]} exists "
            "(expected X.glb or X.basis.glb, X.semantic.glb, X.semantic.txt)"
        )
    return path, found


def _with(obj: SceneObject, **changes: Any) -> SceneObject:
    return dataclasses.replace(obj, **changes)


def _regions(objects: list[SceneObject]) -> list[Region]:
    by_region: dict[int, list[SceneObject]] = {}
    for obj in objects:
        if obj.region_id >= 0:
            by_region.setdefault(obj.region_id, []).append(obj)
    out = []
    for rid, objs in sorted(by_region.items()):
        xs = [o.position[0] for o in objs]
        zs = [o.position[2] for o in objs]
        out.append(Region(region_id=rid, name=f"region {rid}", bounds=(min(xs), min(zs), max(xs), max(zs))))
    return out


_TRAILING_INT = re.compile(r"(\d+)$")


def _read_goals(path: Path, *, required: bool) -> list[SceneObject]:
    if not path.is_file():
        if required:
            require_file(path, "object annotations", "a JSON file")
        return []
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError) as exc:  # ValueError: JSON and UTF-8 decoding errors
        raise MemgymError(f"{path}: not valid (gzipped) UTF-8 JSON ({exc})") from None
    goals = None
    if isinstance(data, dict):  # GOAT-Bench: "goals"; HM3D ObjectNav: "goals_by_category"
        goals = data.get("goals", data.get("goals_by_category"))
    if not isinstance(goals, dict):
        raise MemgymError(f"{path}: expected a GOAT-Bench goals file with a 'goals' (or 'goals_by_category') mapping")
    objects, seen = [], set()
    for key, entries in goals.items():
        for n, entry in enumerate(entries):
            where = f"{path}: goals[{key!r}][{n}]"
            try:
                object_id = str(entry["object_id"])
                category = str(entry.get("object_category") or key.rsplit("_", 1)[-1])
                position = tuple(float(c) for c in entry["position"])
                sid = entry.get("semantic_id")
                if sid is None:
                    match = _TRAILING_INT.search(object_id)
                    if match is None:
                        raise KeyError("semantic_id (or an object_id ending in the instance id)")
                    sid = int(match.group(1))
                views = tuple(
                    ViewPoint(
                        position=tuple(float(c) for c in vp["agent_state"]["position"]),
                        rotation=tuple(float(c) for c in vp["agent_state"]["rotation"]),
                    )
                    for vp in entry.get("view_points", [])
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise MemgymError(f"{where}: missing or malformed field {exc}") from None
            if len(position) != 3:
                raise MemgymError(f"{where}: position must have 3 numbers")
            if object_id in seen:
                continue
            seen.add(object_id)
            objects.append(
                SceneObject(
                    object_id=object_id,
                    semantic_id=int(sid),
                    category=category,
                    position=position,
                    size=(0.0, 0.0, 0.0),
                    view_points=views,
                    lang_desc=str(entry.get("lang_desc") or ""),
                    attributes={k: str(v) for k, v in (entry.get("attributes") or {}).items()},
                )
            )
    return objects


# ----- writing ------------------------------------------------------------------------------------
def instance_color(instance_id: int) -> str:
    """A distinct 6-digit hex colour for an instance id (bijective on 1..2**24-1)."""
    packed = (instance_id * 2654435761) & 0xFFFFFF
    return f"{packed:06X}"


def export_hm3d(scene: MeshScene, folder: str | Path, name: str) -> Path:
    """Write ``scene`` in the HM3D layout (module docstring); returns the stem ``folder/name``.

    The scene must expose per-triangle colours and ids (a generated house does). Each triangle
    gets its own texel in an albedo atlas and in a semantic atlas, so reading the texture at any
    hit UV returns the triangle's colour / instance colour.
    """
    lookup = scene.lookup
    colors = getattr(lookup, "colors", None)
    ids = getattr(lookup, "semantic_ids", None)
    if colors is None or ids is None:
        raise MemgymError(f"scene {scene.scene_id}: export needs per-triangle colours and instance ids")
    table = getattr(scene, "semantic_table", None) or {
        int(i): (
            (scene.object_by_semantic_id(int(i)).category if scene.object_by_semantic_id(int(i)) else "unknown"),
            -1,
        )
        for i in np.unique(ids)
        if i > 0
    }
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / name
    y_up = scene.vertices[scene.triangles].reshape(-1, 3).astype(np.float64)
    z_up = y_up @ Z_UP_TO_Y_UP  # inverse of the (orthogonal) Z-up -> Y-up map
    faces = np.arange(len(z_up)).reshape(-1, 3)
    albedo = np.clip(np.round(colors * 255), 0, 255).astype(np.uint8)
    _write_atlas_glb(stem.with_suffix(".glb"), z_up, faces, albedo)
    semantic_rgb = np.array(
        [[int(instance_color(int(i))[k : k + 2], 16) for k in (0, 2, 4)] if i > 0 else [0, 0, 0] for i in ids], np.uint8
    )
    _write_atlas_glb(Path(f"{stem}.semantic.glb"), z_up, faces, semantic_rgb)
    with open(f"{stem}.semantic.txt", "w", encoding="utf-8", newline="") as handle:
        handle.write(HEADER + "\n")
        for sid, (category, region) in sorted(table.items()):
            handle.write(f'{sid},{instance_color(sid)},"{category}",{region}\n')
    goals: dict[str, list[dict[str, Any]]] = {}
    for obj in scene.objects:
        goals.setdefault(f"{name}.basis.glb_{obj.category}", []).append(
            {
                "object_id": obj.object_id
                if obj.object_id.endswith(f"_{obj.semantic_id}")
                else f"{name}_{obj.semantic_id}",
                "object_category": obj.category,
                "object_name": obj.object_id,
                "position": list(obj.position),
                "view_points": [
                    {"agent_state": {"position": list(vp.position), "rotation": list(vp.rotation)}, "iou": 0.0}
                    for vp in obj.view_points
                ],
                "lang_desc": obj.lang_desc,
                "attributes": obj.attributes,
            }
        )
    Path(f"{stem}.objects.json.gz").write_bytes(gzip.compress(json.dumps({"goals": goals}).encode("utf-8"), mtime=0))
    return stem


def _write_atlas_glb(path: Path, vertices: np.ndarray, faces: np.ndarray, tri_rgb: np.ndarray) -> None:
    """GLB whose texture holds one texel per distinct triangle colour; UVs hit texel centres."""
    palette, index = np.unique(tri_rgb, axis=0, return_inverse=True)
    side = int(np.ceil(np.sqrt(len(palette))))
    image = np.zeros((side, side, 3), np.uint8)
    rows, cols = np.divmod(np.arange(len(palette)), side)
    image[rows, cols] = palette
    u = (cols[index] + 0.5) / side
    v = 1.0 - (rows[index] + 0.5) / side
    uv = np.repeat(np.stack([u, v], axis=1), 3, axis=0)
    visual = trimesh.visual.TextureVisuals(uv=uv, image=Image.fromarray(image))
    mesh = trimesh.Trimesh(vertices, faces, visual=visual, process=False)
    buffer = io.BytesIO(mesh.export(file_type="glb"))
    path.write_bytes(buffer.getvalue())
