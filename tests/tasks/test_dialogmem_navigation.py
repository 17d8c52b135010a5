"""Navigation metrics on an analytic wall scene (geodesic != Euclidean)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from wall_scene import WallScene

from memgym.core.episode import TaskItem
from memgym.tasks.dialogmem.navigation import NavigationScorer, path_length, spl

ITEM = TaskItem(
    item_id="n0",
    task="navigation",
    answer={"position": [2.0, 0.0, -1.0], "goal_points": [[1.0, 0.0, -1.0], [2.0, 0.0, 0.0]]},
)


def test_geodesic_success_uses_the_nearest_goal_point_and_the_wall():
    scorer = NavigationScorer(WallScene())
    # 0.8 m from the first goal point, same side of the wall: success.
    assert scorer.score(ITEM, [1.0, 0.0, -0.2])["geodesic_success"] == 1.0
    # Euclidean 0.4 m from a goal point but through the wall: geodesic ~2.5 m, failure.
    row = scorer.score(ITEM, [-0.2, 0.0, -1.0])
    assert row["geodesic_success"] == 0.0
    expected = math.hypot(0.2, 2.0) + math.hypot(1.0, 2.0)
    assert row["distance_to_goal"] == pytest.approx(expected)


def test_without_goal_points_the_object_position_is_the_goal_and_view_points_do_not_count():
    scorer = NavigationScorer(WallScene())
    item = TaskItem(
        item_id="n1", task="navigation", answer={"position": [3.0, 0.0, 3.0], "view_points": [[3.0, 0.0, 0.0]]}
    )
    assert scorer.score(item, np.array([3.0, 0.0, 2.1]))["geodesic_success"] == 1.0
    assert scorer.score(item, np.array([3.0, 0.0, 0.0]))["geodesic_success"] == 0.0  # at a view point, 3 m away
    for missing in (None, [np.nan, 0, 0]):
        row = scorer.score(item, missing)
        assert row == {"geodesic_success": 0.0, "distance_to_goal": None, "reward": 0.0}


def test_spl_formula():
    assert spl(True, 4.0, 5.0) == pytest.approx(0.8)
    assert spl(True, 4.0, 3.0) == 1.0  # a path shorter than d_start (start was off the graph)
    assert spl(False, 4.0, 4.0) == 0.0
    assert path_length(np.array([[0, 0, 0], [3, 0, 4], [3, 0, 5]])) == pytest.approx(6.0)


def test_execution_success_and_spl_around_the_wall():
    start = [-1.0, 0.0, -1.0]
    scorer = NavigationScorer(WallScene(), start_position=start)
    d_start = math.hypot(1.0, 2.0) + math.hypot(1.0, 2.0)  # to goal point (1, 0, -1) around the corner
    optimal = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, -1.0]])
    row = scorer.score(ITEM, {"goal": [1.0, 0.0, -1.0], "path": optimal})
    assert row["execution_success"] == 1.0 and row["spl"] == pytest.approx(1.0)
    detour = np.array([[-1.0, 0.0, 2.0], [0.0, 0.0, 2.0], [1.0, 0.0, -1.0]])
    row = scorer.score(ITEM, {"goal": [1.0, 0.0, -1.0], "path": detour})
    length = 3.0 + 1.0 + math.hypot(1.0, 3.0)
    assert row["spl"] == pytest.approx(d_start / length)
    stuck = np.array([[-0.1, 0.0, -1.0]])
    row = scorer.score(ITEM, {"goal": [1.0, 0.0, -1.0], "path": stuck})
    assert row["execution_success"] == 0.0 and row["spl"] == 0.0 and row["geodesic_success"] == 1.0
