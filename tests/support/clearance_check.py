"""An independent clearance check: sampled mesh faces, not the navigation grid's own geometry code.

Each face is sampled on a barycentric lattice with neighbouring samples at most ``spacing`` apart;
the samples inside the agent's body band (from ``max_climb`` above the floor level to ``height``)
are kept, projected onto the floor plane and thinned to one per ``spacing / 2`` square. Samples
are points of the faces, so a point's distance to its nearest sample is never less than its
distance to the faces (and at most about ``spacing`` more): a point found closer than the radius
is truly closer.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra
from scipy.spatial import cKDTree


def body_samples(triangles: np.ndarray, y_lo: float, y_hi: float, spacing: float = 0.01) -> np.ndarray:
    """``(P, 2)`` floor-plane ``(x, z)`` samples of the parts of ``triangles`` ``(T, 3, 3)`` in
    ``[y_lo, y_hi]``: one sample (a point of a face) per ``spacing / 2`` square seen from above."""
    tri = np.asarray(triangles, np.float64).reshape(-1, 3, 3)
    tri = tri[(tri[:, :, 1].max(axis=1) >= y_lo) & (tri[:, :, 1].min(axis=1) <= y_hi)]
    if not len(tri):
        return np.zeros((0, 2))
    step = spacing / 2
    origin = tri[:, :, [0, 2]].reshape(-1, 2).min(axis=0) - step
    shape = np.ceil((tri[:, :, [0, 2]].reshape(-1, 2).max(axis=0) - origin) / step).astype(int) + 2
    kept = np.full((*shape, 2), np.nan)
    for a, b, c in tri:
        longest = max(float(np.linalg.norm(p - q)) for p, q in ((a, b), (b, c), (c, a)))
        n = max(1, int(np.ceil(longest / spacing)))
        i, j = np.divmod(np.arange((n + 1) * (n + 1)), n + 1)
        i, j = i[i + j <= n], j[i + j <= n]
        points = a + np.outer(i / n, b - a) + np.outer(j / n, c - a)
        points = points[(points[:, 1] >= y_lo) & (points[:, 1] <= y_hi)][:, [0, 2]]
        cells = np.floor((points - origin) / step).astype(int)
        kept[cells[:, 0], cells[:, 1]] = points
    kept = kept.reshape(-1, 2)
    return kept[~np.isnan(kept[:, 0])]


def clearances(points: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """``(K,)`` horizontal distance from each of ``points`` ``(K, 3)`` to the nearest of ``samples``."""
    distance, _ = cKDTree(samples).query(np.asarray(points, float)[:, [0, 2]])
    return distance


_SCENE_SAMPLES: dict[str, np.ndarray] = {}


def scene_body_samples(scene, spacing: float = 0.02) -> np.ndarray:
    """:func:`body_samples` of a scene's mesh in its agent's body band (kept per scene id and spacing)."""
    key = f"{scene.scene_id}@{spacing}"
    if key not in _SCENE_SAMPLES:
        agent, floor = scene.agent, scene.floor_height
        band = (floor + agent.max_climb + 1e-3, floor + agent.height)
        _SCENE_SAMPLES[key] = body_samples(scene.vertices[scene.triangles], *band, spacing=spacing)
    return _SCENE_SAMPLES[key]


_OFFSETS = [(r, c) for r in range(-3, 4) for c in range(-3, 4) if math.gcd(r, c) == 1]
"""The 32 moves of a 7x7 neighbourhood in lowest terms: grid paths within about 1.3% of straight."""


def shortest_distances(free: np.ndarray, cell: float, source: tuple[int, int]) -> np.ndarray:
    """``(nz, nx)`` metres from ``source`` (row, col) over ``free`` cells with the 32 moves of
    :data:`_OFFSETS`, each move allowed when every cell its segment passes is free (inf: unreached)."""
    return move_graph_distances(move_graph(free, cell), free.shape, [source])[0]


def move_graph(free: np.ndarray, cell: float) -> csr_matrix:
    """The graph of :func:`shortest_distances` over the ``(nz, nx)`` cells (node ``row * nx + col``)."""
    nz, nx = free.shape
    index = np.arange(nz * nx).reshape(nz, nx)
    rows, cols, weights = [], [], []
    for dr, dc in _OFFSETS:
        ok = np.zeros_like(free)
        r0, r1, c0, c1 = max(0, -dr), nz - max(0, dr), max(0, -dc), nx - max(0, dc)
        ok[r0:r1, c0:c1] = True
        steps = 4 * max(abs(dr), abs(dc))
        for t in np.linspace(0.0, 1.0, steps + 1):
            shifted = np.zeros_like(free)
            sr, sc = int(np.floor(t * dr + 0.5)), int(np.floor(t * dc + 0.5))
            shifted[max(0, -sr) : nz - max(0, sr), max(0, -sc) : nx - max(0, sc)] = free[
                max(0, sr) : nz - max(0, -sr), max(0, sc) : nx - max(0, -sc)
            ]
            ok &= shifted
        ok &= free
        iz, ix = np.nonzero(ok)
        rows.append(index[iz, ix])
        cols.append(index[iz + dr, ix + dc])
        weights.append(np.full(len(iz), cell * math.hypot(dr, dc)))
    return csr_matrix((np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))), shape=(nz * nx,) * 2)


def move_graph_distances(graph: csr_matrix, shape: tuple[int, int], sources: list[tuple[int, int]]) -> np.ndarray:
    """``(S, nz, nx)`` metres from each of ``sources`` (row, col) over :func:`move_graph`'s ``graph``."""
    index = [row * shape[1] + col for row, col in sources]
    return dijkstra(graph, indices=index).reshape(len(sources), *shape)
