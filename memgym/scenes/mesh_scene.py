"""``MeshScene``: a triangle-mesh scene rendered by CPU ray casting (Open3D / Embree).

Every scene backend that has its geometry in memory (generated houses, HM3D files) is a
:class:`MeshScene`. Rendering casts one ray per pixel of a pinhole camera into an
``open3d.t.geometry.RaycastingScene``; the albedo and instance id of each hit come from a
:class:`SurfaceLookup` (per-triangle values, or texture look-ups at the hit's UV), and the
colour is shaded with a head light plus a fixed sky light so that walls, floors and furniture
read as a room. Depth is the z-depth along the optical axis in metres (0 where nothing is hit),
as Habitat's depth sensor reports it.

Navigation (islands, geodesics, snapping) is delegated to a :class:`NavGrid` built from the
same geometry for an :class:`AgentSpec` (backends with a better source, such as an HM3D scene's
navmesh, override :meth:`MeshScene._build_navgrid`).
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import open3d as o3d

from memgym.core.errors import MemgymError
from memgym.core.heap import retain_freed_heap
from memgym.core.protocols import Scene
from memgym.scenes.navigation import AgentSpec, GeodesicResult, NavGrid
from memgym.scenes.objects import Region, SceneObject
from memgym.scenes.poses import quat_to_matrix

_SKY_LIGHT = (np.array([0.3, 1.0, 0.2]) / np.linalg.norm([0.3, 1.0, 0.2])).astype(np.float32)


@dataclasses.dataclass(frozen=True)
class PinholeIntrinsics:
    """A pinhole camera: ``width x height`` pixels, horizontal field of view ``hfov`` degrees."""

    width: int = 256
    height: int = 256
    hfov: float = 90.0

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0 or not 0 < self.hfov < 180:
            raise MemgymError(f"camera needs positive width/height and 0 < hfov < 180, got {self}")

    @property
    def focal(self) -> float:
        """Focal length in pixels."""
        return (self.width / 2) / math.tan(math.radians(self.hfov) / 2)

    def camera_rays(self) -> np.ndarray:
        """``(H, W, 3) float32`` ray directions in the camera frame with z = -1 (so t = z-depth)."""
        f = self.focal
        u = (np.arange(self.width) + 0.5 - self.width / 2) / f
        v = -(np.arange(self.height) + 0.5 - self.height / 2) / f
        uu, vv = np.meshgrid(u, v)
        return np.stack([uu, vv, -np.ones_like(uu)], axis=-1).astype(np.float32)


class SurfaceLookup(abc.ABC):
    """Albedo and instance id of ray hits, from primitive ids and barycentric UVs."""

    @abc.abstractmethod
    def albedo(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """``(N, 3) float32`` albedo in [0, 1] of hits on ``primitive_ids`` ``(N,)`` at ``uvs`` ``(N, 2)``."""

    @abc.abstractmethod
    def semantic(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        """``(N,) int32`` instance ids (0 = unannotated)."""

    @abc.abstractmethod
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays that decide every albedo and id this lookup returns (hashed by
        :meth:`MeshScene.content_digest`)."""


class PerTriangleLookup(SurfaceLookup):
    """Constant albedo ``(M, 3)`` and instance id ``(M,)`` per triangle."""

    def __init__(self, colors: np.ndarray, semantic: np.ndarray) -> None:
        self.colors = np.asarray(colors, np.float32)
        self.semantic_ids = np.asarray(semantic, np.int32)

    def albedo(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        return np.take(self.colors, primitive_ids, axis=0)  # np.take: several times faster than [ids] on rows

    def semantic(self, primitive_ids: np.ndarray, uvs: np.ndarray) -> np.ndarray:
        return np.take(self.semantic_ids, primitive_ids)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.colors, self.semantic_ids


_FRAME_POOLS: dict[int, ThreadPoolExecutor] = {}


def _each_frame(work: Callable[[int], None], frames: int) -> None:
    """Call ``work(i)`` for every frame ``i < frames`` of a batch, on this process's frame threads
    (one per CPU, at most 4; numpy releases the GIL) when there are several. Each call writes its
    own frame's slices only, so the result does not depend on the threads. A forked child, which
    has none of its parent's threads, starts its own."""
    if frames == 1:
        work(0)
        return
    pool = _FRAME_POOLS.get(os.getpid())
    if pool is None:
        pool = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="memgym-frames")
        _FRAME_POOLS[os.getpid()] = pool
    list(pool.map(work, range(frames)))


