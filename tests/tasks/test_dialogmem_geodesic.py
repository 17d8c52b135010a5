"""Geodesic success to an object's location on the navigation grid, on hand-built rooms."""

import math

import numpy as np
import pytest

from memgym.scenes.navigation import AgentSpec
from memgym.scenes.objects import SceneObject, ViewPoint
from memgym.scenes.simple import box_room
from memgym.tasks.dialogmem.geodesic import geodesic_success, object_goal_points

AGENT = AgentSpec(cell_size=0.05)
T = 0.1  # inner wall thickness


def _object(position, size, semantic_id=7, view_points=()):
    return SceneObject(
        object_id=f"thing_{semantic_id}",
        semantic_id=semantic_id,
        category="thing",
        position=tuple(position),
        size=tuple(size),
        view_points=tuple(ViewPoint(position=p, rotation=(0.0, 0.0, 0.0, 1.0)) for p in view_points),
    )


def _room(objects=(), walls=()):
    return box_room(
        8.0, 4.0, inner_walls=list(walls), objects=[(o.position, o.size, o.semantic_id) for o in objects], agent=AGENT
    )


def test_the_object_centre_succeeds_and_view_points_do_not_count():
    table = _object((2.0, 0.4, 2.0), (0.8, 0.8, 0.8), view_points=[(4.0, 0.0, 2.0)])
    scene = _room([table])
    exact = geodesic_success(scene, table.position, table)
    assert exact["success"] == 1.0 and exact["distance_to_goal"] == pytest.approx(0.0, abs=1e-9)
    # the view point lies 2 m from the centre, about 1.4 m from the floor next to the table: a failure
    assert geodesic_success(scene, (4.0, 0.0, 2.0), table)["success"] == 0.0


@pytest.mark.parametrize(("offset", "success"), [(0.9, 1.0), (1.1, 0.0)], ids=["0.9m", "1.1m"])
def test_radius_along_a_corridor(offset, success):
    # a 1 m wide corridor (z in [0, 1]) bent by a wall: the lamp hangs above head height at its
    # start, so its floor point is its centre; predictions run along the corridor
    lamp = _object((1.0, 2.0, 0.5), (0.3, 0.3, 0.3))
    scene = box_room(8.0, 1.0, objects=[(lamp.position, lamp.size, lamp.semantic_id)], agent=AGENT)
    np.testing.assert_allclose(object_goal_points(scene, lamp), [[1.0, 0.0, 0.5]], atol=1e-6)
    row = geodesic_success(scene, (1.0 + offset, 0.0, 0.5), lamp)
    assert row["success"] == success and row["distance_to_goal"] == pytest.approx(offset, abs=1e-6)


def test_close_across_a_wall_but_far_around_it_fails():
    # a wall along x = 4 for z in [0, 3]: the doorway is z in (3, 4)
    lamp = _object((3.6, 2.0, 1.0), (0.2, 0.2, 0.2))
    scene = _room([lamp], walls=[((4.0, 1.25, 1.5), (T, 2.5, 3.0))])
    row = geodesic_success(scene, (4.4, 0.0, 1.0), lamp)  # 0.8 m away in a straight line
    assert row["status"] == "ok" and row["success"] == 0.0
    gap = T / 2 + AGENT.radius  # the walkable floor keeps this far from the wall's faces and end
    leg = math.hypot(0.4 - gap, 3.0 + AGENT.radius - 1.0)
    around = 2 * leg + 2 * gap  # down to the wall's end, past it, and back up the other side
    assert row["distance_to_goal"] == pytest.approx(around, rel=0.05)
    assert geodesic_success(scene, (3.0, 0.0, 1.0), lamp)["success"] == 1.0


def test_unreachable_and_invalid_predictions_fail():
    lamp = _object((2.0, 2.0, 2.0), (0.2, 0.2, 0.2))
    scene = _room([lamp], walls=[((4.0, 1.25, 2.0), (T, 2.5, 4.0))])  # a wall across the whole room
    other_room = geodesic_success(scene, (5.0, 0.0, 2.0), lamp)
    assert other_room["success"] == 0.0 and other_room["status"] == "unreachable"
    assert math.isinf(other_room["distance_to_goal"])
    for bad in ((float("nan"), 0.0, 0.0), (1.0, 2.0)):
        assert geodesic_success(scene, bad, lamp) == {
            "success": 0.0,
            "distance_to_goal": math.inf,
            "status": "invalid_prediction",
        }
    off = geodesic_success(scene, (40.0, 0.0, 40.0), lamp)
    assert off["success"] == 0.0 and off["status"] == "start_off_navmesh"


def test_an_object_whose_nearest_floor_is_behind_a_wall_is_also_reached_from_its_own_side():
    # a counter (0.6 m deep) against the wall at x = 4, a kettle on it 0.15 m from the wall: the
    # nearest floor lies in the next room, the floor in front of the counter is farther
    wall = ((4.0, 1.25, 1.5), (T, 2.5, 3.0))
    counter = _object((3.65, 0.45, 1.0), (0.6, 0.9, 1.0), semantic_id=8)
    kettle = _object((3.8, 1.0, 1.0), (0.2, 0.2, 0.2), semantic_id=9)
    scene = _room([counter, kettle], walls=[wall])
    points = object_goal_points(scene, kettle)
    assert len(points) == 2
    behind, front = points
    assert behind[0] > 4.0 and front[0] < 3.35  # the plain snap, and the floor point that sees the kettle
    assert geodesic_success(scene, kettle.position, kettle)["success"] == 1.0
    assert geodesic_success(scene, (2.9, 0.0, 1.0), kettle)["success"] == 1.0
    assert geodesic_success(scene, (2.9, 0.0, 1.0), kettle)["distance_to_goal"] < 0.5
