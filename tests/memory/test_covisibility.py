"""3D-Mem's co-visibility clustering on hand-made visibility tables."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.memory.embodied.covisibility import covisibility_clusters, two_means

LOCATIONS = {"a": (0.0, 0, 0), "b": (0.5, 0, 0), "c": (5.0, 0, 0), "d": (5.5, 0, 0)}


def test_one_frame_showing_everything_is_one_snapshot():
    seen = {
        0: {"a": 0.1, "b": 0.1},
        3: {"a": 0.1, "b": 0.1, "c": 0.1, "d": 0.1},
        4: {"a": 0.2, "b": 0.2, "c": 0.1, "d": 0.1},
    }
    assert covisibility_clusters(LOCATIONS, seen) == [(4, ["a", "b", "c", "d"])]


def test_clusters_split_by_location_until_a_frame_shows_each():
    seen = {1: {"a": 0.1, "b": 0.3}, 2: {"a": 0.2, "b": 0.1}, 5: {"c": 0.1, "d": 0.1}, 6: {"b": 0.1, "c": 0.4}}
    # no frame shows all four; 2-means splits {a, b} | {c, d}; frame 1 and 2 tie on coverage: earlier wins
    assert covisibility_clusters(LOCATIONS, seen) == [(1, ["a", "b"]), (5, ["c", "d"])]
    # c and d never seen together: {c, d} splits further into single objects at their best frames
    seen = {1: {"a": 0.1, "b": 0.3}, 5: {"c": 0.1}, 6: {"c": 0.4, "b": 0.1}, 7: {"d": 0.2}}
    assert covisibility_clusters(LOCATIONS, seen) == [(1, ["a", "b"]), (6, ["c"]), (7, ["d"])]


def test_unseen_objects_are_an_error():
    with pytest.raises(ValueError, match="seen in no frame"):
        covisibility_clusters(LOCATIONS, {0: {"a": 0.1}})


def test_two_means_is_deterministic_and_splits_coincident_points():
    assert two_means(np.array([[0, 0, 0], [0.1, 0, 0], [3, 0, 0], [3.2, 0, 0]])) == ([0, 1], [2, 3])
    assert two_means(np.zeros((3, 3))) == ([0], [1, 2])
