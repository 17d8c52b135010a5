import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.sensors.camera import CameraConfig, RGBDCamera
from memgym.sensors.frame_cache import FrameCache, frames_key


@pytest.fixture(scope="module")
def poses(house_and_hm3d):
    house = house_and_hm3d[0]
    rng = np.random.default_rng(4)
    return np.array([house.navgrid.sample_navigable(rng) for _ in range(3)]), rng.uniform(-np.pi, np.pi, 3)


CAMERA = RGBDCamera(CameraConfig(width=24, height=16))


def test_key_changes_with_scene_poses_and_camera(house_and_hm3d, poses):
    house, hm3d = house_and_hm3d
    positions, yaws = poses
    key = frames_key(house, positions, yaws, CAMERA)
    assert frames_key(house, positions.copy(), yaws.copy(), CAMERA) == key
    moved = positions.copy()
    moved[1, 0] += 1e-9
    others = [
        frames_key(house, moved, yaws, CAMERA),
        frames_key(house, positions, yaws[[0, 2, 1]], CAMERA),
        frames_key(house, positions[:2], yaws[:2], CAMERA),
        frames_key(hm3d, positions, yaws, CAMERA),  # the same house from files: other surface lookups
        frames_key(house, positions, yaws, RGBDCamera(CameraConfig(width=24, height=16, max_depth=5.0))),
        frames_key(house, positions, yaws, RGBDCamera(CameraConfig(width=16, height=24))),
    ]
    assert len({key, *others}) == 1 + len(others)
    with pytest.raises(MemgymError, match=r"positions \(B, 3\) and yaws \(B,\)"):
        frames_key(house, positions, yaws[:2], CAMERA)


def test_hits_return_the_rendered_frames(house_and_hm3d, poses):
    house = house_and_hm3d[0]
    cache = FrameCache()
    first = cache.render(CAMERA, house, *poses)
    second = cache.render(CAMERA, house, *poses)
    assert (cache.hits, cache.misses) == (1, 1)
    uncached = CAMERA.render_batch(house, *poses)
    for key in ("rgb", "depth", "semantic"):
        assert second[key] is first[key] and not first[key].flags.writeable
        np.testing.assert_array_equal(first[key], uncached[key])
    cache.render(CAMERA, house, poses[0][:2], poses[1][:2])
    assert cache.misses == 2


def test_least_recently_used_batches_leave_a_full_cache(house_and_hm3d, poses):
    house = house_and_hm3d[0]
    positions, yaws = poses
    one = sum(a.nbytes for a in CAMERA.render_batch(house, positions[:1], yaws[:1]).values())
    cache = FrameCache(max_bytes=2 * one)
    for b in (0, 1, 0, 2, 0, 1):  # 1 is dropped when 2 arrives (0 was used more recently)
        cache.render(CAMERA, house, positions[b : b + 1], yaws[b : b + 1])
    assert (cache.hits, cache.misses) == (2, 4)


def test_folder_serves_later_caches_and_survives_damage(house_and_hm3d, poses, tmp_path):
    house = house_and_hm3d[0]
    rendered = FrameCache(folder=tmp_path).render(CAMERA, house, *poses)
    (stored,) = tmp_path.glob("*.npz")
    assert stored.stem == frames_key(house, *poses, CAMERA)
    later = FrameCache(folder=tmp_path)
    read = later.render(CAMERA, house, *poses)
    assert (later.hits, later.misses) == (1, 0)
    for key in rendered:
        np.testing.assert_array_equal(read[key], rendered[key])
        assert read[key].dtype == rendered[key].dtype
    stored.write_bytes(b"not a zip")
    damaged = FrameCache(folder=tmp_path)
    again = damaged.render(CAMERA, house, *poses)
    assert (damaged.hits, damaged.misses) == (0, 1)
    np.testing.assert_array_equal(again["rgb"], rendered["rgb"])
    assert FrameCache(folder=tmp_path).render(CAMERA, house, *poses) is not None  # stored again
    with pytest.raises(MemgymError, match="is a file"):
        FrameCache(folder=stored)
