"""memgym's geodesics against an independent shortest path on DialogMem's default houses.

The reference shares no code with the navigation grid: a raster (3 cm) of the points that keep the
agent's radius from the mesh faces sampled every 10 mm (:mod:`clearance_check`), searched with its
32-move Dijkstra, each pair's ends joined to the free raster cells around them by straight
segments (so the raster's cells do not move the ends). ``python tests/support/geodesic_survey.py [SEED ...]`` prints, per default house
(6-9 rooms, ``hm3d_v2`` clutter), the smallest and largest ratio memgym / reference over 30 random
pairs of navigable cells at least 1 m apart, and the worst pair.
"""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
from clearance_check import clearances, move_graph, scene_body_samples
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from memgym.datasets.dialogmem.defaults import default_house
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.spec import SceneSpec, load_scene

REFERENCE_CELL = 0.03
"""Cell (m) of the reference raster (the issue's)."""


def default_dialogmem_house(seed: int) -> MeshScene:
    """House ``seed`` as ``memgym generate dialogmem`` builds it by default."""
    return load_scene(SceneSpec(seed=seed, options={"house": dataclasses.asdict(default_house())}))


def random_pairs(scene: MeshScene, count: int, min_distance: float, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` pairs of navigable cell centres of the largest island at least ``min_distance`` m apart."""
    nav, rng = scene.navgrid, np.random.default_rng(seed)
    cells = np.argwhere(nav.islands == nav.largest_island)
    pairs = []
    while len(pairs) < count:
        a, b = (nav.cell_center(*c) for c in cells[rng.integers(len(cells), size=2)])
        if math.dist(a[[0, 2]], b[[0, 2]]) >= min_distance:
            pairs.append((a, b))
    return pairs


def compare(scene: MeshScene, pairs: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """``(P, 2)``: memgym's geodesic and the reference shortest path (metres) of each pair."""
    cell, bounds = REFERENCE_CELL, scene.bounds()
    nx, nz = (math.ceil((bounds[1, k] - bounds[0, k]) / cell) for k in (0, 2))
    cols, rows = np.meshgrid(np.arange(nx), np.arange(nz))
    centres = np.stack([bounds[0, 0] + (cols + 0.5) * cell, 0 * cols, bounds[0, 2] + (rows + 0.5) * cell], axis=-1)
    gap = clearances(centres.reshape(-1, 3), scene_body_samples(scene, spacing=0.01)).reshape(nz, nx)
    free = gap >= scene.agent.radius

    def links(point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Free raster cells (flat index) in the 3x3 block around ``point`` and their distance from it (m)."""
        row, col = int((point[2] - bounds[0, 2]) // cell), int((point[0] - bounds[0, 0]) // cell)
        block = [(r, c) for r in range(row - 1, row + 2) for c in range(col - 1, col + 2)]
        block = [(r, c) for r, c in block if 0 <= r < nz and 0 <= c < nx and free[r, c]]
        index = np.array([r * nx + c for r, c in block], np.int64)
        return index, np.array([math.dist(centres[r, c][[0, 2]], point[[0, 2]]) for r, c in block])

    graph, n = move_graph(free, cell), nz * nx
    starts = [links(a) for a, _ in pairs]  # one extra node per pair start, joined to its cells
    extra_rows = np.concatenate([np.full(len(i), n + k) for k, (i, _) in enumerate(starts)])
    extra = coo_matrix(
        (np.concatenate([w for _, w in starts]), (extra_rows, np.concatenate([i for i, _ in starts]))),
        shape=(n + len(pairs),) * 2,
    )
    graph = graph.tocoo()
    full = (extra + coo_matrix((graph.data, (graph.row, graph.col)), shape=extra.shape)).tocsr()
    distance = dijkstra(full, indices=list(range(n, n + len(pairs))))
    reference = []
    for k, (_, b) in enumerate(pairs):
        index, weight = links(b)
        reference.append(float((distance[k, index] + weight).min()) if len(index) else math.inf)
    return np.array([(scene.navgrid.geodesic_distance(a, b), r) for (a, b), r in zip(pairs, reference)])


def path_clearance(scene: MeshScene, a: np.ndarray, b: np.ndarray, spacing: float = 0.004) -> float:
    """The least distance (metres) from memgym's geodesic path ``a -> b`` (sampled every 5 mm) to
    the faces in the agent's body, sampled every ``spacing`` m (:mod:`clearance_check`)."""
    path = scene.navgrid.geodesic(a, b).path
    steps = [max(2, math.ceil(math.dist(p[[0, 2]], q[[0, 2]]) / 0.005) + 1) for p, q in zip(path[:-1], path[1:])]
    points = np.concatenate([np.linspace(p, q, n) for p, q, n in zip(path[:-1], path[1:], steps)])
    return float(clearances(points, scene_body_samples(scene, spacing=spacing)).min())


def main(seeds: list[int]) -> None:
    for seed in seeds:
        scene = default_dialogmem_house(seed)
        pairs = random_pairs(scene, 30, 1.0, seed)
        lengths = compare(scene, pairs)
        ratio = lengths[:, 0] / lengths[:, 1]
        worst = int(np.argmax(np.abs(ratio - 1.0)))
        a, b = (p[[0, 2]].round(2).tolist() for p in pairs[worst])
        line = (
            f"seed {seed}: ratio min {ratio.min():.3f} max {ratio.max():.3f}; worst {a} -> {b}: "
            f"{lengths[worst, 0]:.2f} m vs {lengths[worst, 1]:.2f} m"
        )
        shorter = np.flatnonzero(ratio < 0.97)  # a passage the raster closed, if memgym's path keeps the radius
        if len(shorter):
            kept = [path_clearance(scene, *pairs[k]) for k in shorter]
            others = np.delete(ratio, shorter)
            line += (
                f"; {len(shorter)} pair(s) shorter by > 3%, memgym's path keeping >= {min(kept):.4f} m "
                f"from the faces (the others: min {others.min():.3f} max {others.max():.3f})"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or list(range(12)))
