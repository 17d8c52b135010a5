import os
import subprocess
import sys

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


def test_batch_frames_are_byte_identical_to_single_frames(house_and_hm3d):
    """One cast for a batch gives each pose exactly the frame of rendering it alone, whatever else
    the batch holds (a generated house, and the same house read back from HM3D files)."""
    camera = RGBDCamera(CameraConfig(width=48, height=36, max_depth=4.0))
    rng = np.random.default_rng(2)
    for scene in house_and_hm3d:
        positions = np.array([scene.navgrid.sample_navigable(rng) for _ in range(5)])
        yaws = rng.uniform(-np.pi, np.pi, 5)
        batch = camera.render_batch(scene, positions, yaws)
        assert batch["rgb"].shape == (5, 36, 48, 3) and batch["depth"].shape == batch["semantic"].shape == (5, 36, 48)
        reordered = camera.render_batch(scene, positions[::-1], yaws[::-1])
        for b in range(5):
            single = camera.observe(scene, positions[b], yaws[b])
            assert single in camera.observation_space
            for key, image in single.items():
                assert image.dtype == batch[key].dtype
                np.testing.assert_array_equal(batch[key][b], image)
                np.testing.assert_array_equal(reordered[key][4 - b], image)
        assert (batch["semantic"] > 0).any() and batch["depth"].max() == np.float32(4.0)


def test_render_batch_rejects_mismatched_poses():
    from memgym.core.errors import MemgymError

    with pytest.raises(MemgymError, match=r"positions \(B, 3\) and rotations \(B, 4\)"):
        box_room().render_batch(np.zeros((2, 3)), np.zeros((3, 4)))


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2+ CPUs and affinity"
)
def test_frames_do_not_depend_on_the_number_of_threads(house_and_hm3d, tmp_path):
    """A process pinned to one CPU (one Embree build and cast thread) renders the same bytes."""
    house = house_and_hm3d[0]
    camera = RGBDCamera(CameraConfig(width=40, height=30))
    rng = np.random.default_rng(7)
    positions = np.array([house.navgrid.sample_navigable(rng) for _ in range(4)])
    yaws = rng.uniform(-np.pi, np.pi, 4)
    np.savez(tmp_path / "poses.npz", positions=positions, yaws=yaws)
    script = f"""
import os, numpy as np
os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}})
from memgym.scenes.procedural import generate_house
from memgym.sensors.camera import CameraConfig, RGBDCamera
poses = np.load({str(tmp_path / "poses.npz")!r})
frames = RGBDCamera(CameraConfig(width=40, height=30)).render_batch(generate_house(2), poses["positions"], poses["yaws"])
np.savez({str(tmp_path / "frames.npz")!r}, **frames)
"""
    subprocess.run(
        [sys.executable, "-c", script], check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    )
    pinned = np.load(tmp_path / "frames.npz")
    here = camera.render_batch(house, positions, yaws)
    for key in ("rgb", "depth", "semantic"):
        np.testing.assert_array_equal(pinned[key], here[key])
