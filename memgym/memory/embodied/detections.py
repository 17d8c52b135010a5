"""Object detections in one RGB-D frame, and the ``gt`` detector that reads the semantic image.

A :class:`Detection` is what an instance-segmenting detector outputs for one object in one
frame: a pixel mask, a category label, a score, the mask's bounding box and the RGB crop inside
it. Detectors share :class:`Detector` (``detect(frame) -> list[Detection]``).

:class:`GroundTruthDetector` (name ``gt``) is a perfect detector: every instance id of the
frame's ``semantic`` image that has a label in its *label table* (instance id -> category, the
simulator's semantic annotation) and covers at least ``min_pixels`` pixels becomes one
detection with score 1. It outputs only label and mask, like a perfect detector would: the
instance id is not passed on, so memories must associate detections across frames themselves.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.core.errors import MemgymError
from memgym.memory.embodied.pixel_kernels import label_boxes


@dataclasses.dataclass(frozen=True, eq=False)
class Detection:
    """One detected object in one frame.

    Attributes:
        mask: ``(H, W) bool`` pixels of the object.
        label: category, e.g. ``"mug"``.
        score: detector confidence in [0, 1].
        box: ``(4,) int`` ``(row0, col0, row1, col1)``, the mask's bounding box (end exclusive).
        crop: ``(row1 - row0, col1 - col0, 3) uint8`` RGB inside ``box``.
    """

    mask: np.ndarray
    label: str
    score: float
    box: tuple[int, int, int, int]
    crop: np.ndarray

    @property
    def coverage(self) -> float:
        """Fraction of the frame the mask covers (its pixels all lie in :attr:`box`)."""
        r0, c0, r1, c1 = self.box
        return int(np.count_nonzero(self.mask[r0:r1, c0:c1])) / self.mask.size


def crop_of(rgb: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """``(h, w, 3) uint8`` copy of ``rgb`` inside ``box`` ``(row0, col0, row1, col1)``."""
    r0, c0, r1, c1 = box
    return np.ascontiguousarray(rgb[r0:r1, c0:c1])


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int]:
    """Bounding box ``(row0, col0, row1, col1)`` (end exclusive) of a non-empty ``(H, W)`` mask."""
    rows, cols = mask.any(axis=1), mask.any(axis=0)
    return (
        int(rows.argmax()),
        int(cols.argmax()),
        len(rows) - int(rows[::-1].argmax()),
        len(cols) - int(cols[::-1].argmax()),
    )


class Detector(abc.ABC):
    """Turns one frame (a mapping with ``rgb`` ``(H, W, 3) uint8``, ``depth`` ``(H, W)`` metres and,
    for some detectors, ``semantic`` ``(H, W) int32``) into detections."""

    name: str = "detector"

    @abc.abstractmethod
    def detect(self, frame: Mapping[str, Any]) -> list[Detection]:
        """Detections in ``frame``, in a deterministic order."""


class GroundTruthDetector(Detector):
    """The perfect detector of the module docstring.

    Args:
        labels: instance id -> category (set later with :meth:`set_labels` when unknown yet).
        min_pixels: smallest mask kept, in pixels.
    """

    name = "gt"

    def __init__(self, labels: Mapping[int, str] | None = None, min_pixels: int = 20) -> None:
        self.labels: dict[int, str] = {}
        self.min_pixels = int(min_pixels)
        if labels is not None:
            self.set_labels(labels)

    def set_labels(self, labels: Mapping[int, str]) -> None:
        """Use ``labels`` (instance id -> category) from now on."""
        self.labels = {int(k): str(v) for k, v in labels.items()}
        ids = np.array(sorted(self.labels), np.int64)
        self._ids = ids

    def detect(self, frame: Mapping[str, Any]) -> list[Detection]:
        rgb = np.asarray(frame["rgb"])
        detections = []
        for instance, mask in self.instances(frame):
            box = mask_box(mask)
            detections.append(Detection(mask, self.labels[instance], 1.0, box, crop_of(rgb, box)))
        return detections

    def instances(self, frame: Mapping[str, Any]) -> list[tuple[int, np.ndarray]]:
        """``(instance id, (H, W) bool mask)`` of every labelled instance of >= ``min_pixels`` pixels, by id."""
        ids, _ = self.visible(frame)
        semantic = np.asarray(frame["semantic"])
        return [(int(instance), semantic == instance) for instance in ids]

    def visible(self, frame: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """``(K,)`` ids of the labelled instances of >= ``min_pixels`` pixels (ascending) and their pixel counts."""
        ids, counts, _ = self.located(frame)
        return ids, counts

    def located(self, frame: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`visible`'s ids and counts, and ``(K, 4)`` the bounding box ``(row0, col0, row1,
        col1)`` (end exclusive) of each in the frame."""
        semantic, known = self.semantic_and_ids(frame)
        counts, boxes = label_boxes(semantic, int(known.max(initial=0)) + 1)
        ids = known[counts[known] >= self.min_pixels]
        return ids, counts[ids], boxes[ids]

    def semantic_and_ids(self, frame: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """The frame's ``(H, W)`` semantic image and ``(L,)`` the labelled instance ids (> 0, ascending);
        a clear error without either."""
        if "semantic" not in frame:
            raise MemgymError(
                "detector 'gt' reads the 'semantic' observation; build the env with semantic=True "
                "(or configure an open-vocabulary detector model)"
            )
        if not self.labels:
            raise MemgymError(
                "detector 'gt' has no instance-id -> category table; call the memory's bind_episode(episode) "
                "(the evaluation loop does) or set_labels({...})"
            )
        return np.asarray(frame["semantic"]), self._ids[self._ids > 0]  # 0 is no object
