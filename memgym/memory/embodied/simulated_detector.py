"""``SimulatedDetector``: the semantic image's instances passed through a detector's error processes.

Starting from the ``gt`` detector's masks (every labelled instance of >= ``min_pixels`` pixels),
each frame goes through, in this order, with the rates of
:class:`~memgym.memory.embodied.perception_errors.PerceptionNoise` and draws from
:func:`~memgym.memory.embodied.perception_errors.frame_rng` (``frame_index`` and ``episode_key``
of the frame, set by :class:`~memgym.memory.embodied.perception_errors.SensorErrors`):

1. **misses** -- an instance is detected with chance ``recall(area) * (1 - occlusion_miss *
   occluded)``: ``recall`` by COCO size band of its pixel area, ``occluded`` the share of its
   outline pixels that border a labelled object nearer than it (depth smaller by more than 5 cm;
   walls, floors and ceilings are background, not occluders) or the image edge (measured on every
   second row and column). The draw is the object's detection state
   (:func:`~memgym.memory.embodied.perception_errors.detection_states`), a Gaussian process over
   frames that correlates over ``miss_frames`` frames: the chance is the same in every frame, but
   a miss lasts several frames, as the occlusion and viewing angle behind it do, instead of
   flickering frame by frame;
2. **under-segmentation** -- two detected masks of one category that touch come out as one mask
   with chance ``merge``;
3. **over-segmentation** -- a mask of >= 2 ``min_pixels`` pixels is cut in two along its principal
   axis with chance ``split``;
4. **boundary error** -- each mask is eroded or dilated by a radius drawn from ``-r..r``, then each
   pixel along its outline (inner and outer ring) is flipped with chance ``f``: ``r`` is
   ``boundary_cells`` cells of a 28x28 mask over the mask's box (a cell: the box's geometric mean
   side / 28, as Mask R-CNN predicts a 28x28 mask per box) rounded to pixels and at most
   ``boundary_px``, ``f`` is ``boundary_flip`` times a cell's size in pixels (at most
   ``boundary_flip``), so a small object's outline is not off by a whole pixel all round;
5. **label confusion** -- with chance ``confusion`` a detection's label becomes another member of
   its similar-category group (:data:`~memgym.memory.embodied.perception_errors.SIMILAR_CATEGORIES`);
   a category outside every group keeps its label.

Masks left with fewer than ``min_pixels`` pixels are dropped. The score is the detection chance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from memgym.memory.embodied.detections import Detection, GroundTruthDetector, crop_of, mask_box
from memgym.memory.embodied.perception_errors import PerceptionNoise, detection_states, frame_rng, similar_labels
from memgym.memory.embodied.pixel_kernels import (
    flip_outline,
    grow,
    label_stats,
    mask_extent,
    padded_shifted,
)


@dataclasses.dataclass(frozen=True)
class Patch:
    """A mask of the frame stored as a window of it: ``mask`` ``(h, w) bool`` at ``(row, col)``
    (the frame is empty outside the window). Every step before the final masks works on windows:
    a frame's detections are a few small objects, and full-frame passes per detection cost more
    than the rest of the step."""

    mask: np.ndarray
    row: int
    col: int

    def box(self) -> tuple[int, int, int, int]:
        """``(row0, col0, row1, col1)`` of the mask's pixels in the frame (end exclusive; non-empty mask)."""
        _, r0, c0, r1, c1 = mask_extent(self.mask)
        return self.row + r0, self.col + c0, self.row + r1, self.col + c1

    def within(self, box: tuple[int, int, int, int]) -> np.ndarray:
        """The mask inside ``box`` ``(row0, col0, row1, col1)`` of the frame, as a new ``bool`` array."""
        r0, c0, r1, c1 = box
        out = np.zeros((r1 - r0, c1 - c0), bool)
        h, w = self.mask.shape
        top, left = max(self.row, r0), max(self.col, c0)
        bottom, right = min(self.row + h, r1), min(self.col + w, c1)
        if top < bottom and left < right:
            out[top - r0 : bottom - r0, left - c0 : right - c0] = self.mask[
                top - self.row : bottom - self.row, left - self.col : right - self.col
            ]
        return out


