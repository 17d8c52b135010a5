"""How many pixels of a semantic view each instance covers, casting only the rays that can matter.

A pixel can carry an instance id only if its ray meets the instance's bounding box, so its centre
lies inside the box's projection. :class:`InstanceCoverage` projects the boxes of the requested
instances (:meth:`MeshScene.instance_boxes`, clipped to the view frustum), drops every instance
whose projected rectangle (widened by one pixel against rounding) holds fewer pixel centres than
the threshold, and casts only the pixels inside the remaining rectangles, for a batch of views in
one cast. The rays are the rows of the full-frame rays of :meth:`MeshScene.render_semantic`, and a
ray's hit does not depend on the other rays cast with it, so the counts equal those of full renders
exactly. Scenes whose ids come from textures (no per-triangle boxes) are rendered in full.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memgym.scenes.mesh_scene import MeshScene, PinholeIntrinsics
from memgym.scenes.poses import quat_to_matrix

_NEAR = 0.05
"""A box nearer than this (metres) to the eye may cover any pixel; farther boxes are projected."""
_BOXES_PER_CHUNK = 16384
"""About how many (view, box) pairs are projected at once (bounds the memory, ~2 KB a pair)."""
_EDGES = np.array([(k, k | 1 << a) for k in range(8) for a in range(3) if not k >> a & 1])
"""``(12, 2)`` corner indices of the edges of a box whose corner ``k`` takes axis ``a`` from ``hi`` when bit ``a`` is set."""


class InstanceCoverage:
    """Pixel counts of instances in ``intrinsics``-sized semantic views of ``scene``."""

    def __init__(self, scene: MeshScene, intrinsics: PinholeIntrinsics) -> None:
        self.scene, self.intrinsics = scene, intrinsics
        self.size = intrinsics.width * intrinsics.height
        boxes = scene.instance_boxes()
        self._ids, self._boxes = (None, None) if boxes is None else boxes
        self._rows: dict[tuple[int, ...], np.ndarray] = {}
        if self._boxes is not None:  # (K, 8, 3) corners, float64 of the float32 vertices
            lo, hi = self._boxes[:, 0].astype(float), self._boxes[:, 1].astype(float)
            pick = np.array([[(k >> a) & 1 for a in range(3)] for k in range(8)], bool)  # (8, 3)
            self._corners = np.where(pick[None], hi[:, None], lo[:, None])

    def counts(
        self, eyes: np.ndarray, rotations: np.ndarray, min_pixels: float, ids: Sequence[int]
    ) -> list[dict[int, int]]:
        """Per view, ``{id: pixels}`` of the instances ``ids`` covering at least ``min_pixels`` pixels,
        for cameras at ``eyes`` ``(F, 3)`` with orientations ``rotations`` ``(F, 4)`` ``(x, y, z, w)``;
        all pixels that matter are cast at once."""
        eyes = np.asarray(eyes, np.float32).reshape(-1, 3)
        rotations = np.asarray(rotations, float).reshape(-1, 4)
        wanted = np.asarray(ids, np.int64)
        if not len(eyes):
            return []
        matrices = np.stack([quat_to_matrix(q) for q in rotations]).astype(np.float32)  # as MeshScene._rays_for
        masks = None
        if self._boxes is not None:  # views in chunks of about _BOXES_PER_CHUNK (view, box) pairs
            step = max(1, _BOXES_PER_CHUNK // max(1, len(self._rows_of(wanted))))
            parts = [self._pixels(eyes[k : k + step], matrices[k : k + step], min_pixels, wanted)
                     for k in range(0, len(eyes), step)]  # fmt: skip
            masks = np.concatenate(parts)
        frames, rays = [], []
        for f in range(len(eyes)):
            if masks is not None and not masks[f].any():
                continue
            frame_rays = self.scene._rays_for(eyes[f], rotations[f], self.intrinsics)
            rays.append(frame_rays if masks is None else frame_rays[masks[f].ravel()])
            frames.append(np.full(len(rays[-1]), f, np.int64))
        out: list[dict[int, int]] = [{} for _ in range(len(eyes))]
        if not rays:
            return out
        semantic = self.scene.semantic_of_rays(np.concatenate(rays)).astype(np.int64)
        keep = np.isin(semantic, wanted)
        span = int(semantic.max()) + 1
        found, counts = np.unique(np.concatenate(frames)[keep] * span + semantic[keep], return_counts=True)
        for key, count in zip(found.tolist(), counts.tolist()):
            if count >= min_pixels:
                out[key // span][key % span] = count
        return out

    def _pixels(self, eyes: np.ndarray, matrices: np.ndarray, min_pixels: float, wanted: np.ndarray) -> np.ndarray:
        """``(F, H, W) bool``: per view, the union of the projected rectangles of the ``wanted``
        instances that hold at least ``min_pixels`` pixel centres.

        A hit seen through a pixel lies in the view frustum; frustum points within ``_NEAR`` of the
        eye are all that lies in front of the plane at depth ``_NEAR / k`` (``k``: the frustum's
        corner ray length per unit depth), so a box at least ``_NEAR`` from the eye is clipped by
        that plane and the clipped box projected; a nearer box may cover any pixel."""
        h, w = self.intrinsics.height, self.intrinsics.width
        rows = self._rows_of(wanted)
        mask = np.zeros((len(eyes), h + 1, w + 1), np.int32)
        if not len(rows):
            return mask[:, :h, :w] > 0
        f = self.intrinsics.focal
        origin = eyes.astype(float)[:, None]  # (F, 1, 3)
        lo, hi = self._boxes[rows, 0].astype(float)[None], self._boxes[rows, 1].astype(float)[None]
        near = np.linalg.norm(np.maximum(np.maximum(lo - origin, origin - hi), 0.0), axis=2) < _NEAR  # (F, K)
        plane = _NEAR / np.sqrt(1.0 + (w / 2 / f) ** 2 + (h / 2 / f) ** 2)
        local = (self._corners[rows][None] - origin[:, None]) @ matrices.astype(float)[:, None]  # (F, K, 8, 3)
        a, b = local[:, :, _EDGES[:, 0]], local[:, :, _EDGES[:, 1]]  # (F, K, 12, 3) edge ends
        da, db = -a[..., 2:], -b[..., 2:]
        crosses = (da - plane) * (db - plane) < 0
        cut = a + (b - a) * np.where(crosses, (plane - da) / np.where(crosses, db - da, 1.0), 0.0)
        points = np.concatenate([local, cut], axis=2)  # (F, K, 20, 3): corners, then edge cuts
        valid = np.concatenate([-local[..., 2] >= plane, crosses[..., 0]], axis=2)
        depth = np.where(valid, -points[..., 2], 1.0)
        px = np.where(valid, points[..., 0] / depth * f + w / 2 - 0.5, np.nan)  # column j has its centre at j
        py = np.where(valid, -points[..., 1] / depth * f + h / 2 - 0.5, np.nan)
        seen = near | valid.any(axis=2)
        with np.errstate(invalid="ignore"):
            c0 = np.where(near, 0, np.ceil(np.fmin.reduce(px, axis=2)) - 1)
            c1 = np.where(near, w - 1, np.floor(np.fmax.reduce(px, axis=2)) + 1)
            r0 = np.where(near, 0, np.ceil(np.fmin.reduce(py, axis=2)) - 1)
            r1 = np.where(near, h - 1, np.floor(np.fmax.reduce(py, axis=2)) + 1)
        c0, c1 = np.maximum(c0, 0), np.minimum(c1, w - 1)
        r0, r1 = np.maximum(r0, 0), np.minimum(r1, h - 1)
        area = np.maximum(c1 - c0 + 1, 0) * np.maximum(r1 - r0 + 1, 0)
        view, box = np.nonzero(seen & (area >= min_pixels) & (area > 0))
        c0, c1, r0, r1 = (v[view, box].astype(np.int64) for v in (c0, c1, r0, r1))
        # each rectangle as +1/-1 at its corners of a summed-area table, then summed up
        for rr, cc, sign in ((r0, c0, 1), (r0, c1 + 1, -1), (r1 + 1, c0, -1), (r1 + 1, c1 + 1, 1)):
            np.add.at(mask, (view, rr, cc), sign)
        return np.cumsum(np.cumsum(mask, axis=1), axis=2)[:, :h, :w] > 0

    def _rows_of(self, wanted: np.ndarray) -> np.ndarray:
        """Rows of the boxes of the ``wanted`` ids that have one."""
        key = tuple(wanted.tolist())
        if key not in self._rows:
            rows = np.searchsorted(self._ids, wanted)
            inside = rows < len(self._ids)
            rows = rows[inside][self._ids[rows[inside]] == wanted[inside]]
            self._rows[key] = rows
        return self._rows[key]
