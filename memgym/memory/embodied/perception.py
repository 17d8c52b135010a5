"""The perception front end shared by the visual memories: a posed RGB-D frame -> object views.

For each frame, :class:`Perception` runs its detector, back-projects every detection's masked
pixels with valid depth (on a ``stride`` x ``stride`` pixel grid: one vectorised call for the
whole frame) into world points, voxel-downsamples each detection's points and, when an
image-text encoder is configured, embeds each crop. The result is one :class:`ObjectView` per
detection with enough points.

When the frame carries the ``semantic`` image, each view also records its *sources*: the
annotated instance ids covering at least a quarter of its mask. They are for measuring a map
against the annotation (:func:`~memgym.memory.embodied.ground_truth.map_errors`); no memory reads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.memory.embodied.association_kernels import grouped_order
from memgym.memory.embodied.backproject import CameraModel, backproject, voxel_keys
from memgym.memory.embodied.detections import Detection, Detector
from memgym.memory.embodied.encoders import ImageTextEncoder
from memgym.memory.embodied.perception_errors import SensorErrors
from memgym.memory.embodied.pixel_kernels import ids_covering, owned_pixels


@dataclasses.dataclass(frozen=True, eq=False)
class ObjectView:
    """One detection lifted to 3D.

    Attributes:
        frame: formation frame index.
        label: detector label.
        score: detector score.
        points: ``(M, 3)`` voxel centroids of its back-projected pixels, metres.
        crop: ``(h, w, 3) uint8`` image crop.
        coverage: fraction of the frame its mask covers.
        embedding: ``(D,) float32`` unit crop embedding, or None without an encoder.
        sources: annotated instance ids under the mask (module docstring; empty without ``semantic``).
    """

    frame: int
    label: str
    score: float
    points: np.ndarray
    crop: np.ndarray
    coverage: float
    embedding: np.ndarray | None = None
    sources: tuple[int, ...] = ()


SOURCE_SHARE = 0.25
"""Share of a mask an annotated instance must cover to count among the view's sources."""


class Perception:
    """Detector + camera model (+ encoder): see the module docstring.

    Args:
        detector: the detector.
        camera: formation camera model.
        encoder: crop embedder, or None (labels only).
        stride: pixel grid step for back-projection (1 = every pixel).
        voxel: voxel size of the per-view point clouds, metres.
        min_points: smallest view kept, in voxels.
        sensor: simulated sensor errors (depth noise on the back-projected pixels), or None (exact depth).
    """

    def __init__(
        self,
        detector: Detector,
        camera: CameraModel,
        encoder: ImageTextEncoder | None = None,
        *,
        stride: int = 2,
        voxel: float = 0.05,
        min_points: int = 3,
        sensor: SensorErrors | None = None,
    ) -> None:
        self.detector = detector
        self.camera = camera
        self.encoder = encoder
        self.stride = int(stride)
        self.voxel = float(voxel)
        self.min_points = int(min_points)
        self.sensor = sensor

    def views(self, frame: Mapping[str, Any], index: int) -> list[ObjectView]:
        """Object views of ``frame`` (``rgb``, ``depth``, ``position``, ``rotation``, maybe ``semantic``)."""
        detections = self.detector.detect(frame)
        if not detections:
            return []
        depth = np.asarray(frame["depth"])
        clouds = self.lift(
            detections, depth, frame["position"], frame["rotation"], int(frame.get("frame_index", index))
        )
        keep = [k for k, c in enumerate(clouds) if len(c) >= self.min_points]
        embeddings: list[np.ndarray | None] = [None] * len(keep)
        if self.encoder is not None and keep:
            embeddings = list(self.encoder.encode_images([detections[k].crop for k in keep]))
        semantic = frame.get("semantic")
        views = []
        for k, embedding in zip(keep, embeddings):
            d = detections[k]
            sources = () if semantic is None else mask_sources(np.asarray(semantic), d.mask, d.box)
            views.append(ObjectView(index, d.label, d.score, clouds[k], d.crop, d.coverage, embedding, sources))
        return views

    def lift(
        self,
        detections: list[Detection],
        depth: np.ndarray,
        position: np.ndarray,
        rotation: np.ndarray,
        index: int = 0,
    ) -> list[np.ndarray]:
        """``(M_k, 3)`` voxel-centroid world points of each detection (one back-projection per frame;
        ``index``: the frame, for the sensor's depth noise)."""
        w = depth.shape[1]
        first, step = self.stride // 2, self.stride
        grid_depth = depth[first::step, first::step]  # the back-projected pixel grid
        owner = np.full(grid_depth.shape, -1, np.int64)
        for k, detection in enumerate(detections):  # later detections win overlapping pixels
            r0, c0, r1, c1 = detection.box  # holds every pixel of the mask: only its grid pixels are read
            rows = grid_span(r0, r1, first, step, owner.shape[0])
            cols = grid_span(c0, c1, first, step, owner.shape[1])
            on_grid = detection.mask[
                first + rows.start * step : first + rows.stop * step : step,
                first + cols.start * step : first + cols.stop * step : step,
            ]
            owner[rows, cols][on_grid] = k
        cells, which, values = owned_pixels(owner, grid_depth, grid_depth.dtype.type(self.camera.max_depth * 0.999))
        if not len(cells):  # masks too small for the pixel step, or beyond the depth clip
            return [np.zeros((0, 3)) for _ in detections]
        rows, cols = np.divmod(cells, owner.shape[1])
        pixels = (rows * step + first) * w + (cols * step + first)  # ascending flat indices
        if self.sensor is not None:
            values = self.sensor.noisy_depth(values, index)
        points = backproject(depth, pixels, position, rotation, self.camera, values)
        return voxel_centroids(points, which, self.voxel, len(detections))


def grid_span(start: int, stop: int, first: int, step: int, size: int) -> slice:
    """The indices ``j < size`` of the grid pixels ``first + j * step`` in ``[start, stop)``, as a slice."""
    begin = min(max(-((first - start) // step), 0), size)
    return slice(begin, min(max(-((first - stop) // step), begin), size))


def voxel_centroids(points: np.ndarray, which: np.ndarray, voxel: float, count: int) -> list[np.ndarray]:
    """Per detection ``0..count-1``: the ``(M_k, 3)`` centroids of its ``voxel``-m cells, ordered by
    cell key, from the ``(N, 3)`` ``points`` and the ``(N,)`` detection each belongs to (one
    reduction for all detections: grouped by (detection, voxel))."""
    order, starts, counts = grouped_order(which, voxel_keys(points, voxel), count)
    centroids = np.add.reduceat(points[order], starts, axis=0) / counts[:, None] if len(starts) else np.zeros((0, 3))
    owners = which[order[starts]]
    bounds = np.searchsorted(owners, np.arange(count + 1))
    return [centroids[bounds[k] : bounds[k + 1]] for k in range(count)]


def mask_sources(
    semantic: np.ndarray, mask: np.ndarray, box: tuple[int, int, int, int] | None = None
) -> tuple[int, ...]:
    """Non-zero ids of ``semantic`` covering >= :data:`SOURCE_SHARE` of ``mask``, most pixels first
    (``box``: ``(row0, col0, row1, col1)`` holding every pixel of the mask, to read less)."""
    if box is not None:
        r0, c0, r1, c1 = box
        semantic, mask = semantic[r0:r1, c0:c1], mask[r0:r1, c0:c1]
    return tuple(int(i) for i in ids_covering(semantic, mask, SOURCE_SHARE))
