"""A tiny analytic Scene for navigation tests: a floor split by a wall with one doorway.

The wall is the plane x = 0 for z < 1 (the doorway is z >= 1). Two points on the same side, or
whose straight segment passes the doorway, are Euclidean distance apart; otherwise the shortest
path bends around the wall's end at (0, 0, 1).
"""

from __future__ import annotations

import numpy as np

from memgym.core.protocols import Scene

CORNER = np.array([0.0, 0.0, 1.0])


class WallScene(Scene):
    def render(self, position, rotation):
        raise NotImplementedError("WallScene has no renderer")

    def _blocked(self, a: np.ndarray, b: np.ndarray) -> bool:
        if np.sign(a[0]) == np.sign(b[0]) or a[0] == 0 or b[0] == 0:
            return False
        t = a[0] / (a[0] - b[0])
        return (a[2] + t * (b[2] - a[2])) < 1.0

    def geodesic_distance(self, start, goal) -> float:
        a, b = np.asarray(start, float), np.asarray(goal, float)
        if self._blocked(a, b):
            return float(np.linalg.norm(a - CORNER) + np.linalg.norm(CORNER - b))
        return float(np.linalg.norm(a - b))

    def shortest_path(self, start, goal):
        a, b = np.asarray(start, float), np.asarray(goal, float)
        return np.stack([a, CORNER, b]) if self._blocked(a, b) else np.stack([a, b])

    def is_navigable(self, position) -> bool:
        return True

    @property
    def objects(self):
        return []
