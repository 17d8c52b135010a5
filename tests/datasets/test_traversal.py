import hashlib
import json

import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.core.records import from_json
from memgym.datasets.traversal import (
    OBSERVING_MARGIN,
    TraversalConfig,
    episodic_observations,
    generate_traversal,
    observing_poses,
    visible_objects,
)
from memgym.scenes.poses import heading_to, quat_from_yaw, yaw_from_quat
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig, RGBDCamera

SPEC = SceneSpec(seed=0)
CAMERA = CameraConfig(width=48, height=48)
CONFIG = TraversalConfig(min_goals=5, max_goals=6, visibility_width=0)


@pytest.fixture(scope="module")
def traversal():
    return generate_traversal(load_scene(SPEC), SPEC, np.random.default_rng(4), CONFIG, CAMERA)


def test_goals_segments_and_frames(traversal):
    scene = load_scene(SPEC)
    assert 5 <= len(traversal.segments) <= 6
    assert len(set(traversal.goals)) == len(traversal.goals)
    frames = traversal.frames
    assert [f.index for f in frames] == list(range(len(frames)))
    assert frames[0].action == "start"
    assert all(f.action in ("move_forward", "turn_left", "turn_right") for f in frames[1:])
    previous_end = 0
    for seg in traversal.segments:
        assert seg.start_frame <= seg.end_frame and seg.start_frame <= previous_end + 1
        assert all(frames[i].segment == seg.index for i in range(max(seg.start_frame, 1), seg.end_frame + 1))
        assert seg.reached and seg.observed, seg
        goal = scene.object(seg.goal_object_id)
        end = np.array(frames[seg.end_frame].position)
        poses = observing_poses(scene, goal, RGBDCamera(CAMERA), OBSERVING_MARGIN * CONFIG.min_coverage)
        assert scene.geodesic(end, poses).distance <= CONFIG.goal_radius + scene.navgrid.cell
        previous_end = seg.end_frame
    # exploration: the walked route is longer than the shortest paths between the goals
    walked = np.linalg.norm(np.diff(traversal.positions()[:, [0, 2]], axis=0), axis=1).sum()
    ends = [traversal.positions()[0]] + [np.array(frames[s.end_frame].position) for s in traversal.segments]
    shortest = sum(scene.geodesic_distance(a, b) for a, b in zip(ends[:-1], ends[1:]))
    assert walked > 1.2 * shortest


@pytest.mark.parametrize("house", [1, 3, 5])
def test_every_visited_goal_is_observed_on_arrival(house):
    """On arrival (the segment's last frame) the goal covers >= min_coverage of the view, rendered
    again at the visibility resolution, for every goal of traversals of several houses."""
    spec = SceneSpec(seed=house)
    scene = load_scene(spec)
    config = TraversalConfig(min_goals=6, max_goals=8, max_detours=1, look_around_prob=0.0)
    traversal = generate_traversal(scene, spec, np.random.default_rng(house), config, CameraConfig(width=96, height=72))
    sensor = RGBDCamera(CameraConfig(width=64, height=48))  # visibility_width=64 keeps the aspect ratio
    assert len(traversal.segments) >= 6
    for seg in traversal.segments:
        end = traversal.frames[seg.end_frame]
        semantic = sensor.observe(scene, np.array(end.position), yaw_from_quat(np.array(end.rotation)))["semantic"]
        coverage = np.mean(semantic == scene.object(seg.goal_object_id).semantic_id)
        assert seg.observed and coverage >= config.min_coverage, (seg, coverage)


def test_observing_poses_see_the_object():
    scene = load_scene(SPEC)
    sensor = RGBDCamera(CameraConfig(width=64, height=64))
    sofa = next(o for o in scene.objects if o.category == "sofa")
    poses = observing_poses(scene, sofa, sensor, 0.05)
    assert len(poses)
    for pose in poses:
        assert scene.navgrid.is_navigable(pose) and scene.navgrid.island_of(pose) == scene.navgrid.largest_island
        yaw = heading_to(pose, np.asarray(sofa.position))
        assert np.mean(sensor.observe(scene, pose, yaw)["semantic"] == sofa.semantic_id) >= 0.05
    mug = next(o for o in scene.objects if o.category in ("mug", "books", "bowl"))
    assert len(observing_poses(scene, mug, sensor, 0.05)) == 0  # too small for 5% of any view


def test_visibility_uses_five_percent_of_the_mask(traversal):
    scene = load_scene(SPEC)
    camera = RGBDCamera(CAMERA)
    for frame in traversal.frames[::25]:
        semantic = camera.observe(scene, np.array(frame.position), yaw_from_quat(np.array(frame.rotation)))["semantic"]
        counts = np.bincount(semantic.ravel(), minlength=1)
        expected = {
            scene.object_by_semantic_id(i).object_id
            for i in np.nonzero(counts >= 0.05 * semantic.size)[0]
            if scene.object_by_semantic_id(i) is not None
        }
        assert set(frame.visible) == expected
        assert all(v >= 0.05 for v in frame.visible.values())


