"""Per-frame pixel passes of perception, compiled with numba (``cache=True``: compiled once per
machine, then loaded).

Each replaces several whole-image numpy passes by one loop over the pixels: a frame holds a few
small objects, so formation time went to passes over every pixel and to the fixed cost of many
small array operations, not to the objects. Every kernel computes exactly what the numpy
statement in its docstring computes (integer counts, and comparisons in the arrays' own float
type); ``tests/memory/test_formation_reference.py`` checks the formation built on them against
plain numpy references.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def label_boxes(labels: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel counts and bounding boxes of the ids ``1..size-1`` of an ``(H, W)`` integer id image.

    Returns:
        ``(size,) int64`` counts (``np.bincount`` of the ids in range; ids <= 0 or >= ``size`` are
        not counted) and ``(size, 4) int64`` boxes ``(row0, col0, row1, col1)`` (end exclusive;
        ``(H, W, 0, 0)`` for an id with no pixel).
    """
    h, w = labels.shape
    counts = np.zeros(size, np.int64)
    boxes = np.empty((size, 4), np.int64)
    boxes[:, 0] = h
    boxes[:, 1] = w
    boxes[:, 2] = 0
    boxes[:, 3] = 0
    for r in range(h):
        c = 0
        while c < w:  # one run of equal ids at a time
            i = labels[r, c]
            end = c + 1
            while end < w and labels[r, end] == i:
                end += 1
            if 0 < i < size:
                counts[i] += end - c
                boxes[i, 0] = min(boxes[i, 0], r)
                boxes[i, 2] = r + 1
                boxes[i, 1] = min(boxes[i, 1], c)
                boxes[i, 3] = max(boxes[i, 3], end)
            c = end
    return counts, boxes


@numba.njit(cache=True, nogil=True)
def outline_counts(labels: np.ndarray, depth: np.ndarray, nearer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per id of an ``(H, W)`` non-negative id image: its outline pixels (on the image edge, or with
    a 4-neighbour of another id) and, of those, the occluded ones (on the image edge, or with a
    4-neighbour of another id whose ``depth`` is below the pixel's ``nearer``).

    Args:
        labels: ``(H, W)`` ids >= 0.
        depth: ``(H, W)`` depth, metres.
        nearer: ``(H, W)`` the depth a neighbour must be below to count as in front, metres.

    Returns:
        ``(max id + 1,) int64`` outline counts and occluded counts.
    """
    h, w = labels.shape
    size = 1
    for r in range(h):
        for c in range(w):
            if labels[r, c] + 1 > size:
                size = labels[r, c] + 1
    lines = np.zeros(size, np.int64)
    hidden = np.zeros(size, np.int64)
    for r in range(h):
        for c in range(w):
            i = labels[r, c]
            if r == 0 or c == 0 or r == h - 1 or c == w - 1:  # the image edge truncates
                lines[i] += 1
                hidden[i] += 1
                continue
            near = nearer[r, c]
            up, down, left, right = labels[r - 1, c], labels[r + 1, c], labels[r, c - 1], labels[r, c + 1]
            if up == i and down == i and left == i and right == i:
                continue
            lines[i] += 1
            if (
                (up != i and depth[r - 1, c] < near)
                or (down != i and depth[r + 1, c] < near)
                or (left != i and depth[r, c - 1] < near)
                or (right != i and depth[r, c + 1] < near)
            ):
                hidden[i] += 1
    return lines, hidden


@numba.njit(cache=True, nogil=True)
def grow(mask: np.ndarray) -> np.ndarray:
    """Binary dilation of an ``(H, W) bool`` mask by the 4-neighbour cross (nothing enters from
    outside the array)."""
    h, w = mask.shape
    out = mask.copy()
    for r in range(h):
        for c in range(w):
            if mask[r, c]:
                if r > 0:
                    out[r - 1, c] = True
                if r < h - 1:
                    out[r + 1, c] = True
                if c > 0:
                    out[r, c - 1] = True
                if c < w - 1:
                    out[r, c + 1] = True
    return out


@numba.njit(cache=True, nogil=True)
def shrink(mask: np.ndarray) -> np.ndarray:
    """Binary erosion of an ``(H, W) bool`` mask by the 4-neighbour cross (outside the array counts
    as inside the mask): ``~grow(~mask)``."""
    h, w = mask.shape
    out = mask.copy()
    for r in range(h):
        for c in range(w):
            if not mask[r, c]:
                if r > 0:
                    out[r - 1, c] = False
                if r < h - 1:
                    out[r + 1, c] = False
                if c > 0:
                    out[r, c - 1] = False
                if c < w - 1:
                    out[r, c + 1] = False
    return out


@numba.njit(cache=True, nogil=True)
def outline(mask: np.ndarray) -> np.ndarray:
    """The inner and outer ring of an ``(H, W) bool`` mask: pixels with a 4-neighbour of the other
    value (``grow(mask) & ~shrink(mask)``)."""
    h, w = mask.shape
    ring = np.zeros((h, w), np.bool_)
    for r in range(h):
        for c in range(w):
            if r > 0 and mask[r, c] != mask[r - 1, c]:
                ring[r, c] = True
                ring[r - 1, c] = True
            if c > 0 and mask[r, c] != mask[r, c - 1]:
                ring[r, c] = True
                ring[r, c - 1] = True
    return ring


@numba.njit(cache=True, nogil=True)
def owned_pixels(owner: np.ndarray, depth: np.ndarray, limit: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid pixels an object owns and that hit a surface, in row-major order.

    Args:
        owner: ``(h, w) int64`` object index of each grid pixel, -1 for none.
        depth: ``(h, w)`` depth of the grid pixels, metres.
        limit: depth at and beyond which a pixel is the clip, not a surface (in ``depth``'s type).

    Returns:
        ``(N,) int64`` flat grid indices, ``(N,) int64`` their owners and ``(N,) float64`` depths:
        the pixels with ``owner >= 0`` and ``0 < depth < limit``.
    """
    h, w = owner.shape
    flat = np.empty(h * w, np.int64)
    which = np.empty(h * w, np.int64)
    values = np.empty(h * w, np.float64)
    n = 0
    for r in range(h):
        for c in range(w):
            d = depth[r, c]
            if owner[r, c] >= 0 and d > 0 and d < limit:
                flat[n] = r * w + c
                which[n] = owner[r, c]
                values[n] = d
                n += 1
    return flat[:n], which[:n], values[:n]