Found = tuple[Patch, str, float]
"""A detected mask, its label and its detection chance."""

NEARER = 0.05
"""Metres by which a neighbouring surface must be nearer for an outline pixel to count as occluded."""

MASK_CELLS = 28
"""Side of the mask a detector predicts per box, in cells (Mask R-CNN's 28x28): its outline is off by about a cell."""


class SimulatedDetector(GroundTruthDetector):
    """The ``gt`` detector's masks with the error processes of the module docstring.

    Args:
        noise: the rates.
        labels: instance id -> category (or later, :meth:`set_labels`).
        min_pixels: smallest mask kept, in pixels.
    """

    name = "simulated"

    def __init__(self, noise: PerceptionNoise, labels: Mapping[int, str] | None = None, min_pixels: int = 20) -> None:
        super().__init__(labels, min_pixels)
        self.noise = noise

    def detect(self, frame: Mapping[str, Any]) -> list[Detection]:
        semantic, known = self.semantic_and_ids(frame)
        size = int(known.max(initial=0)) + 1
        counts, boxes, lines, hidden = label_stats(
            semantic, _float32(frame["depth"]), size, 2, np.float32(NEARER), self.occluders(size)
        )
        ids = known[counts[known] >= self.min_pixels]
        if not len(ids):
            return []
        episode, index = int(frame.get("episode_key", 0)), int(frame.get("frame_index", 0))
        rng = frame_rng(self.noise.seed, episode, index, "detector")
        occluded = outline_shares(lines, hidden, ids)
        states = detection_states(self.noise.seed, episode, ids, index, self.noise.miss_frames)
        found = self.misses(semantic, ids, counts[ids], boxes[ids], occluded, states)
        found = self.splits(self.merges(found, rng), rng)
        rgb = np.asarray(frame["rgb"])
        detections = []
        for patch, label, chance in found:
            radius, flip = self.boundary_error(patch)
            region, (r0, c0) = boundary_region(patch, semantic.shape, radius, flip, rng)
            label = self.confused(label, rng)
            count, rr0, cc0, rr1, cc1 = mask_extent(region)
            if count < max(self.min_pixels, 1):
                continue
            box = (r0 + rr0, c0 + cc0, r0 + rr1, c0 + cc1)
            mask = np.zeros(semantic.shape, bool)
            mask[box[0] : box[2], box[1] : box[3]] = region[rr0:rr1, cc0:cc1]
            detections.append(Detection(mask, label, chance, box, crop_of(rgb, box)))
        return detections

    def occluders(self, size: int) -> np.ndarray:
        """``(size,) bool``: the ids ``0..size-1`` whose surfaces occlude an object, the labelled
        objects' (walls, floors and ceilings are the background an object is seen against; the
        floor just in front of a standing object is nearer than the object's base)."""
        occluders = np.zeros(size, bool)
        occluders[self._ids[self._ids < size]] = True
        return occluders

    def misses(
        self,
        semantic: np.ndarray,
        ids: np.ndarray,
        counts: np.ndarray,
        boxes: np.ndarray,
        occluded: np.ndarray,
        states: np.ndarray,
    ) -> list[Found]:
        """``(patch, label, detection chance)`` of the instances detected (step 1): ``ids`` ``(K,)``,
        their pixel ``counts`` ``(K,)`` and ``boxes`` ``(K, 4)`` in ``semantic``, ``occluded``
        ``(K,)``: the occluded share of each one's outline, ``states`` ``(K,)``: their detection
        states (:func:`~memgym.memory.embodied.perception_errors.detection_states`)."""
        chance = self.noise.recall(counts / semantic.size) * (1.0 - self.noise.occlusion_miss * occluded)
        kept = states < chance
        return [
            (instance_patch(semantic, int(i), box), self.labels[int(i)], float(c))
            for i, box, c, k in zip(ids, boxes, chance, kept)
            if k
        ]

    def boundary_error(self, patch: Patch) -> tuple[int, float]:
        """The largest erosion/dilation radius (pixels) and the outline flip chance of ``patch``'s
        mask (step 4): ``boundary_cells`` cells of a :data:`MASK_CELLS` x :data:`MASK_CELLS` mask over
        its box (a cell: the box's geometric mean side / :data:`MASK_CELLS`), rounded to pixels and at
        most ``boundary_px``; ``boundary_flip`` times a cell's size in pixels, at most ``boundary_flip``."""
        r0, c0, r1, c1 = patch.box()
        cell = float(np.sqrt((r1 - r0) * (c1 - c0))) / MASK_CELLS
        radius = min(self.noise.boundary_px, int(np.floor(self.noise.boundary_cells * cell + 0.5)))
        return radius, self.noise.boundary_flip * min(cell, 1.0)

    def merges(self, found: list[Found], rng: np.random.Generator) -> list[Found]:
        """Touching same-category masks joined with chance ``merge`` (step 2)."""
        slots: list[Found | None] = list(found)
        for i in range(len(slots)):
            for j in range(i + 1, len(slots)):
                first, second = slots[i], slots[j]
                if first is None or second is None or first[1] != second[1] or not patches_touch(first[0], second[0]):
                    continue
                if rng.random() < self.noise.merge:
                    slots[i], slots[j] = (union(first[0], second[0]), first[1], first[2]), None
        return [f for f in slots if f is not None]

    def splits(self, found: list[Found], rng: np.random.Generator) -> list[Found]:
        """Masks cut in two along their principal axis with chance ``split`` (step 3)."""
        out = []
        for patch, label, chance in found:
            if rng.random() < self.noise.split and np.count_nonzero(patch.mask) >= 2 * self.min_pixels:
                halves = split_mask(patch.mask, (patch.row, patch.col))
                out += [(Patch(half, patch.row, patch.col), label, chance) for half in halves]
            else:
                out.append((patch, label, chance))
        return out

    def confused(self, label: str, rng: np.random.Generator) -> str:
        """``label``, or with chance ``confusion`` a similar category's (step 5)."""
        draw = rng.random()
        others = similar_labels(label)
        if not others or draw >= self.noise.confusion:
            return label
        return others[int(rng.integers(len(others)))]


