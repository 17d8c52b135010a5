import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import memgym  # noqa: F401  (registers the gym ids)
from memgym.core.episode import TaskItem
from memgym.core.errors import MemgymError
from memgym.envs.embodied_env import EmbodiedEnv
from memgym.tasks.dialogmem.geodesic import object_goal_points

CONFIG = {
    "house_seed": 1,
    "camera": {"width": 32, "height": 32},
    "traversal": {"min_goals": 2, "max_goals": 2, "visibility_width": 0},
    "semantic": True,
}


@pytest.fixture(scope="module")
def env():
    env = EmbodiedEnv(CONFIG, render_mode="rgb_array")
    env.reset(seed=3)
    return env


def test_check_env():
    check_env(EmbodiedEnv(CONFIG, render_mode="rgb_array"), skip_render_check=False)


def test_registered_with_gymnasium():
    env = gymnasium.make("memgym/DialogMem-v0", config=CONFIG, render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    assert info["phase"] == "formation" and obs["rgb"].shape == (32, 32, 3)
    env.close()


def test_formation_streams_the_traversal_then_use_scores(env):
    obs, info = env.reset(seed=3)
    episode = env.episode
    frames = episode.traversal.frames
    positions = [obs["position"]]
    steps = 1
    while info["phase"] == "formation":
        assert info["frame"] == steps - 1 and obs["text"] == ""
        obs, reward, terminated, truncated, info = env.step(env.formation_action())
        assert reward == 0.0 and not truncated
        if info["phase"] == "formation":
            positions.append(obs["position"])
            steps += 1
    assert steps == len(frames)
    np.testing.assert_allclose(np.array(positions), np.array([f.position for f in frames]), atol=1e-5)
    # use phase: answer each item correctly
    assert episode.items and {i.task for i in episode.items} <= {"navigation", "qa"}
    rewards = []
    while True:
        item = episode.items[env.item_index]
        assert obs["text"] == item.prompt
        if item.task == "navigation":
            target = env.scene.object(item.answer["object_id"])
            action = {"text": "", "position": np.array(target.position, np.float32)}
        else:
            action = {"text": item.answer, "position": np.zeros(3, np.float32)}
        obs, reward, terminated, _, info = env.step(action)
        rewards.append(reward)
        if terminated:
            break
    assert rewards == [1.0] * len(episode.items)


def test_navigation_scoring_uses_geodesic_success(env):
    env.reset(seed=3)
    target = env.scene.objects[0]
    item = TaskItem(item_id="n", task="navigation", prompt="Go to it.", answer={"object_id": target.object_id})
    goal = object_goal_points(env.scene, target)[0]
    steps = [goal + 0.3 * np.array([np.cos(a), 0.0, np.sin(a)]) for a in np.linspace(0, 2 * np.pi, 8, endpoint=False)]
    near = env._score_item(item, {"position": next(p for p in steps if env.scene.navgrid.line_of_sight(goal, p))})
    assert near["distance_to_goal"] <= 0.3 + 1e-6 and near["reward"] == float(near["distance_to_goal"] <= 1.0)
    assert env._score_item(item, {"position": np.asarray(target.position)})["reward"] == 1.0
    far = env._score_item(item, {"position": np.array([500.0, 0.0, 500.0])})
    assert far == {"success": 0.0, "distance_to_goal": float("inf"), "status": "start_off_navmesh", "reward": 0.0}
    with pytest.raises(MemgymError, match="no scorer for task 'count'"):
        env._score_item(TaskItem(item_id="c", task="count"), {"text": "3"})


def test_episodes_are_deterministic_under_seed():
    a, b = EmbodiedEnv(CONFIG), EmbodiedEnv(CONFIG)
    a.reset(seed=5)
    b.reset(seed=5)
    assert a.episode == b.episode
    a.reset(seed=6)
    assert a.episode != b.episode


def test_render_draws_map_with_trajectory_and_pose(env):
    env.reset(seed=3)
    first = env.render()
    for _ in range(30):
        env.step(env.formation_action())
    later = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    assert first.shape == later.shape and first.shape[0] > 100
    red = lambda im: ((im[..., 0] > 200) & (im[..., 1] < 60) & (im[..., 2] < 60)).sum()  # noqa: E731
    assert red(first) > 0  # the pose marker
    assert (later != first).any()  # the trajectory grew


def test_rejects_foreign_episodes_and_bad_config():
    from memgym.core.episode import Episode

    env = EmbodiedEnv(CONFIG)
    with pytest.raises(MemgymError, match="EmbodiedEpisode"):
        env.reset(options={"episode": Episode(episode_id="x", benchmark="b")})
    with pytest.raises(MemgymError, match="unknown key 'camera.fov'"):
        EmbodiedEnv({"camera": {"fov": 3}})


def test_formation_frames_equal_re_rendered_traversal(env):
    from memgym.datasets.traversal import iter_frame_observations

    obs, info = env.reset(seed=3)
    frames = iter_frame_observations(env.episode.traversal, env.scene)
    for _ in range(5):
        frame, images = next(frames)
        assert info["frame"] == frame.index
        np.testing.assert_array_equal(obs["rgb"], images["rgb"])
        np.testing.assert_array_equal(obs["depth"], np.minimum(images["depth"], 10.0))
        obs, _, _, _, info = env.step(env.formation_action())


def test_works_in_a_vector_env():
    small = {**CONFIG, "camera": {"width": 16, "height": 16}, "traversal": {"min_goals": 1, "max_goals": 1}}
    envs = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("memgym/DialogMem-v0", config=small)] * 2)
    obs, info = envs.reset(seed=0)
    assert obs["rgb"].shape == (2, 16, 16, 3) and list(info["phase"]) == ["formation", "formation"]
    obs, reward, *_ = envs.step(envs.action_space.sample())
    assert reward.tolist() == [0.0, 0.0]
    envs.close()


def test_episode_with_poses_off_the_floor_is_rejected(env):
    import dataclasses

    env.reset(seed=3)
    episode = env.episode
    frames = list(episode.traversal.frames)
    frames[0] = dataclasses.replace(frames[0], position=(90.0, 0.0, 90.0))
    bad = dataclasses.replace(episode, traversal=dataclasses.replace(episode.traversal, frames=tuple(frames)))
    with pytest.raises(MemgymError, match="frame 0 at .* is off the navigable floor"):
        env.reset(options={"episode": bad})


def test_batched_and_cached_frames_equal_single_renders(env):
    """Formation frames rendered 16 to a cast, one to a cast, and again from the process-wide frame
    cache by another env, are all the frames of rendering each pose alone."""
    from memgym.scenes.poses import yaw_from_quat
    from memgym.sensors.frame_cache import shared_frame_cache

    env.reset(seed=3)
    frames = env.episode.traversal.frames[:20]
    cache = shared_frame_cache()

    def play(config):
        player = EmbodiedEnv(config)
        observations = [player.reset(seed=3, options={"episode": env.episode})[0]]
        observations += [player.step(player.formation_action())[0] for _ in frames[1:]]
        return observations

    played = [play({**CONFIG, "render_batch": 1}), play(CONFIG)]
    misses = cache.misses
    played.append(play(CONFIG))
    assert cache.misses == misses  # the last env's frames all come from the cache
    for step, frame in enumerate(frames):
        expected = env.camera.observe(env.scene, np.asarray(frame.position), yaw_from_quat(np.asarray(frame.rotation)))
        for observations in played:
            for key in ("rgb", "depth", "semantic"):
                np.testing.assert_array_equal(observations[step][key], expected[key])
            assert observations[step]["rgb"].flags.writeable  # a fresh array, not the cached one