def test_visible_objects_threshold():
    scene = load_scene(SPEC)
    obj = scene.objects[0]
    semantic = np.zeros((10, 10), np.int32)
    semantic[:, :1] = obj.semantic_id  # 10 %
    assert visible_objects(semantic, scene, 0.05) == {obj.object_id: 0.1}
    assert visible_objects(semantic, scene, 0.2) == {}


def test_episodic_bookkeeping_matches_frames(traversal):
    observations = traversal.observations
    assert observations == episodic_observations(traversal.frames, load_scene(SPEC))
    assert [o.order for o in observations] == list(range(len(observations)))
    assert [o.first_frame for o in observations] == sorted(o.first_frame for o in observations)
    for obs in observations:
        frames = [f for f in traversal.frames if obs.object_id in f.visible]
        assert obs.frequency == len(frames) and obs.frames == tuple(f.index for f in frames)
        assert obs.first_frame == frames[0].index and obs.last_frame == frames[-1].index
        assert obs.segments == tuple(sorted({f.segment for f in frames}))
    assert traversal.observation("no such object") is None


def test_traversal_is_deterministic_and_round_trips(traversal):
    again = generate_traversal(load_scene(SPEC), SPEC, np.random.default_rng(4), CONFIG, CAMERA)
    assert again == traversal
    assert from_json(traversal.to_json()) == traversal
    other = generate_traversal(load_scene(SPEC), SPEC, np.random.default_rng(5), CONFIG, CAMERA)
    assert other != traversal


def test_config_validation_and_too_few_objects():
    with pytest.raises(MemgymError, match="min_goals"):
        TraversalConfig(min_goals=0)
    with pytest.raises(MemgymError, match="min_coverage"):
        TraversalConfig(min_coverage=0.0)
    with pytest.raises(MemgymError, match="max_goal_attempts"):
        TraversalConfig(max_goal_attempts=0)
    scene = load_scene(SPEC)
    with pytest.raises(MemgymError, match="objects that can be observed"):
        generate_traversal(scene, SPEC, np.random.default_rng(0), TraversalConfig(min_goals=500, max_goals=500), CAMERA)


def test_pose_quaternions_are_yaw_rotations(traversal):
    for frame in traversal.frames[:20]:
        np.testing.assert_allclose(frame.rotation, quat_from_yaw(yaw_from_quat(np.array(frame.rotation))), atol=1e-5)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Digests of traversals and observing poses recorded with full-frame semantic renders and a follower
# that recomputed every step: the culled visibility casts and the memoised follower must give the
# same frames, visibility fractions, segments and observations, bit for bit. (Recorded again when the
# navigable cells came to keep the agent's radius at every point, and when visibility came to be
# counted at the stored, rounded poses, and when the grid's cells went from 5 to 2.5 cm; the
# full-render check above covers every frame.)
def test_visibility_is_what_a_full_render_of_the_stored_pose_shows(traversal):
    """The annotation counts the views a memory replaying the episode renders: the stored (rounded)
    pose, rendered whole by the camera, covers exactly the recorded objects with the recorded fractions."""
    scene, sensor = load_scene(SPEC), RGBDCamera(CAMERA)
    frames = traversal.frames
    positions = np.array([f.position for f in frames])
    yaws = np.array([yaw_from_quat(np.asarray(f.rotation)) for f in frames])
    semantic = sensor.render_batch(scene, positions, yaws)["semantic"]
    for frame, image in zip(frames, semantic):
        assert visible_objects(image, scene, CONFIG.min_coverage) == dict(frame.visible), frame.index


def test_traversal_matches_the_full_render_reference(traversal):
    assert len(traversal.frames) == 664
    assert _digest(traversal.to_json()) == "ff91880d72fb9248"


def test_default_config_traversal_matches_the_full_render_reference():
    """Default camera (256 px) and visibility width (64 px), as DialogMem's environment uses them."""
    spec = SceneSpec(seed=2)
    traversal = generate_traversal(load_scene(spec), spec, np.random.default_rng(7), TraversalConfig(6, 6))
    assert len(traversal.frames) == 516 and sum(len(f.visible) for f in traversal.frames) == 350
    assert _digest(traversal.to_json()) == "c086314241044efe"


def test_observing_poses_match_the_full_render_reference():
    scene = load_scene(SPEC)
    sensor = RGBDCamera(CameraConfig(width=64, height=64))
    poses = [observing_poses(scene, obj, sensor, 0.075) for obj in scene.objects]
    assert len(poses) == 42 and sum(map(len, poses)) == 262
    assert _digest(json.dumps([np.round(p, 4).tolist() for p in poses])) == "b485a7cebcf04891"
