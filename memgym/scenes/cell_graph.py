"""The 16-neighbour cell graph that :class:`~memgym.scenes.navigation.NavGrid` runs its shortest
paths on: nodes are the cells of a boolean mask, edges the 8 neighbours and the 8 knight moves
whose straight segment passes only cells of the mask, weighted by length in metres."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from scipy import ndimage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra


class CellGraph:
    """Shortest-path fields over the 16-neighbour graph of one ``(nz, nx) bool`` cell ``mask``.

    Attributes:
        mask: the cells.
        islands: ``(nz, nx) int`` 8-connected island label of each cell (0: not in ``mask``).
        cells: ``(N, 2)`` (row, col) of the graph's nodes; ``node_of`` ``(nz, nx)`` the inverse (-1: none).
        graph: :func:`cell_graph`.
    """

    def __init__(self, mask: np.ndarray, cell: float, islands: np.ndarray | None = None) -> None:
        self.mask = mask
        self.islands = ndimage.label(mask, structure=np.ones((3, 3), bool))[0] if islands is None else islands
        self.cells = np.argwhere(mask)
        self.node_of = np.full(mask.shape, -1, np.int64)
        self.node_of[self.cells[:, 0], self.cells[:, 1]] = np.arange(len(self.cells))
        self.graph = cell_graph(mask, self.node_of, cell)
        self._fields: OrderedDict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()

    def field(self, goal_nodes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(N,)`` distance (metres) to the nearest of ``goal_nodes``, predecessor towards it and
        which goal node it is (kept for the last 64 goal sets)."""
        if goal_nodes in self._fields:
            self._fields.move_to_end(goal_nodes)
            return self._fields[goal_nodes]
        dist, pred, sources = dijkstra(
            self.graph, directed=False, indices=list(goal_nodes), min_only=True, return_predecessors=True
        )
        self._fields[goal_nodes] = (dist, pred, sources)
        if len(self._fields) > 64:
            self._fields.popitem(last=False)
        return dist, pred, sources


def cell_graph(mask: np.ndarray, node_of: np.ndarray, cell: float) -> csr_matrix:
    """The 16-neighbour graph of ``mask``'s cells (nodes ``node_of``): the 8 neighbours and the 8
    knight moves, each edge joining two cells whose straight segment passes only cells of ``mask``
    (:func:`passed_cells`), weighted by its length in metres (``cell`` metres a cell)."""
    rows, cols, weights = [], [], []
    nz, nx = mask.shape
    for dz, dx in ((0, 1), (1, 0), (1, 1), (1, -1), (1, 2), (2, 1), (1, -2), (2, -1)):
        lo, hi = max(0, -dx), nx - max(0, dx)
        both = mask[0 : nz - dz, lo:hi] & mask[dz:nz, lo + dx : hi + dx]
        for pz, px in passed_cells(dz, dx):
            both &= mask[pz : nz - dz + pz, lo + px : hi + px]
        iz, ix = np.nonzero(both)
        rows.append(node_of[iz, ix + lo])
        cols.append(node_of[iz + dz, ix + lo + dx])
        weights.append(np.full(len(iz), cell * math.hypot(dz, dx)))
    n = int(mask.sum())
    r, c, w = np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)
    return csr_matrix((np.concatenate([w, w]), (np.concatenate([r, c]), np.concatenate([c, r]))), shape=(n, n))


def passed_cells(dz: int, dx: int) -> list[tuple[int, int]]:
    """Offsets (row, col) of the cells between the ends of a move ``(dz, dx)`` of the cell graph
    (``dz >= 0``) that its straight segment passes: both cells beside a diagonal step (no corner
    cutting), the two cells a knight move crosses, none for a straight step."""
    sz, sx = int(np.sign(dz)), int(np.sign(dx))
    if abs(dz) == 1 and abs(dx) == 1:
        return [(0, dx), (dz, 0)]
    if abs(dx) == 2:
        return [(0, sx), (sz, sx)]
    if abs(dz) == 2:
        return [(sz, 0), (sz, sx)]
    return []