def instance_patch(semantic: np.ndarray, instance: int, box: np.ndarray) -> Patch:
    """The pixels of ``instance`` in the ``(H, W)`` id image ``semantic``, in its ``box``
    ``(row0, col0, row1, col1)``."""
    r0, c0, r1, c1 = (int(v) for v in box)
    return Patch(semantic[r0:r1, c0:c1] == instance, r0, c0)


def union(a: Patch, b: Patch) -> Patch:
    """The pixels of ``a`` or ``b``, as a window holding both."""
    ha, wa = a.mask.shape
    hb, wb = b.mask.shape
    box = (min(a.row, b.row), min(a.col, b.col), max(a.row + ha, b.row + hb), max(a.col + wa, b.col + wb))
    return Patch(a.within(box) | b.within(box), box[0], box[1])


def patches_touch(a: Patch, b: Patch) -> bool:
    """:func:`touching` of two patches (the frame's masks they stand for)."""
    ra0, ca0, ra1, ca1 = a.box()
    rb0, cb0, rb1, cb1 = b.box()
    if ra0 > rb1 or rb0 > ra1 or ca0 > cb1 or cb0 > ca1:
        return False
    box = (max(min(ra0, rb0) - 1, 0), max(min(ca0, cb0) - 1, 0), max(ra1, rb1) + 1, max(ca1, cb1) + 1)
    return bool((grow(a.within(box)) & b.within(box)).any())


