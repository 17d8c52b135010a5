"""``SimulatedDetector``: the semantic image's instances passed through a detector's error processes.

Starting from the ``gt`` detector's masks (every labelled instance of >= ``min_pixels`` pixels),
each frame goes through, in this order, with the rates of
:class:`~memgym.memory.embodied.perception_errors.PerceptionNoise` and draws from
:func:`~memgym.memory.embodied.perception_errors.frame_rng` (``frame_index`` and ``episode_key``
of the frame, set by :class:`~memgym.memory.embodied.perception_errors.SensorErrors`):

1. **misses** -- an instance is detected with chance ``recall(area) * (1 - occlusion_miss *
   occluded)``: ``recall`` by COCO size band of its pixel area, ``occluded`` the share of its
   outline pixels that border a nearer surface (depth smaller by more than 5 cm) or the image edge
   (measured on every second row and column);
2. **under-segmentation** -- two detected masks of one category that touch come out as one mask
   with chance ``merge``;
3. **over-segmentation** -- a mask of >= 2 ``min_pixels`` pixels is cut in two along its principal
   axis with chance ``split``;
4. **boundary error** -- each mask is eroded or dilated by a radius drawn from
   ``-boundary_px..boundary_px``, then each pixel along its outline (inner and outer ring) is
   flipped with chance ``boundary_flip``;
5. **label confusion** -- with chance ``confusion`` a detection's label becomes another member of
   its similar-category group (:data:`~memgym.memory.embodied.perception_errors.SIMILAR_CATEGORIES`);
   a category outside every group keeps its label.

Masks left with fewer than ``min_pixels`` pixels are dropped. The score is the detection chance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.memory.embodied.detections import Detection, GroundTruthDetector, crop_of, mask_box
from memgym.memory.embodied.perception_errors import PerceptionNoise, frame_rng, similar_labels

Found = tuple[np.ndarray, str, float]
"""A detected mask, its label and its detection chance."""

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
        ids, counts = self.visible(frame)
        if not len(ids):
            return []
        rng = frame_rng(self.noise.seed, int(frame.get("episode_key", 0)), int(frame.get("frame_index", 0)), "detector")
        semantic = np.asarray(frame["semantic"])
        shares = occluded_shares(semantic[::2, ::2], np.asarray(frame["depth"])[::2, ::2])
        found = self.misses(semantic, ids, counts, shares, rng)
        found = self.splits(self.merges(found, rng), rng)
        rgb = np.asarray(frame["rgb"])
        detections = []
        for mask, label, chance in found:
            region, (r0, c0) = boundary_region(mask, self.noise.boundary_px, self.noise.boundary_flip, rng)
            label = self.confused(label, rng)
            if not region.any() or np.count_nonzero(region) < self.min_pixels:
                continue
            rr0, cc0, rr1, cc1 = mask_box(region)
            box = (r0 + rr0, c0 + cc0, r0 + rr1, c0 + cc1)
            mask = np.zeros_like(mask)
            mask[box[0] : box[2], box[1] : box[3]] = region[rr0:rr1, cc0:cc1]
            detections.append(Detection(mask, label, chance, box, crop_of(rgb, box)))
        return detections

    def misses(
        self,
        semantic: np.ndarray,
        ids: np.ndarray,
        counts: np.ndarray,
        shares: Mapping[int, float],
        rng: np.random.Generator,
    ) -> list[Found]:
        """``(mask, label, detection chance)`` of the instances detected (step 1): ``ids`` and their
        pixel ``counts`` in ``semantic``; ``shares``: instance id -> occluded share of its outline."""
        occluded = np.array([shares.get(int(i), 0.0) for i in ids])
        chance = self.noise.recall(counts / semantic.size) * (1.0 - self.noise.occlusion_miss * occluded)
        kept = rng.random(len(ids)) < chance
        return [(semantic == i, self.labels[int(i)], float(c)) for i, c, k in zip(ids, chance, kept) if k]

    def merges(self, found: list[Found], rng: np.random.Generator) -> list[Found]:
        """Touching same-category masks joined with chance ``merge`` (step 2)."""
        found = list(found)
        for i in range(len(found)):
            for j in range(i + 1, len(found)):
                (a, label, chance), (b, other, _) = found[i], found[j]
                if label != other or not a.any() or not b.any() or not touching(a, b):
                    continue
                if rng.random() < self.noise.merge:
                    found[i], found[j] = (a | b, label, chance), (np.zeros_like(b), other, 0.0)
        return [f for f in found if f[0].any()]

    def splits(self, found: list[Found], rng: np.random.Generator) -> list[Found]:
        """Masks cut in two along their principal axis with chance ``split`` (step 3)."""
        out = []
        for mask, label, chance in found:
            if rng.random() < self.noise.split and mask.sum() >= 2 * self.min_pixels:
                out += [(half, label, chance) for half in split_mask(mask)]
            else:
                out.append((mask, label, chance))
        return out

    def confused(self, label: str, rng: np.random.Generator) -> str:
        """``label``, or with chance ``confusion`` a similar category's (step 5)."""
        draw = rng.random()
        others = similar_labels(label)
        if not others or draw >= self.noise.confusion:
            return label
        return others[int(rng.integers(len(others)))]


