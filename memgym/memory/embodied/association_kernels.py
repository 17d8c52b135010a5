"""The inner loops of fusing object views into instances, compiled with numba (``cache=True``).

A view holds about a hundred voxels and is compared with about ten instances; in numpy each
comparison is a dozen small array operations whose fixed cost outweighs the arithmetic. Each
kernel computes exactly what the numpy statement in its docstring computes (the same float64
operations in the same order); ``tests/memory/test_formation_reference.py`` checks association
built on them against plain numpy references.
"""

from __future__ import annotations

import math

import numba
import numpy as np

OFFSET = 1 << 20
"""Added to every cell index so that the three indices of a key are non-negative (|coords| < 50 km)."""


@numba.njit(cache=True, nogil=True)
def cell_keys(points: np.ndarray, size: float) -> np.ndarray:
    """``(N,) int64`` key of the ``size``-m grid cell of each ``(N, 3)`` point:
    ``floor(points / size) + 2**20`` per axis, packed as ``x << 42 | y << 21 | z``."""
    keys = np.empty(points.shape[0], np.int64)
    for n in range(points.shape[0]):
        x = np.int64(math.floor(points[n, 0] / size)) + OFFSET
        y = np.int64(math.floor(points[n, 1] / size)) + OFFSET
        z = np.int64(math.floor(points[n, 2] / size)) + OFFSET
        keys[n] = (x << 42) | (y << 21) | z
    return keys


