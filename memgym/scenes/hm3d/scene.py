"""The HM3D scene backend (:class:`HM3DScene`, registered as ``hm3d``): reads a scene's files
(layout in :mod:`memgym.scenes.hm3d`) into a :class:`~memgym.scenes.mesh_scene.MeshScene`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.paths import require_file
from memgym.core.registry import register_scene
from memgym.scenes.hm3d.annotations import read_goals, read_semantic_txt, regions_of
from memgym.scenes.hm3d.glb import load_textured_glb
from memgym.scenes.hm3d.textures import TexturedLookup
from memgym.scenes.mesh_scene import MeshScene, estimate_floor_height
from memgym.scenes.navigation import AgentSpec, NavGrid
from memgym.scenes.navmesh_file import NavMesh, read_navmesh
from memgym.scenes.objects import Relation, SceneObject
from memgym.scenes.view_points import compute_view_points

NAVIGATION_SOURCES = ("auto", "navmesh", "mesh")
MESH_SUFFIXES = (".glb", ".basis.glb")
"""Textured-geometry file names of a scene stem ``X``, in order of preference."""
NAVMESH_SUFFIXES = (".navmesh", ".basis.navmesh")
"""Navmesh file names of a scene stem ``X``, in order of preference (HM3D v0.2 ships the second)."""
STRUCTURE = {"wall", "floor", "ceiling", "unknown", "misc"}


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
        semantic_txt = _semantic_txt(stem)
        v, t, uv, tex, textures, colors = load_textured_glb(mesh, up_axis)
        lookup = TexturedLookup(uv, tex, textures, colors)
        table, semantic_mesh = _read_semantics(stem, semantic_txt, up_axis)
        goals = read_goals(
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
        scene._attach_navmesh(stem, navigation)
        boxes = scene._instance_boxes() if semantic_mesh is not None else {}
        if goals:
            objects = scene._annotated_objects(goals, boxes, f"HM3D scene {stem}", semantic_txt)
        else:
            objects = scene._instance_objects(boxes, camera_height)
        scene.set_objects(objects)
        scene.regions = regions_of(objects)
        return scene

    def _attach_navmesh(self, stem: Path, navigation: str) -> None:
        """Find ``stem.navmesh`` (or ``stem.basis.navmesh``) and read it when ``navigation`` uses it."""
        navmeshes = [Path(f"{stem}{suffix}") for suffix in NAVMESH_SUFFIXES]
        self.navmesh_path = next((p for p in navmeshes if p.is_file()), None)
        if navigation == "navmesh" and self.navmesh_path is None:
            raise MemgymError(
                f"HM3D scene {stem}: navigation='navmesh' but neither {navmeshes[0]} nor {navmeshes[1]} exists"
            )
        use_navmesh = navigation != "mesh" and self.navmesh_path is not None
        self.navmesh = read_navmesh(self.navmesh_path) if use_navmesh else None

    def _annotated_objects(
        self, goals: list[SceneObject], boxes: dict[int, np.ndarray], where: str, semantic_txt: Path
    ) -> list[SceneObject]:
        """The annotated ``goals`` with the size of their instance's ``(2, 3)`` box (when the semantic
        mesh has it) and the region of :attr:`semantic_table`."""
        table = self.semantic_table
        objects = []
        for obj in goals:
            if table and obj.semantic_id not in table:
                raise MemgymError(
                    f"{where}: annotated object '{obj.object_id}' has instance id {obj.semantic_id}, "
                    f"which {semantic_txt} does not list"
                )
            box = boxes.get(obj.semantic_id)
            size = tuple(round(float(s), 4) for s in (box[1] - box[0])) if box is not None else obj.size
            region = table.get(obj.semantic_id, ("", -1))[1]
            region_name = f"region {region}" if region >= 0 else ""
            objects.append(dataclasses.replace(obj, size=size, region_id=region, region=region_name))
        return objects

    def _instance_objects(self, boxes: dict[int, np.ndarray], camera_height: float) -> list[SceneObject]:
        """Without annotations: every instance of :attr:`semantic_table` with a box, except walls,
        floors and ceilings, as an object with computed view points."""
        objects = []
        for sid, (category, region) in sorted(self.semantic_table.items()):
            if category.lower() in STRUCTURE or sid not in boxes:
                continue
            box = boxes[sid]
            views = compute_view_points(self, sid, box, camera_height=camera_height)
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
        return objects

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


def _semantic_txt(stem: Path) -> Path:
    """``stem.semantic.txt``; a clear error when only one of it and ``stem.semantic.glb`` exists."""
    txt, glb = Path(f"{stem}.semantic.txt"), Path(f"{stem}.semantic.glb")
    if glb.is_file() != txt.is_file():
        have, lack = (glb, txt) if glb.is_file() else (txt, glb)
        raise MemgymError(f"HM3D scene {stem}: {have} exists but {lack} is missing")
    return txt


def _read_semantics(
    stem: Path, semantic_txt: Path, up_axis: str
) -> tuple[dict[int, tuple[str, int]], tuple[np.ndarray, np.ndarray, TexturedLookup] | None]:
    """``(instance id -> (category, region id), (vertices, triangles, lookup) of X.semantic.glb)``;
    empty and None for a scene without semantic files."""
    if not semantic_txt.is_file():
        return {}, None
    rows = read_semantic_txt(semantic_txt)
    color_to_id = {int(c, 16): i for i, c, _, _ in rows}
    table = {i: (cat, reg) for i, _, cat, reg in rows}
    sv, st, suv, stex, stextures, scolors = load_textured_glb(Path(f"{stem}.semantic.glb"), up_axis, need_textures=True)
    return table, (sv, st, TexturedLookup(suv, stex, stextures, scolors, color_to_id))
