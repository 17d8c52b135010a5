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

Modules: :mod:`.scene` (the backend), :mod:`.glb` and :mod:`.textures` (meshes and their
textures), :mod:`.annotations` (``X.semantic.txt``, object goals), :mod:`.export` (the writer).
"""

from __future__ import annotations

from memgym.scenes.hm3d.annotations import HEADER, read_semantic_txt
from memgym.scenes.hm3d.export import export_hm3d, instance_color
from memgym.scenes.hm3d.glb import Z_UP_TO_Y_UP, UndecodedTextureWarning, load_textured_glb, undecodable_textures
from memgym.scenes.hm3d.scene import HM3DScene, scene_files
from memgym.scenes.hm3d.textures import TexturedLookup

__all__ = [
    "HEADER",
    "Z_UP_TO_Y_UP",
    "HM3DScene",
    "TexturedLookup",
    "UndecodedTextureWarning",
    "export_hm3d",
    "instance_color",
    "load_textured_glb",
    "read_semantic_txt",
    "scene_files",
    "undecodable_textures",
]