@numba.njit(cache=True, nogil=True)
def view_geometry(points: np.ndarray, voxel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ``(N,)`` :func:`cell_keys` of ``(N, 3)`` points on the ``voxel``-m grid and on the
    ``2 * voxel``-m grid, and the ``(3,)`` min and max corners of the points (N >= 1)."""
    low = points[0].copy()
    high = points[0].copy()
    for n in range(1, points.shape[0]):
        for a in range(3):
            low[a] = min(low[a], points[n, a])
            high[a] = max(high[a], points[n, a])
    return cell_keys(points, voxel), cell_keys(points, 2 * voxel), low, high


@numba.njit(cache=True, nogil=True)
def boxes_near(boxes: np.ndarray, low: np.ndarray, high: np.ndarray, margin: float) -> np.ndarray:
    """Indices of the ``(N, 2, 3)`` min/max ``boxes`` that touch ``[low, high]`` grown by ``margin``:
    ``flatnonzero(all((boxes[:, 0] <= high + margin) & (boxes[:, 1] >= low - margin), axis=1))``."""
    out = np.empty(boxes.shape[0], np.int64)
    n = 0
    for k in range(boxes.shape[0]):
        near = True
        for a in range(3):
            if not (boxes[k, 0, a] <= high[a] + margin and boxes[k, 1, a] >= low[a] - margin):
                near = False
                break
        if near:
            out[n] = k
            n += 1
    return out[:n]


@numba.njit(cache=True, nogil=True)
def shares_inside(points: np.ndarray, boxes: np.ndarray, which: np.ndarray, grow: float) -> np.ndarray:
    """``(K,)`` fraction of the ``(N, 3)`` ``points`` inside each box ``boxes[which]`` ``(K,)`` grown
    by ``grow`` m: ``count_nonzero(all((p >= box[0] - grow) & (p <= box[1] + grow), axis=1)) / N``."""
    out = np.empty(which.shape[0])
    for j in range(which.shape[0]):
        k = which[j]
        inside = 0
        for n in range(points.shape[0]):
            hit = True
            for a in range(3):
                if not (points[n, a] >= boxes[k, 0, a] - grow and points[n, a] <= boxes[k, 1, a] + grow):
                    hit = False
                    break
            if hit:
                inside += 1
        out[j] = inside / points.shape[0]
    return out


@numba.njit(cache=True, nogil=True)
def absent(keys: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``(M,) bool``: which of ``keys`` ``(M,)`` are in neither of the sorted arrays ``first`` and
    ``second`` (binary search)."""
    out = np.empty(keys.shape[0], np.bool_)
    for m in range(keys.shape[0]):
        key = keys[m]
        at = np.searchsorted(first, key)
        found = at < first.shape[0] and first[at] == key
        if not found:
            at = np.searchsorted(second, key)
            found = at < second.shape[0] and second[at] == key
        out[m] = not found
    return out


@numba.njit(cache=True, nogil=True)
def merge_sorted(
    keys: np.ndarray, rows: np.ndarray, more_keys: np.ndarray, more_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sorted ``keys`` ``(N,)`` with their ``rows`` ``(N, D)`` and the sorted ``more_keys``
    ``(M,)`` with ``more_rows`` ``(M, D)`` merged into one sorted array (equal keys: those of
    ``keys`` first, each side in its own order: ``argsort(concatenate(...), kind="stable")``)."""
    n, m = keys.shape[0], more_keys.shape[0]
    out_keys = np.empty(n + m, np.int64)
    out_rows = np.empty((n + m, rows.shape[1]), rows.dtype)
    i = j = 0
    for o in range(n + m):
        if j >= m or (i < n and keys[i] <= more_keys[j]):
            out_keys[o] = keys[i]
            out_rows[o] = rows[i]
            i += 1
        else:
            out_keys[o] = more_keys[j]
            out_rows[o] = more_rows[j]
            j += 1
    return out_keys, out_rows


@numba.njit(cache=True, nogil=True)
def insert_absent(
    keys: np.ndarray,
    added_keys: np.ndarray,
    added_rows: np.ndarray,
    new_keys: np.ndarray,
    new_rows: np.ndarray,
    unique: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Insert into the sorted ``added_keys`` ``(A,)`` (with ``added_rows`` ``(A, D)``) those of
    ``new_keys`` ``(M,)`` (with ``new_rows`` ``(M, D)``) that are in neither ``keys`` nor
    ``added_keys`` (both sorted).

    Inserted keys go after equal keys already there, in their order in ``new_keys`` (a stable sort
    of old + new); with ``unique`` only the first of equal new keys is inserted.

    Returns:
        The new ``added_keys`` and ``added_rows``, and ``(M,) bool``: which of ``new_keys`` were
        absent (before any insertion).
    """
    missing = absent(new_keys, keys, added_keys)
    order = np.argsort(new_keys, kind="mergesort")
    chosen = np.empty(order.shape[0], np.int64)
    n = 0
    for o in order:
        if missing[o] and not (unique and n > 0 and new_keys[chosen[n - 1]] == new_keys[o]):
            chosen[n] = o
            n += 1
    chosen = chosen[:n]
    merged_keys, merged_rows = merge_sorted(added_keys, added_rows, new_keys[chosen], new_rows[chosen])
    return merged_keys, merged_rows, missing


@numba.njit(cache=True, nogil=True)
def grouped_order(which: np.ndarray, keys: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The order that sorts ``(N,)`` items by ``which`` (``0..count-1``), then by ``keys``, keeping
    the input order among equal pairs (``np.lexsort((keys, which))``), the positions in that order
    where a new ``(which, key)`` group starts, and the groups' sizes.

    Returns:
        ``(N,) int64`` order, ``(G,) int64`` group starts and ``(G,) int64`` group sizes.
    """
    n = which.shape[0]
    sizes = np.zeros(count + 1, np.int64)
    for k in range(n):
        sizes[which[k] + 1] += 1
    offsets = np.cumsum(sizes)
    by_which = np.empty(n, np.int64)
    fill = offsets[:-1].copy()
    for k in range(n):
        by_which[fill[which[k]]] = k
        fill[which[k]] += 1
    order = np.empty(n, np.int64)
    for g in range(count):
        members = by_which[offsets[g] : offsets[g + 1]]
        order[offsets[g] : offsets[g + 1]] = members[np.argsort(keys[members], kind="mergesort")]
    starts = np.empty(n, np.int64)
    m = 0
    for k in range(n):
        if k == 0 or which[order[k]] != which[order[k - 1]] or keys[order[k]] != keys[order[k - 1]]:
            starts[m] = k
            m += 1
    sizes = np.empty(m, np.int64)
    for g in range(m):
        sizes[g] = (starts[g + 1] if g + 1 < m else n) - starts[g]
    return order, starts[:m], sizes
