"""``SimulatedDetector``: the semantic image's instances passed through a detector's error processes.

Starting from the ``gt`` detector's masks (every labelled instance of >= ``min_pixels`` pixels),
each frame goes through, in this order, with the rates of
:class:`~memgym.memory.embodied.perception_errors.PerceptionNoise`:

1. **misses** -- an instance is detected when it passes two tests: its miss state is below
   ``recall(area)`` (by COCO size band of its pixel area) and its occlusion tolerance is at least
   ``occlusion_miss * occluded`` (``occluded`` the share of its outline pixels that border a
   nearer surface, depth smaller by more than 5 cm, or the image edge; measured on every second
   row and column); so it is detected with chance ``recall(area) * (1 - occlusion_miss *
   occluded)`` in each frame, as when both were drawn anew per frame;
2. **under-segmentation** -- two detected masks of one category that touch come out as one mask
   when their pair's state is below ``merge``;
3. **over-segmentation** -- a mask of >= 2 ``min_pixels`` pixels is cut in two along its principal
   axis when its state is below ``split``;
4. **mask error** -- Mask R-CNN predicts a 28x28 mask over each detected box, so its boundary
   error is a share of the box, not of the image: each mask is eroded or dilated by its state's
   share of ``-boundary_cells..boundary_cells`` cells (a cell is 1/28 of the box's geometric mean
   side), rounded to pixels and kept within ``boundary_px`` (under half a pixel for an object
   less than 14 px across: its mask stays); each pixel along its outline (inner and outer ring) is
   flipped with chance ``boundary_flip`` times a cell's size in pixels (at most 1), drawn per
   frame; then the mask is moved by the box's localisation error, a normal share ``box_shift`` of
   the box's height and width (pixels moved out of the frame are lost);
5. **label confusion** -- when its state is below ``confusion`` a detection's label becomes
   another member of its similar-category group
   (:data:`~memgym.memory.embodied.perception_errors.SIMILAR_CATEGORIES`), the one its state
   picks; a category outside every group keeps its label.

**Errors persist over frames.** Every "state" above is a uniform value of the instance (or pair) in
the frame from :func:`~memgym.memory.embodied.perception_errors.latent_uniforms`: a share
``persist_object`` of it is the object's own for the episode (a detector that finds an object hard
finds it hard from its other views too) and the rest a view term that drifts over
``persist_frames`` frames (occlusion and viewing angle change over several frames, not every
frame). A miss therefore lasts several frames and tends to recur on the object's later looks,
while each frame's chance is the rate itself: the per-frame marginal rates are those of
independent draws. The state is a function of ``(seed, episode_key, instance id, frame_index,
process)`` alone, so frame caches, resumed runs and threads see the same detections whatever
frames were processed before. Only the outline flips come from the frame's generator
(:func:`~memgym.memory.embodied.perception_errors.frame_rng`). A visual memory counts an
object's sightings from the frames its masks cover >= 5% of the view
(:mod:`memgym.sensors.sightings`): misses drawn anew in each frame broke one long look into
several sightings, and a 1 px boundary error moved small objects across the threshold.

Masks left with fewer than ``min_pixels`` pixels are dropped. The score is the detection chance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from memgym.memory.embodied.detections import Detection, GroundTruthDetector, crop_of, mask_box
from memgym.memory.embodied.perception_errors import PerceptionNoise, frame_rng, latent_uniforms, similar_labels
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


Found = tuple[Patch, str, float, int]
"""A detected mask, its label, its detection chance and the key of its error state (the instance
id; a merged mask keeps its first instance's)."""

OBJECT_STREAMS = ("miss", "occlusion", "split", "boundary", "box_rows", "box_cols", "confusion", "confused_as")
"""The error states of each instance, drawn for all of a frame's instances at once."""


class FrameStates:
    """The error states of one frame (:func:`~memgym.memory.embodied.perception_errors.latent_uniforms`):
    ``states(keys, stream=...)`` ``(K,)`` for ``keys`` ``(K,)``; those of the frame's instances
    ``ids`` ``(N,)`` for :data:`OBJECT_STREAMS` are computed once, others (pairs) when asked."""

    def __init__(self, noise: PerceptionNoise, episode: int, frame: int, ids: np.ndarray) -> None:
        self.args = (noise.seed, episode, frame, noise.persist_frames, noise.persist_object)
        self.column = {int(i): k for k, i in enumerate(ids)}
        self.table = self.draw(np.asarray(ids), OBJECT_STREAMS)

    def draw(self, keys: np.ndarray, streams: tuple[str, ...]) -> np.ndarray:
        seed, episode, frame, persist, shared = self.args
        return latent_uniforms(seed, episode, keys, frame, persist, shared, streams)

    def __call__(self, keys: np.ndarray, stream: str) -> np.ndarray:
        if stream not in OBJECT_STREAMS:
            return self.draw(keys, (stream,))[0]
        columns = np.array([self.column[int(k)] for k in keys], np.int64)
        return self.table[OBJECT_STREAMS.index(stream), columns]


MASK_CELLS = 28
"""Side of Mask R-CNN's mask, in cells over the detected box."""

NEARER = 0.05
"""Metres by which a neighbouring surface must be nearer for an outline pixel to count as occluded."""


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
        counts, boxes, lines, hidden = label_stats(
            semantic, _float32(frame["depth"]), int(known.max(initial=0)) + 1, 2, np.float32(NEARER)
        )
        ids = known[counts[known] >= self.min_pixels]
        if not len(ids):
            return []
        episode, index = int(frame.get("episode_key", 0)), int(frame.get("frame_index", 0))
        draw = FrameStates(self.noise, episode, index, ids)
        occluded = outline_shares(lines, hidden, ids)
        found = self.misses(semantic, ids, counts[ids], boxes[ids], occluded, draw)
        found = self.splits(self.merges(found, draw), draw)
        labels = self.confused(found, draw)
        shifts, flips = self.boundary_errors(found, draw)
        rng = frame_rng(self.noise.seed, episode, index, "detector")
        rgb = np.asarray(frame["rgb"])
        detections = []
        offsets = self.box_offsets(found, draw)
        for (patch, _, chance, _), label, shift, flip, (dr, dc) in zip(found, labels, shifts, flips, offsets):
            region, (r0, c0) = boundary_region(patch, semantic.shape, int(shift), float(flip), rng)
            region, (r0, c0) = inside(region, (r0 + int(dr), c0 + int(dc)), semantic.shape)
            count, rr0, cc0, rr1, cc1 = mask_extent(region)
            if count < max(self.min_pixels, 1):
                continue
            box = (r0 + rr0, c0 + cc0, r0 + rr1, c0 + cc1)
            mask = np.zeros(semantic.shape, bool)
            mask[box[0] : box[2], box[1] : box[3]] = region[rr0:rr1, cc0:cc1]
            detections.append(Detection(mask, label, chance, box, crop_of(rgb, box)))
        return detections

    def misses(
        self,
        semantic: np.ndarray,
        ids: np.ndarray,
        counts: np.ndarray,
        boxes: np.ndarray,
        occluded: np.ndarray,
        draw: FrameStates,
    ) -> list[Found]:
        """The instances detected (step 1): ``ids`` ``(K,)``, their pixel ``counts`` ``(K,)`` and
        ``boxes`` ``(K, 4)`` in ``semantic``, ``occluded`` ``(K,)``: the occluded share of each one's
        outline."""
        recall = self.noise.recall(counts / semantic.size)
        hidden = self.noise.occlusion_miss * occluded
        chance = recall * (1.0 - hidden)
        kept = (draw(ids, stream="miss") < recall) & (draw(ids, stream="occlusion") >= hidden)
        return [
            (instance_patch(semantic, int(i), box), self.labels[int(i)], float(c), int(i))
            for i, box, c, k in zip(ids, boxes, chance, kept)
            if k
        ]

    def merges(self, found: list[Found], draw: FrameStates) -> list[Found]:
        """Touching same-category masks joined with chance ``merge`` (step 2; the state of the pair)."""
        slots: list[Found | None] = list(found)
        for i in range(len(slots)):
            for j in range(i + 1, len(slots)):
                first, second = slots[i], slots[j]
                if first is None or second is None or first[1] != second[1] or not patches_touch(first[0], second[0]):
                    continue
                pair = np.array([min(first[3], second[3]) << 32 | max(first[3], second[3])])
                if draw(pair, stream="merge")[0] < self.noise.merge:
                    slots[i], slots[j] = (union(first[0], second[0]), *first[1:]), None
        return [f for f in slots if f is not None]

    def splits(self, found: list[Found], draw: FrameStates) -> list[Found]:
        """Masks cut in two along their principal axis with chance ``split`` (step 3)."""
        cut = draw(np.array([f[3] for f in found], np.int64), stream="split") < self.noise.split
        out = []
        for (patch, *rest), c in zip(found, cut):
            if c and np.count_nonzero(patch.mask) >= 2 * self.min_pixels:
                halves = split_mask(patch.mask, (patch.row, patch.col))
                out += [(Patch(half, patch.row, patch.col), *rest) for half in halves]
            else:
                out.append((patch, *rest))
        return out

    def confused(self, found: list[Found], draw: FrameStates) -> list[str]:
        """The label of each of ``found``: its own, or with chance ``confusion`` a similar
        category's (step 5)."""
        keys = np.array([f[3] for f in found], np.int64)
        wrong = draw(keys, stream="confusion") < self.noise.confusion
        which = draw(keys, stream="confused_as")
        labels = []
        for (_, label, _, _), w, u in zip(found, wrong, which):
            others = similar_labels(label)
            labels.append(others[int(u * len(others))] if w and others else label)
        return labels

    def box_offsets(self, found: list[Found], draw: FrameStates) -> np.ndarray:
        """``(K, 2)`` pixel offset (rows, columns) of each of ``found``'s mask: the box's
        localisation error, a normal share ``box_shift`` (standard deviation) of the box's height
        and width, rounded to pixels (step 4)."""
        if not found:
            return np.zeros((0, 2), np.int64)
        keys = np.array([f[3] for f in found], np.int64)
        sides = np.array([[b[2] - b[0], b[3] - b[1]] for b in (f[0].box() for f in found)], float)
        normal = special.ndtri(np.stack([draw(keys, stream="box_rows"), draw(keys, stream="box_cols")], axis=1))
        return np.rint(normal * self.noise.box_shift * sides).astype(np.int64)

    def boundary_errors(self, found: list[Found], draw: FrameStates) -> tuple[np.ndarray, np.ndarray]:
        """``(K,)`` erosion (< 0) / dilation radius in pixels and ``(K,)`` outline flip chance of
        each of ``found`` (step 4): a shift of up to ``boundary_cells`` mask cells (1/28 of the
        box's geometric mean side) rounded to pixels and kept within ``boundary_px``; the flip
        chance ``boundary_flip`` times a cell's size in pixels (at most 1)."""
        if not found:
            return np.zeros(0, np.int64), np.zeros(0)
        sides = np.array([[b[2] - b[0], b[3] - b[1]] for b in (f[0].box() for f in found)], float)
        cell = np.sqrt(sides.prod(axis=1)) / MASK_CELLS
        state = draw(np.array([f[3] for f in found], np.int64), stream="boundary")
        shift = np.rint((2.0 * state - 1.0) * self.noise.boundary_cells * cell)
        limit = self.noise.boundary_px
        return np.clip(shift, -limit, limit).astype(np.int64), self.noise.boundary_flip * np.minimum(cell, 1.0)


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


def occluded_shares(semantic: np.ndarray, depth: np.ndarray, step: int = 1) -> dict[int, float]:
    """Instance id -> share of its outline pixels (pixels on the image edge or with a 4-neighbour of
    another id) that touch the image edge or a pixel more than :data:`NEARER` m nearer (a surface
    in front of it), measured on ``semantic[::step, ::step]`` (ids >= 0) and its ``depth`` (what
    step 1 of the module docstring reads, at ``step=2``)."""
    semantic = np.asarray(semantic)
    size = int(semantic.max(initial=0)) + 1
    _, _, lines, hidden = label_stats(semantic, _float32(depth), size, int(step), np.float32(NEARER))
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


def inside(region: np.ndarray, corner: tuple[int, int], shape: tuple[int, int]) -> tuple[np.ndarray, tuple[int, int]]:
    """The part of the window ``region`` at top-left ``corner`` ``(row, col)`` that lies inside a
    frame of ``shape`` ``(H, W)`` (possibly empty), and its top-left."""
    r0, c0 = corner
    top, left = max(r0, 0), max(c0, 0)
    bottom, right = max(min(r0 + region.shape[0], shape[0]), top), max(min(c0 + region.shape[1], shape[1]), left)
    return region[top - r0 : bottom - r0, left - c0 : right - c0], (top, left)


def boundary_region(
    patch: Patch, shape: tuple[int, int], shift: int, flip: float, rng: np.random.Generator
) -> tuple[np.ndarray, tuple[int, int]]:
    """``patch``'s mask (of a frame of ``shape`` ``(H, W)``) dilated (``shift > 0``) or eroded by
    ``|shift|`` pixels and its outline pixels (inner and outer ring) flipped with chance ``flip``
    (step 4 of the module docstring; 4-neighbour structuring element), as the window of the frame
    that holds every changed pixel (the mask's box grown by ``|shift| + 2``, clipped to the frame)
    and the window's top-left ``(row, col)`` (the result is empty outside it)."""
    region, r0, c0 = padded_shifted(patch.mask, patch.row, patch.col, shape[0], shape[1], shift)
    if flip > 0 and region.any():
        region = flip_outline(region, rng.random(region.shape), flip)
    return region, (r0, c0)