def occluded_shares(semantic: np.ndarray, depth: np.ndarray) -> dict[int, float]:
    """Instance id -> share of its outline pixels (pixels with a 4-neighbour of another id) that
    touch the image edge or a pixel more than :data:`NEARER` m nearer (a surface in front of it)."""
    ids = np.ascontiguousarray(semantic)
    depth = np.ascontiguousarray(depth, np.float32)
    nearer = depth - np.float32(NEARER)
    outline = np.zeros(ids.shape, bool)
    outline[0] = outline[-1] = outline[:, 0] = outline[:, -1] = True  # the image edge truncates
    occluded = outline.copy()
    for axis in (0, 1):
        head = (slice(None, -1), slice(None)) if axis == 0 else (slice(None), slice(None, -1))
        tail = (slice(1, None), slice(None)) if axis == 0 else (slice(None), slice(1, None))
        edge = ids[head] != ids[tail]
        outline[head] |= edge
        outline[tail] |= edge
        occluded[head] |= edge & (depth[tail] < nearer[head])
        occluded[tail] |= edge & (depth[head] < nearer[tail])
    flat = ids.reshape(-1)
    size = int(flat.max()) + 1 if flat.size else 1
    lines = np.bincount(flat[outline.reshape(-1)], minlength=size)
    hidden = np.bincount(flat[occluded.reshape(-1)], minlength=size)
    present = np.flatnonzero(lines)
    return {int(k): float(hidden[k] / lines[k]) for k in present}


def touching(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether masks ``a`` and ``b`` overlap or share an edge (4-neighbourhood)."""
    ra0, ca0, ra1, ca1 = mask_box(a)
    rb0, cb0, rb1, cb1 = mask_box(b)
    if ra0 > rb1 or rb0 > ra1 or ca0 > cb1 or cb0 > ca1:
        return False
    r0, c0 = max(min(ra0, rb0) - 1, 0), max(min(ca0, cb0) - 1, 0)
    r1, c1 = max(ra1, rb1) + 1, max(ca1, cb1) + 1
    return bool((_grow(a[r0:r1, c0:c1]) & b[r0:r1, c0:c1]).any())


def split_mask(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``mask`` cut by the line through its centroid across its principal axis (two non-empty halves)."""
    rows, cols = np.nonzero(mask)
    coords = np.stack([rows, cols], axis=1).astype(float)
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
    mask: np.ndarray, radius: int, flip: float, rng: np.random.Generator
) -> tuple[np.ndarray, tuple[int, int]]:
    """``mask`` eroded/dilated by a radius drawn from ``-radius..radius`` and its outline pixels
    (inner and outer ring) flipped with chance ``flip`` (step 4 of the module docstring; 4-neighbour
    structuring element), as the window of the mask that holds every changed pixel and the
    window's top-left ``(row, col)`` (the result is empty outside it)."""
    h, w = mask.shape
    shift = int(rng.integers(-radius, radius + 1)) if radius else 0
    pad = abs(shift) + 2
    r0, c0, r1, c1 = mask_box(mask)
    r0, c0, r1, c1 = max(r0 - pad, 0), max(c0 - pad, 0), min(r1 + pad, h), min(c1 + pad, w)
    region = mask[r0:r1, c0:c1]
    for _ in range(abs(shift)):
        region = _grow(region) if shift > 0 else _shrink(region)
    if flip > 0 and region.any():
        ring = _grow(region) & ~_shrink(region)
        region = region ^ (ring & (rng.random(region.shape) < flip))
    return region, (r0, c0)


def _grow(mask: np.ndarray) -> np.ndarray:
    """Binary dilation by the 4-neighbour cross (nothing enters from outside the array)."""
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    out[:, 1:] |= mask[:, :-1]
    out[:, :-1] |= mask[:, 1:]
    return out


def _shrink(mask: np.ndarray) -> np.ndarray:
    """Binary erosion by the 4-neighbour cross (outside the array counts as inside the mask)."""
    return ~_grow(~mask)