def occluded_shares(
    semantic: np.ndarray, depth: np.ndarray, occluders: Iterable[int], step: int = 1
) -> dict[int, float]:
    """Instance id -> share of its outline pixels (pixels on the image edge or with a 4-neighbour of
    another id) that touch the image edge or a pixel of an id in ``occluders`` more than
    :data:`NEARER` m nearer (an object in front of it), measured on ``semantic[::step, ::step]``
    (ids >= 0) and its ``depth`` (what step 1 of the module docstring reads, at ``step=2`` with
    the labelled objects as ``occluders``)."""
    semantic = np.asarray(semantic)
    size = int(semantic.max(initial=0)) + 1
    mask = np.zeros(size, bool)
    mask[[i for i in occluders if 0 <= i < size]] = True
    _, _, lines, hidden = label_stats(semantic, _float32(depth), size, int(step), np.float32(NEARER), mask)
    present = np.flatnonzero(lines)
    return dict(zip(present.tolist(), outline_shares(lines, hidden, present).tolist()))


def outline_shares(lines: np.ndarray, hidden: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``(K,)`` occluded share ``hidden / lines`` of ``ids`` ``(K,)`` (0 without outline pixels), from
    :func:`~memgym.memory.embodied.pixel_kernels.label_stats`' outline and occluded counts."""
    return np.divide(hidden[ids], lines[ids], out=np.zeros(len(ids)), where=lines[ids] > 0)


def _float32(depth: Any) -> np.ndarray:
    depth = np.asarray(depth)
    return depth if depth.dtype == np.float32 else depth.astype(np.float32)


def touching(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether masks ``a`` and ``b`` overlap or share an edge (4-neighbourhood)."""
    ra0, ca0, ra1, ca1 = mask_box(a)
    rb0, cb0, rb1, cb1 = mask_box(b)
    if ra0 > rb1 or rb0 > ra1 or ca0 > cb1 or cb0 > ca1:
        return False
    r0, c0 = max(min(ra0, rb0) - 1, 0), max(min(ca0, cb0) - 1, 0)
    r1, c1 = max(ra1, rb1) + 1, max(ca1, cb1) + 1
    return bool((grow(a[r0:r1, c0:c1]) & b[r0:r1, c0:c1]).any())


def split_mask(mask: np.ndarray, offset: tuple[int, int] = (0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """``mask`` cut by the line through its centroid across its principal axis (two non-empty
    halves, each shaped like ``mask``); ``offset``: the frame position of ``mask[0, 0]`` when it is
    a window (the cut is computed in frame coordinates: the same halves as on the whole frame)."""
    rows, cols = np.nonzero(mask)
    coords = np.stack([rows + offset[0], cols + offset[1]], axis=1).astype(float)
    centred = coords - coords.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    side = centred @ vectors[:, -1] >= 0
    if side.all() or not side.any():  # a degenerate mask: split by rank instead
        side = np.arange(len(rows)) >= len(rows) // 2
    first, second = np.zeros_like(mask), np.zeros_like(mask)
    first[rows[side], cols[side]] = True
    second[rows[~side], cols[~side]] = True
    return first, second


def boundary_region(
    patch: Patch, shape: tuple[int, int], radius: int, flip: float, rng: np.random.Generator
) -> tuple[np.ndarray, tuple[int, int]]:
    """``patch``'s mask (of a frame of ``shape`` ``(H, W)``) eroded/dilated by a radius drawn from
    ``-radius..radius`` and its outline pixels (inner and outer ring) flipped with chance ``flip``
    (step 4 of the module docstring; 4-neighbour structuring element), as the window of the frame
    that holds every changed pixel (the mask's box grown by ``|shift| + 2``, clipped to the frame)
    and the window's top-left ``(row, col)`` (the result is empty outside it)."""
    shift = int(rng.integers(-radius, radius + 1)) if radius else 0
    region, r0, c0 = padded_shifted(patch.mask, patch.row, patch.col, shape[0], shape[1], shift)
    if flip > 0 and region.any():
        region = flip_outline(region, rng.random(region.shape), flip)
    return region, (r0, c0)
