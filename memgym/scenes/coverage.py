"""How many pixels of a semantic view each instance covers, casting only the rays that can matter.

A pixel can carry an instance id only if its ray meets the instance's bounding box, so its centre
lies inside the box's projection. :class:`InstanceCoverage` projects the boxes of the requested
instances (:meth:`MeshScene.instance_boxes`), drops every instance whose projected rectangle
(widened by one pixel against rounding) holds fewer pixel centres than the threshold, and casts
only the pixels inside the remaining rectangles. The rays are the rows of the full-frame rays of
:meth:`MeshScene.render_semantic`, so the counts equal those of the full render exactly. Scenes
whose ids come from textures (no per-triangle boxes) are rendered in full.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memgym.scenes.mesh_scene import MeshScene, PinholeIntrinsics
from memgym.scenes.poses import quat_to_matrix

_NEAR = 0.05
"""A box nearer than this (metres) to the eye may cover any pixel; farther boxes are projected."""
_EDGES = np.array([(k, k | 1 << a) for k in range(8) for a in range(3) if not k >> a & 1])
"""``(12, 2)`` corner indices of the edges of a box whose corner ``k`` takes axis ``a`` from ``hi`` when bit ``a`` is set."""


class InstanceCoverage:
    """Pixel counts of instances in ``intrinsics``-sized semantic views of ``scene``."""

    def __init__(self, scene: MeshScene, intrinsics: PinholeIntrinsics) -> None:
        self.scene, self.intrinsics = scene, intrinsics
        self.size = intrinsics.width * intrinsics.height
        boxes = scene.instance_boxes()
        self._ids, self._boxes = (None, None) if boxes is None else boxes
        if self._boxes is not None:  # (K, 8, 3) corners, float64 of the float32 vertices
            lo, hi = self._boxes[:, 0].astype(float), self._boxes[:, 1].astype(float)
            pick = np.array([[(k >> a) & 1 for a in range(3)] for k in range(8)], bool)  # (8, 3)
            self._corners = np.where(pick[None], hi[:, None], lo[:, None])

    def counts(self, eye: np.ndarray, rotation: np.ndarray, min_pixels: float, ids: Sequence[int]) -> dict[int, int]:
        """``{id: pixels}`` of the instances ``ids`` covering at least ``min_pixels`` pixels of the view
        from a camera at ``eye`` ``(3,)`` with orientation ``rotation`` ``(x, y, z, w)``."""
        rays = self.scene._rays_for(eye, rotation, self.intrinsics)
        wanted = np.asarray(ids, np.int64)
        if self._boxes is None:
            return _at_least(self.scene.semantic_of_rays(rays), wanted, min_pixels)
        mask = self._pixels(eye, rotation, min_pixels, wanted)
        if mask is None:
            return {}
        return _at_least(self.scene.semantic_of_rays(rays[mask.ravel()]), wanted, min_pixels)

    def _pixels(self, eye: np.ndarray, rotation: np.ndarray, min_pixels: float, wanted: np.ndarray):
        """``(H, W) bool`` union of the projected rectangles of the ``wanted`` instances that hold at
        least ``min_pixels`` pixel centres (None if there is none).

        A hit seen through a pixel lies in the view frustum; frustum points within ``_NEAR`` of the
        eye are all that lies in front of the plane at depth ``_NEAR / k`` (``k``: the frustum's
        corner ray length per unit depth), so a box at least ``_NEAR`` from the eye is clipped by
        that plane and the clipped box projected; a nearer box may cover any pixel."""
        h, w = self.intrinsics.height, self.intrinsics.width
        rows = np.searchsorted(self._ids, wanted)
        rows = rows[(rows < len(self._ids)) & (self._ids[np.minimum(rows, len(self._ids) - 1)] == wanted)]
        if not len(rows):
            return None
        f = self.intrinsics.focal
        origin = np.asarray(eye, np.float32).astype(float)
        lo, hi = self._boxes[rows, 0].astype(float), self._boxes[rows, 1].astype(float)
        near = np.linalg.norm(np.maximum(np.maximum(lo - origin, origin - hi), 0.0), axis=1) < _NEAR
        plane = _NEAR / np.sqrt(1.0 + (w / 2 / f) ** 2 + (h / 2 / f) ** 2)
        r = quat_to_matrix(rotation).astype(np.float32).astype(float)
        local = (self._corners[rows] - origin) @ r  # camera frame (K, 8, 3); depth is -z
        a, b = local[:, _EDGES[:, 0]], local[:, _EDGES[:, 1]]  # (K, 12, 3) edge ends
        da, db = -a[..., 2:], -b[..., 2:]
        crosses = (da - plane) * (db - plane) < 0
        cut = a + (b - a) * np.where(crosses, (plane - da) / np.where(crosses, db - da, 1.0), 0.0)
        points = np.concatenate([local, cut], axis=1)  # (K, 20, 3): corners, then edge cuts
        valid = np.concatenate([-local[..., 2] >= plane, crosses[..., 0]], axis=1)
        depth = np.where(valid, -points[..., 2], 1.0)
        px = np.where(valid, points[..., 0] / depth * f + w / 2 - 0.5, np.nan)  # column j has its centre at j
        py = np.where(valid, -points[..., 1] / depth * f + h / 2 - 0.5, np.nan)
        seen = near | valid.any(axis=1)
        with np.errstate(invalid="ignore"):
            bounds = [np.fmin.reduce(px, axis=1), np.fmax.reduce(px, axis=1)]
            bounds += [np.fmin.reduce(py, axis=1), np.fmax.reduce(py, axis=1)]
        c0 = np.where(near, 0, np.ceil(bounds[0]) - 1).clip(0, w)
        c1 = np.where(near, w - 1, np.floor(bounds[1]) + 1).clip(-1, w - 1)
        r0 = np.where(near, 0, np.ceil(bounds[2]) - 1).clip(0, h)
        r1 = np.where(near, h - 1, np.floor(bounds[3]) + 1).clip(-1, h - 1)
        area = np.maximum(c1 - c0 + 1, 0) * np.maximum(r1 - r0 + 1, 0)
        keep = np.flatnonzero(seen & (area >= min_pixels))
        if not len(keep):
            return None
        mask = np.zeros((h, w), bool)
        for k in keep:
            mask[int(r0[k]) : int(r1[k]) + 1, int(c0[k]) : int(c1[k]) + 1] = True
        return mask


def _at_least(semantic: np.ndarray, wanted: np.ndarray, min_pixels: float) -> dict[int, int]:
    """``{id: count}`` of the ``wanted`` ids occurring at least ``min_pixels`` times in ``semantic``."""
    found, counts = np.unique(semantic, return_counts=True)
    keep = np.isin(found, wanted) & (counts >= min_pixels)
    return {int(i): int(c) for i, c in zip(found[keep], counts[keep])}