class MeshScene(Scene):
    """A scene made of a render mesh (+ optional separate semantic mesh), objects and regions.

    Args:
        vertices: ``(N, 3)`` render-mesh vertices, metres, Habitat frame.
        triangles: ``(M, 3)`` vertex indices.
        lookup: albedo (and, without a semantic mesh, instance ids) of render-mesh hits.
        objects: annotated objects.
        regions: rooms.
        semantic_mesh: optional ``(vertices, triangles, lookup)`` of a separate semantic mesh
            (HM3D's ``X.semantic.glb``); instance ids then come from casting into it.
        agent: agent body for navigation.
        floor_height: floor level for the navigation grid (metres); estimated from the mesh
            when None.
        scene_id: a name for messages and records.
    """

    def __init__(
        self,
        vertices: np.ndarray,
        triangles: np.ndarray,
        lookup: SurfaceLookup,
        *,
        objects: Sequence[SceneObject] = (),
        regions: Sequence[Region] = (),
        semantic_mesh: tuple[np.ndarray, np.ndarray, SurfaceLookup] | None = None,
        agent: AgentSpec | None = None,
        floor_height: float | None = None,
        scene_id: str = "scene",
    ) -> None:
        self.scene_id = scene_id
        self.vertices = np.asarray(vertices, np.float32)
        self.triangles = np.asarray(triangles, np.int32)
        if len(self.triangles) == 0:
            raise MemgymError(f"scene {scene_id}: the mesh has no triangles")
        self.lookup = lookup
        retain_freed_heap()  # per-frame buffers are reused instead of page-faulted in again (memgym.core.heap)
        self._raycaster = _raycaster(self.vertices, self.triangles)
        self._semantic = None
        self.semantic_geometry: tuple[np.ndarray, np.ndarray] | None = None
        if semantic_mesh is not None:
            sv, st, slookup = semantic_mesh
            self.semantic_geometry = (np.asarray(sv, np.float32), np.asarray(st, np.int32))
            same = _same_surfaces(self.semantic_geometry, (self.vertices, self.triangles))
            # the same surfaces (an exported scene): one cast gives both images
            self._semantic = (self._raycaster if same else _raycaster(*self.semantic_geometry), slookup)
        self.set_objects(objects)
        self.regions = list(regions)
        self.agent = agent or AgentSpec()
        self.floor_height = (
            estimate_floor_height(self.vertices, self.triangles) if floor_height is None else floor_height
        )
        self._nav: NavGrid | None = None
        self._camera_bases: dict[PinholeIntrinsics, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.default_intrinsics = PinholeIntrinsics()
        self._content_digest: str | None = None

    # ----- Scene API ---------------------------------------------------------------------------
    @property
    def objects(self) -> list[SceneObject]:
        return self._objects

    def set_objects(self, objects: Sequence[SceneObject]) -> None:
        """Replace the annotated objects (backends annotate after the geometry is built)."""
        self._objects = list(objects)
        self._by_id = {o.object_id: o for o in self._objects}
        self._by_semantic = {o.semantic_id: o for o in self._objects}

    def object(self, object_id: str) -> SceneObject:
        """The object with ``object_id``; a clear error names the scene when it is unknown."""
        if object_id not in self._by_id:
            raise MemgymError(f"scene {self.scene_id} has no object '{object_id}'")
        return self._by_id[object_id]

    def object_by_semantic_id(self, semantic_id: int) -> SceneObject | None:
        """The object whose pixels carry ``semantic_id`` (None for walls, floors, ...)."""
        return self._by_semantic.get(int(semantic_id))

    def content_digest(self) -> str:
        """Hex BLAKE2b of everything that decides a rendered pixel: the render mesh, its surface
        lookup, and the semantic mesh and its lookup (computed once; keys :mod:`memgym.sensors.frame_cache`)."""
        if self._content_digest is None:
            digest = hashlib.blake2b(digest_size=20)
            arrays = [self.vertices, self.triangles, *self.lookup.arrays()]
            if self._semantic is not None:
                arrays += [*self.semantic_geometry, *self._semantic[1].arrays()]
            for array in arrays:
                array = np.ascontiguousarray(array)
                digest.update(f"{array.dtype.str}{array.shape};".encode())
                digest.update(array.data)
            self._content_digest = digest.hexdigest()
        return self._content_digest

    def bounds(self) -> np.ndarray:
        """``(2, 3)`` min/max corner of the render mesh, metres."""
        return np.stack([self.vertices.min(0), self.vertices.max(0)])

    @property
    def navgrid(self) -> NavGrid:
        """The navigation grid (built on first use)."""
        if self._nav is None:
            self._nav = self._build_navgrid()
        return self._nav

    def _build_navgrid(self) -> NavGrid:
        """The grid computed from the render mesh (backends with another source override this)."""
        return NavGrid.from_mesh(self.vertices[self.triangles], self.bounds(), self.agent, self.floor_height)

    def render(
        self, position: np.ndarray, rotation: np.ndarray, intrinsics: PinholeIntrinsics | None = None
    ) -> dict[str, np.ndarray]:
        """Render from a camera at ``position`` ``(3,)`` with orientation ``rotation`` ``(x, y, z, w)``.

        Returns ``{"rgb": (H, W, 3) uint8, "depth": (H, W) float32 metres, "semantic": (H, W) int32}``:
        frame 0 of :meth:`render_batch` of this one pose.
        """
        batch = self.render_batch(np.reshape(position, (1, 3)), np.reshape(rotation, (1, 4)), intrinsics)
        return {key: images[0] for key, images in batch.items()}

    def render_batch(
        self, positions: np.ndarray, rotations: np.ndarray, intrinsics: PinholeIntrinsics | None = None
    ) -> dict[str, np.ndarray]:
        """Render ``B`` camera poses with one ray cast: positions ``(B, 3)`` metres, orientations
        ``(B, 4)`` ``(x, y, z, w)``.

        Returns ``{"rgb": (B, H, W, 3) uint8, "depth": (B, H, W) float32 metres, "semantic": (B, H, W)
        int32}``. Each ray's result depends on that ray alone, so frame ``b`` is byte-identical to
        :meth:`render` of pose ``b`` whatever the batch holds.
        """
        intrinsics = intrinsics or self.default_intrinsics
        positions = np.asarray(positions, float)
        rotations = np.asarray(rotations, float)
        if positions.ndim != 2 or positions.shape[1] != 3 or rotations.shape != (len(positions), 4):
            raise MemgymError(
                f"scene {self.scene_id}: render_batch needs positions (B, 3) and rotations (B, 4), "
                f"got {positions.shape} and {rotations.shape}"
            )
        b, h, w = len(positions), intrinsics.height, intrinsics.width
        rays = np.empty((b, h * w, 6), np.float32)

        def aim(i: int) -> None:
            self._rays_for(positions[i], rotations[i], intrinsics, out=rays[i])

        _each_frame(aim, b)
        hits = self._raycaster.cast_rays(o3d.core.Tensor.from_numpy(rays))
        t, prims = hits["t_hit"].numpy(), hits["primitive_ids"].numpy()
        uvs, normals = hits["primitive_uvs"].numpy(), hits["primitive_normals"].numpy()
        scene, lookup = self._semantic if self._semantic is not None else (self._raycaster, self.lookup)
        separate = None if scene is self._raycaster else self.semantic_of_rays(rays.reshape(-1, 6)).reshape(b, -1)
        rgb = np.empty((b, h * w, 3), np.uint8)
        depth = np.empty((b, h * w), np.float32)
        semantic = np.empty((b, h * w), np.int32)

        def finish(i: int) -> None:
            hit = np.isfinite(t[i])
            prim = np.where(hit, prims[i], np.uint32(0))
            shade = self._shade(normals[i], rays[i], hit, intrinsics)
            self._colour(self.lookup.albedo(prim, uvs[i]), shade, out=rgb[i])
            np.copyto(depth[i], t[i])
            depth[i][~hit] = 0.0
            if separate is None:
                np.copyto(semantic[i], lookup.semantic(prim, uvs[i]))
                semantic[i][~hit] = 0
            else:
                semantic[i] = separate[i]

        # frame by frame: one frame's per-pixel arrays stay in cache (a whole batch's do not)
        _each_frame(finish, b)
        return {
            "rgb": rgb.reshape(b, h, w, 3),
            "depth": depth.reshape(b, h, w),
            "semantic": semantic.reshape(b, h, w),
        }

    def _shade(
        self, normals: np.ndarray, rays: np.ndarray, hit: np.ndarray, intrinsics: PinholeIntrinsics
    ) -> np.ndarray:
        """``(N,) float32`` light falling on each hit (0 for misses) from its unit surface normal ``(N, 3)``:
        a head light ``0.25 + 0.5 |cos(normal, ray)|`` plus a sky light ``0.3 max(0, normal . sky)``."""
        # per column and in place: an einsum over the (N, 3) rows gives the same float32 values 2-3x slower
        n0, n1, n2 = normals[:, 0], normals[:, 1], normals[:, 2]
        shade = n0 * rays[:, 3]
        shade += n1 * rays[:, 4]
        shade += n2 * rays[:, 5]
        np.abs(shade, out=shade)
        shade *= self._camera_basis(intrinsics)[2]
        shade *= 0.5
        shade += 0.25
        sky = n0 * _SKY_LIGHT[0]
        sky += n1 * _SKY_LIGHT[1]
        sky += n2 * _SKY_LIGHT[2]
        np.maximum(sky, 0.0, out=sky)
        sky *= 0.3
        shade += sky
        shade *= hit
        return shade

    @staticmethod
    def _colour(albedo: np.ndarray, shade: np.ndarray, out: np.ndarray) -> None:
        """Write into ``out`` ``(N, 3) uint8`` the shaded colour of ``(N, 3)`` albedo in [0, 1] under ``(N,)`` light."""
        # per channel: a (N, 3) * (N, 1) broadcast runs 3-element inner loops, ~1.5x slower
        scaled = shade * 255.0
        rgb = np.empty(albedo.shape, np.float32)
        for c in range(3):
            np.multiply(albedo[:, c], scaled, out=rgb[:, c])
        np.copyto(out, np.minimum(rgb, 255.0, out=rgb), casting="unsafe")  # truncation, as astype(uint8)

    def _rays_for(
        self, position: np.ndarray, rotation: np.ndarray, intrinsics: PinholeIntrinsics, out: np.ndarray | None = None
    ) -> np.ndarray:
        """``(H*W, 6) float32`` rays (origin, direction with camera-frame z = -1) of a camera pose,
        written into ``out`` when given."""
        # written out per column: a BLAS (N, 3) @ (3, 3) product is slow and contends for threads, and
        # broadcasting the (3,) origin into the (N, 6) rows costs more than three scalar column fills
        x, y, _ = self._camera_basis(intrinsics)
        r = quat_to_matrix(rotation).astype(np.float32)
        origin = np.asarray(position, np.float32)
        rays = np.empty((len(x), 6), np.float32) if out is None else out
        for i in range(3):
            rays[:, i] = origin[i]
            rays[:, 3 + i] = x * r[i, 0] + y * r[i, 1] - r[i, 2]
        return rays

    def _camera_basis(self, intrinsics: PinholeIntrinsics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Contiguous ``(H*W,) float32`` camera-frame ray components x, y (z = -1) and 1 / ray length,
        computed once per intrinsics."""
        if intrinsics not in self._camera_bases:
            camera = intrinsics.camera_rays().reshape(-1, 3)
            inv_length = (1.0 / np.linalg.norm(camera, axis=1)).astype(np.float32)
            self._camera_bases[intrinsics] = (camera[:, 0].copy(), camera[:, 1].copy(), inv_length)
        return self._camera_bases[intrinsics]

    def semantic_of_rays(self, rays: np.ndarray) -> np.ndarray:
        """``(N,) int32`` instance id first hit by each of ``rays`` ``(N, 6)`` (0 = miss / none)."""
        rays = np.ascontiguousarray(rays, np.float32)
        scene, lookup = self._semantic if self._semantic is not None else (self._raycaster, self.lookup)
        hits = scene.cast_rays(o3d.core.Tensor.from_numpy(rays))
        hit = np.isfinite(hits["t_hit"].numpy())
        out = np.zeros(len(rays), np.int32)
        out[hit] = lookup.semantic(
            hits["primitive_ids"].numpy()[hit].astype(np.int64), hits["primitive_uvs"].numpy()[hit]
        )
        return out

    def instance_boxes(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Instance ids ``(K,) int32`` (ascending, 0 excluded) and ``(K, 2, 3)`` min/max corners (metres)
        of the triangles whose hits carry each id; None when ids are not per triangle (textures)."""
        lookup = self._semantic[1] if self._semantic is not None else self.lookup
        if not isinstance(lookup, PerTriangleLookup):
            return None
        vertices, triangles = self.semantic_geometry or (self.vertices, self.triangles)
        ids = lookup.semantic_ids
        order = np.flatnonzero(ids > 0)
        order = order[np.argsort(ids[order], kind="stable")]
        corners = vertices[triangles[order]]  # (T, 3, 3)
        starts = np.flatnonzero(np.r_[True, np.diff(ids[order]) != 0]) if len(order) else order
        lo = np.minimum.reduceat(corners.min(axis=1), starts) if len(order) else np.zeros((0, 3), np.float32)
        hi = np.maximum.reduceat(corners.max(axis=1), starts) if len(order) else np.zeros((0, 3), np.float32)
        return ids[order][starts].astype(np.int32), np.stack([lo, hi], axis=1)

    def render_semantic(
        self, position: np.ndarray, rotation: np.ndarray, intrinsics: PinholeIntrinsics | None = None
    ) -> np.ndarray:
        """Only the ``(H, W) int32`` instance ids of :meth:`render` (cheaper: no shading)."""
        intrinsics = intrinsics or self.default_intrinsics
        rays = self._rays_for(position, rotation, intrinsics)
        return self.semantic_of_rays(rays).reshape(intrinsics.height, intrinsics.width)

    def cast_depth(self, rays: np.ndarray) -> np.ndarray:
        """Bare cast of ``(N, 6)`` rays (origin, direction); ``(N,)`` float32 hit parameter (inf = miss)."""
        rays = np.ascontiguousarray(rays, np.float32)
        return self._raycaster.cast_rays(o3d.core.Tensor.from_numpy(rays))["t_hit"].numpy()

    def geodesic(self, start: np.ndarray, goals: np.ndarray) -> GeodesicResult:
        """Shortest path from ``start`` to the nearest of ``goals`` with its status."""
        return self.navgrid.geodesic(start, goals)

    def geodesic_distance(self, start: np.ndarray, goal: np.ndarray) -> float:
        return self.navgrid.geodesic_distance(start, goal)

    def shortest_path(self, start: np.ndarray, goal: np.ndarray) -> np.ndarray:
        return self.navgrid.geodesic(start, goal).path

    def is_navigable(self, position: np.ndarray) -> bool:
        return self.navgrid.is_navigable(position)


def _raycaster(vertices: np.ndarray, triangles: np.ndarray) -> o3d.t.geometry.RaycastingScene:
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(o3d.core.Tensor(vertices.astype(np.float32)), o3d.core.Tensor(triangles.astype(np.uint32)))
    return scene


def _same_surfaces(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether two ``(vertices, triangles)`` meshes hold the same triangles in the same order
    (vertex numbering may differ), so that a ray cast hits the same triangle in both."""
    (va, ta), (vb, tb) = a, b
    if ta.shape != tb.shape:
        return False
    if va.shape == vb.shape and np.array_equal(va, vb) and np.array_equal(ta, tb):
        return True
    return bool(np.array_equal(va[ta], vb[tb]))


def estimate_floor_height(vertices: np.ndarray, triangles: np.ndarray, bin_size: float = 0.05) -> float:
    """The floor level (metres): the lowest height holding at least half as much upward-facing
    area as the most covered height (so a ceiling slab's top or a second storey is not chosen)."""
    tri = vertices[triangles].astype(np.float64)
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area = 0.5 * np.linalg.norm(cross, axis=1)
    up = cross[:, 1] / np.maximum(2 * area, 1e-12)
    keep = up > 0.9
    if not keep.any():
        raise MemgymError("cannot find a floor: the mesh has no upward-facing triangles")
    heights = tri[keep, :, 1].mean(1)
    bins = np.floor(heights / bin_size).astype(int)
    totals: dict[int, float] = {}
    for b, a in zip(bins, area[keep]):
        totals[b] = totals.get(b, 0.0) + a
    largest = max(totals.values())
    best = min(b for b, a in totals.items() if a >= 0.5 * largest)
    in_bin = bins == best
    return float(np.average(heights[in_bin], weights=area[keep][in_bin]))
