import math

import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.scenes.mesh_scene import PinholeIntrinsics
from memgym.scenes.poses import quat_from_yaw, quat_to_matrix
from memgym.scenes.simple import OBJECT, WALL, box_room


def _analytic_box_depth(eye, rotation, intrinsics, lo, hi):
    """z-depth of the first exit of each pixel ray from the box [lo, hi] (camera inside)."""
    dirs = intrinsics.camera_rays().reshape(-1, 3) @ quat_to_matrix(rotation).T
    t = np.full(len(dirs), np.inf)
    for axis in range(3):
        d = dirs[:, axis]
        with np.errstate(divide="ignore"):
            for plane in (lo[axis], hi[axis]):
                tp = (plane - eye[axis]) / d
                t = np.where((tp > 0) & (tp < t), tp, t)
    return t.reshape(intrinsics.height, intrinsics.width)


@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.0])
def test_depth_matches_analytic_box_room(yaw):
    scene = box_room(6.0, 4.0, 2.5)
    intrinsics = PinholeIntrinsics(64, 48, 75.0)
    eye = np.array([2.5, 1.3, 1.7])
    rotation = quat_from_yaw(yaw)
    out = scene.render(eye, rotation, intrinsics)
    expected = _analytic_box_depth(eye, rotation, intrinsics, np.zeros(3), np.array([6.0, 2.5, 4.0]))
    assert out["depth"].shape == (48, 64) and out["depth"].dtype == np.float32
    np.testing.assert_allclose(out["depth"], expected, rtol=1e-4, atol=1e-4)
    assert out["rgb"].shape == (48, 64, 3) and out["rgb"].dtype == np.uint8
    assert out["rgb"].min() > 0  # every pixel sees a lit surface


def test_centre_pixel_depth_is_distance_to_facing_wall():
    scene = box_room(6.0, 4.0, 2.5)
    out = scene.render(np.array([3.0, 1.25, 3.0]), quat_from_yaw(0.0), PinholeIntrinsics(65, 65, 90.0))
    assert out["depth"][32, 32] == pytest.approx(3.0, abs=1e-5)  # looking along -z at the z=0 wall


def test_semantic_mask_matches_object_id():
    lo, hi = np.array([2.5, 0.0, 0.5]), np.array([3.5, 1.0, 1.5])
    scene = box_room(objects=[((3.0, 0.5, 1.0), (1.0, 1.0, 1.0), OBJECT)])
    intrinsics = PinholeIntrinsics(80, 80, 90.0)
    eye = np.array([3.0, 1.2, 3.5])
    rotation = quat_from_yaw(0.0)
    semantic = scene.render(eye, rotation, intrinsics)["semantic"]
    dirs = intrinsics.camera_rays().reshape(-1, 3) @ quat_to_matrix(rotation).T
    with np.errstate(divide="ignore", invalid="ignore"):
        t0 = (lo - eye) / dirs
        t1 = (hi - eye) / dirs
    near = np.nanmax(np.minimum(t0, t1), axis=1)
    far = np.nanmin(np.maximum(t0, t1), axis=1)
    hits_box = (near <= far) & (far > 0)
    mask = semantic.reshape(-1) == OBJECT
    assert hits_box.sum() > 200
    assert (mask != hits_box).mean() < 0.01  # only pixels on the silhouette may differ
    assert set(np.unique(semantic)) <= {1, 2, WALL, OBJECT}


def test_render_semantic_equals_full_render():
    scene = box_room(objects=[((3.0, 0.5, 1.0), (1.0, 1.0, 1.0), OBJECT)])
    eye, rotation = np.array([3.0, 1.2, 3.5]), quat_from_yaw(0.4)
    np.testing.assert_array_equal(scene.render_semantic(eye, rotation), scene.render(eye, rotation)["semantic"])


def test_bad_intrinsics_are_rejected():
    with pytest.raises(MemgymError, match="hfov"):
        PinholeIntrinsics(64, 64, 190.0)


def test_unknown_object_is_a_clear_error():
    with pytest.raises(MemgymError, match="no object 'sofa_1'"):
        box_room().object("sofa_1")


def test_quaternion_yaw_round_trip():
    from memgym.scenes.poses import forward_vector, yaw_from_quat

    for yaw in np.linspace(-3.0, 3.0, 7):
        assert yaw_from_quat(quat_from_yaw(yaw)) == pytest.approx(yaw)
        np.testing.assert_allclose(quat_to_matrix(quat_from_yaw(yaw)) @ [0, 0, -1], forward_vector(yaw), atol=1e-12)
    assert math.isclose(forward_vector(math.pi / 2)[0], -1.0)  # yaw +90 deg faces -x (a left turn)


def test_separate_semantic_mesh_is_cast_only_when_its_surfaces_differ():
    from memgym.scenes.mesh_scene import MeshScene, PerTriangleLookup

    room = box_room(6.0, 4.0, 2.5)
    eye, rotation = np.array([3.0, 1.25, 2.0]), quat_from_yaw(0.0)  # looking along -z at the z=0 wall
    ids = np.arange(1, len(room.triangles) + 1)
    # the same triangles with their vertices renumbered: one cast serves both images
    order = np.arange(len(room.vertices))[::-1]
    same = (room.vertices[order], np.argsort(order)[room.triangles], PerTriangleLookup(room.lookup.colors, ids))
    scene = MeshScene(room.vertices, room.triangles, room.lookup, semantic_mesh=same, floor_height=0.0)
    assert scene._semantic[0] is scene._raycaster
    semantic = scene.render(eye, rotation)["semantic"]
    direct = MeshScene(room.vertices, room.triangles, PerTriangleLookup(room.lookup.colors, ids), floor_height=0.0)
    np.testing.assert_array_equal(semantic, direct.render(eye, rotation)["semantic"])
    assert set(np.unique(semantic)) <= set(ids) and len(np.unique(semantic)) > 3
    # a semantic mesh of one quad 1 m in front of the wall: cast separately
    quad = np.array([[0, 0, 1], [6, 0, 1], [6, 2.5, 1], [0, 2.5, 1]], np.float32)
    other = (quad, np.array([[0, 1, 2], [0, 2, 3]]), PerTriangleLookup(np.ones((2, 3)), [7, 7]))
    scene = MeshScene(room.vertices, room.triangles, room.lookup, semantic_mesh=other, floor_height=0.0)
    assert scene._semantic[0] is not scene._raycaster
    out = scene.render(eye, rotation)
    assert (out["semantic"] == 7).mean() > 0.5 and set(np.unique(out["semantic"])) <= {0, 7}
    np.testing.assert_array_equal(out["depth"], room.render(eye, rotation)["depth"])
