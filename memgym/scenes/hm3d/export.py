"""Writing a scene in the HM3D layout (:func:`export_hm3d`), so the HM3D reader can be tested on
generated houses."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import trimesh
from PIL import Image

from memgym.core.errors import MemgymError
from memgym.scenes.hm3d.annotations import HEADER
from memgym.scenes.hm3d.glb import Z_UP_TO_Y_UP
from memgym.scenes.mesh_scene import MeshScene


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
