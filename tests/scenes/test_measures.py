import math

import numpy as np

from memgym.scenes.measures import geodesic_success, goal_positions
from memgym.scenes.objects import SceneObject, ViewPoint
from memgym.scenes.simple import box_room


def _target(view_points=((1.0, 0.0, 1.0), (5.0, 0.0, 3.0))):
    return SceneObject(
        object_id="chair_7",
        semantic_id=7,
        category="chair",
        position=(3.0, 0.5, 2.0),
        size=(0.5, 1.0, 0.5),
        view_points=tuple(ViewPoint(position=p, rotation=(0.0, 0.0, 0.0, 1.0)) for p in view_points),
    )


def test_success_is_measured_to_the_nearest_view_point():
    scene = box_room(6.0, 4.0)
    target = _target()
    near_second = geodesic_success(scene, (4.2, 0.0, 3.0), target, 1.0)
    assert near_second["success"] == 1.0
    assert math.isclose(near_second["distance_to_goal"], 0.8, abs_tol=1e-6)
    middle = geodesic_success(scene, (3.0, 0.0, 2.0), target, 1.0)
    assert middle["success"] == 0.0 and middle["status"] == "ok"
    assert math.isclose(middle["distance_to_goal"], math.hypot(2.0, 1.0), abs_tol=1e-6)


def test_bad_predictions_fail_with_a_status():
    scene = box_room(6.0, 4.0)
    assert geodesic_success(scene, (float("nan"), 0.0, 0.0), _target())["status"] == "invalid_prediction"
    assert geodesic_success(scene, (1.0, 2.0), _target())["status"] == "invalid_prediction"
    off = geodesic_success(scene, (40.0, 0.0, 40.0), _target())
    assert off["success"] == 0.0 and off["status"] == "start_off_navmesh" and math.isinf(off["distance_to_goal"])


def test_objects_without_view_points_use_their_position():
    np.testing.assert_allclose(goal_positions(_target(())), [[3.0, 0.5, 2.0]])
