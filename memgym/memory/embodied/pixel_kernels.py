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
    counts, boxes = _empty_boxes(labels.shape, size)
    for r in range(labels.shape[0]):
        _count_row(labels, r, counts, boxes)
    return counts, boxes


@numba.njit(cache=True, nogil=True)
def label_stats(
    labels: np.ndarray, depth: np.ndarray, size: int, step: int, nearer: np.float32, occluders: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`label_boxes` of the ids ``1..size-1`` and, in the same pass over the image, per id
    ``0..size-1`` of the image ``labels[::step, ::step]``: its outline pixels (on the image edge, or
    with a 4-neighbour of another id) and, of those, the occluded ones (on the image edge, or with
    a 4-neighbour of another id that may occlude, ``occluders[id]``, whose depth is below the
    pixel's depth minus ``nearer``).

    Args:
        labels: ``(H, W)`` integer ids.
        depth: ``(H, W) float32`` depth, metres.
        size: one more than the largest id counted.
        step: the pixel step of the image whose outlines are measured.
        nearer: metres by which a neighbour must be nearer to count as in front (float32 arithmetic).
        occluders: ``(size,) bool``, the ids whose surfaces can occlude (ids outside it cannot).

    Returns:
        ``(size,)`` counts, ``(size, 4)`` boxes, ``(size,)`` outline counts and occluded counts.
    """
    counts, boxes = _empty_boxes(labels.shape, size)
    lines = np.zeros(size, np.int64)
    hidden = np.zeros(size, np.int64)
    for r in range(labels.shape[0]):
        _count_row(labels, r, counts, boxes)
        if r % step == 0:
            _outline_row(labels, depth, r, step, nearer, occluders, lines, hidden)
    return counts, boxes, lines, hidden


@numba.njit(cache=True, nogil=True)
def _empty_boxes(shape: tuple[int, int], size: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.zeros(size, np.int64)
    boxes = np.empty((size, 4), np.int64)
    boxes[:, 0] = shape[0]
    boxes[:, 1] = shape[1]
    boxes[:, 2] = 0
    boxes[:, 3] = 0
    return counts, boxes


@numba.njit(cache=True, nogil=True)
def _count_row(labels: np.ndarray, r: int, counts: np.ndarray, boxes: np.ndarray) -> None:
    """Add row ``r`` of ``labels`` to the ``counts`` and ``boxes`` of ids ``1..len(counts)-1``."""
    w, size = labels.shape[1], counts.shape[0]
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


@numba.njit(cache=True, nogil=True)
def _outline_row(
    labels: np.ndarray,
    depth: np.ndarray,
    row: int,
    step: int,
    nearer: np.float32,
    occluders: np.ndarray,
    lines: np.ndarray,
    hidden: np.ndarray,
) -> None:
    """Add the outline and occluded pixels of row ``row`` of the image ``labels[::step, ::step]``
    (a full-image row index, a multiple of ``step``) to ``lines`` and ``hidden`` (ids
    ``0..len(lines)-1``; others are skipped); a neighbour occludes when it is nearer and
    ``occluders[neighbour]`` (an id in ``0..len(occluders)-1``)."""
    last_row, last_col = (labels.shape[0] - 1) // step * step, (labels.shape[1] - 1) // step * step
    size = lines.shape[0]
    for col in range(0, labels.shape[1], step):
        i = labels[row, col]
        if i < 0 or i >= size:
            continue
        if row == 0 or col == 0 or row == last_row or col == last_col:  # the image edge truncates
            lines[i] += 1
            hidden[i] += 1
            continue
        up, down = labels[row - step, col], labels[row + step, col]
        left, right = labels[row, col - step], labels[row, col + step]
        if up == i and down == i and left == i and right == i:
            continue
        lines[i] += 1
        near = depth[row, col] - nearer
        for r, c in ((row - step, col), (row + step, col), (row, col - step), (row, col + step)):
            if _hides(labels, depth, occluders, i, r, c, near):
                hidden[i] += 1
                break


@numba.njit(cache=True, nogil=True)
def _hides(labels: np.ndarray, depth: np.ndarray, occluders: np.ndarray, i: int, r: int, c: int, near: float) -> bool:
    """Whether pixel ``(r, c)`` holds another id that occludes and lies nearer than ``near`` (m)."""
    j = labels[r, c]
    return j != i and _occludes(occluders, j) and depth[r, c] < near


@numba.njit(cache=True, nogil=True)
def _occludes(occluders: np.ndarray, i: int) -> bool:
    return 0 <= i < occluders.shape[0] and occluders[i]


@numba.njit(cache=True, nogil=True)
def grow(mask: np.ndarray) -> np.ndarray:
    """Binary dilation of an ``(H, W) bool`` mask by the 4-neighbour cross (nothing enters from
    outside the array)."""
    return _spread(mask, True)


@numba.njit(cache=True, nogil=True)
def shrink(mask: np.ndarray) -> np.ndarray:
    """Binary erosion of an ``(H, W) bool`` mask by the 4-neighbour cross (outside the array counts
    as inside the mask): ``~grow(~mask)``."""
    return _spread(mask, False)


@numba.njit(cache=True, nogil=True)
def _spread(mask: np.ndarray, value: bool) -> np.ndarray:
    """``mask`` with the 4-neighbours (inside the array) of every pixel equal to ``value`` set to ``value``."""
    h, w = mask.shape
    out = mask.copy()
    for r in range(h):
        for c in range(w):
            if mask[r, c] == value:
                if r > 0:
                    out[r - 1, c] = value
                if r < h - 1:
                    out[r + 1, c] = value
                if c > 0:
                    out[r, c - 1] = value
                if c < w - 1:
                    out[r, c + 1] = value
    return out


@numba.njit(cache=True, nogil=True)
def padded_shifted(
    mask: np.ndarray, row: int, col: int, height: int, width: int, shift: int
) -> tuple[np.ndarray, int, int]:
    """A non-empty ``(h, w) bool`` window ``mask`` at ``(row, col)`` of a ``height`` x ``width``
    frame, dilated (``shift > 0``) or eroded (``shift < 0``) ``|shift|`` times by the 4-neighbour
    cross, in the window of the frame around its pixels' box grown by ``|shift| + 2`` (clipped to
    the frame).

    Returns:
        The new window and its top-left ``(row, col)`` in the frame.
    """
    _, r0, c0, r1, c1 = mask_extent(mask)
    pad = abs(shift) + 2
    top, left = max(row + r0 - pad, 0), max(col + c0 - pad, 0)
    bottom, right = min(row + r1 + pad, height), min(col + c1 + pad, width)
    region = np.zeros((bottom - top, right - left), np.bool_)
    for r in range(r0, r1):
        for c in range(c0, c1):
            if mask[r, c]:
                region[row + r - top, col + c - left] = True
    for _ in range(abs(shift)):
        region = grow(region) if shift > 0 else shrink(region)
    return region, top, left


@numba.njit(cache=True, nogil=True)
def flip_outline(mask: np.ndarray, draws: np.ndarray, chance: float) -> np.ndarray:
    """``mask ^ (ring & (draws < chance))`` for an ``(H, W) bool`` mask, ``(H, W)`` uniform
    ``draws`` and ``ring`` the mask's inner and outer ring: pixels with a 4-neighbour of the other
    value (the dilation minus the erosion by the 4-neighbour cross, outside the array not counted)."""
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
    out = mask.copy()
    for r in range(h):
        for c in range(w):
            if ring[r, c] and draws[r, c] < chance:
                out[r, c] = not mask[r, c]
    return out


@numba.njit(cache=True, nogil=True)
def mask_extent(mask: np.ndarray) -> tuple[int, int, int, int, int]:
    """``(count, row0, col0, row1, col1)`` of an ``(H, W) bool`` mask: its pixel count and bounding
    box (end exclusive; ``(0, H, W, 0, 0)`` for an empty mask)."""
    h, w = mask.shape
    count, r0, c0, r1, c1 = 0, h, w, 0, 0
    for r in range(h):
        for c in range(w):
            if mask[r, c]:
                count += 1
                r0 = min(r0, r)
                r1 = r + 1
                c0 = min(c0, c)
                c1 = max(c1, c + 1)
    return count, r0, c0, r1, c1


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


@numba.njit(cache=True, nogil=True)
def ids_covering(labels: np.ndarray, mask: np.ndarray, share: float) -> np.ndarray:
    """The ids > 0 of the ``(H, W)`` id image ``labels`` that cover at least ``share`` of the
    ``(H, W) bool`` ``mask``'s pixels (of at least one pixel), most pixels first, then by id."""
    h, w = mask.shape
    size, total = 1, 0
    for r in range(h):
        for c in range(w):
            if mask[r, c]:
                total += 1
                size = max(size, labels[r, c] + 1)
    counts = np.zeros(size, np.int64)
    for r in range(h):
        for c in range(w):
            if mask[r, c] and labels[r, c] > 0:
                counts[labels[r, c]] += 1
    needed = share * max(total, 1)
    ids = np.array([i for i in range(size) if counts[i] > 0 and counts[i] >= needed], np.int64)
    return ids[np.argsort(-counts[ids], kind="mergesort")]
