import numpy as np
import pytest

from memgym.scenes.poses import quat_from_yaw
from memgym.scenes.simple import box_room
from memgym.sensors.camera import CameraConfig, PoseSensor, RGBDCamera


def test_observation_is_in_its_space_with_documented_units():
    scene = box_room(6.0, 4.0, 2.5)
    camera = RGBDCamera(CameraConfig(width=40, height=30, hfov=70.0, sensor_height=1.5, max_depth=2.5))
    obs = camera.observe(scene, np.array([3.0, 0.0, 3.5]), 0.0)
    assert obs in camera.observation_space
    assert obs["rgb"].shape == (30, 40, 3) and obs["depth"].shape == (30, 40) and obs["semantic"].dtype == np.int32
    assert obs["depth"].max() == pytest.approx(2.5)  # the far wall (3.5 m) is clipped to max_depth
    # the camera sits sensor_height above the agent: the same as rendering from the eye directly
    direct = scene.render(np.array([3.0, 1.5, 3.5]), quat_from_yaw(0.0), camera.intrinsics)
    np.testing.assert_array_equal(obs["semantic"], direct["semantic"])


def test_pose_sensor():
    sensor = PoseSensor()
    obs = sensor.observe(np.array([1.0, 0.0, -2.0]), np.pi / 2)
    assert obs in sensor.observation_space
    np.testing.assert_allclose(obs["rotation"], [0.0, np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4)], atol=1e-7)
