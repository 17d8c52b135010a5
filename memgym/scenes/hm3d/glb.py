"""Reading textured GLB meshes (:func:`load_textured_glb`), Basis Universal textures included
(their surfaces take flat colours; :func:`undecodable_textures`)."""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from memgym.core.errors import MemgymError
from memgym.core.paths import require_file

Z_UP_TO_Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
"""Maps Z-up file coordinates to Habitat's Y-up frame: ``(x, y, z) -> (x, z, -y)``."""


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
    _check_textures(path, need_textures)
    try:
        loaded = trimesh.load(str(path), force="scene", process=False)
    except Exception as exc:  # trimesh raises many types for corrupt files
        raise MemgymError(f"{path}: cannot read as GLB ({exc})") from None
    verts, tris, uvs, tex_index, textures, colors = _node_meshes(loaded)
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


def _check_textures(path: Path, need_textures: bool) -> None:
    """Refuse GLB ``path`` with undecodable textures when ``need_textures``; else warn once per file
    and process that its surfaces take flat colours."""
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
            stacklevel=3,
        )


def _node_meshes(loaded: trimesh.Scene) -> tuple[list, ...]:
    """Per mesh node of ``loaded``, in graph order: ``(vertices (N, 3) in the file frame, triangles
    (M, 3) offset into the concatenated vertices, tri_uv (M, 3, 2), tri_texture (M,), textures,
    tri_color (M, 3) uint8)`` lists (``textures``: the distinct images, indexed by tri_texture)."""
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
    return verts, tris, uvs, tex_index, textures, colors


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
