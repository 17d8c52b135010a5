import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import memgym  # noqa: F401  (registers the gym ids)
from memgym.core.errors import ConfigError, MemgymError
from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.templates import HistoryCondition, build_history_stream
from memgym.envs.audio_stream_env import AudioStreamEnv


@pytest.fixture
def env(tones):
    return AudioStreamEnv(StreamConfig(distractors=(4,)), library=tones, render_mode="rgb_array")


def test_check_env(env):
    check_env(env, skip_render_check=False)


def test_two_phases_and_rewards(env):
    obs, info = env.reset(seed=4)
    assert info["phase"] == "formation" and obs["features"].shape == (32, 131)
    steps = 0
    while info["phase"] == "formation":
        obs, reward, terminated, truncated, info = env.step(env.formation_action())
        steps += 1
        assert reward == 0.0
    assert steps == 64
    stream = env.episode
    total, correct = 0, 0
    while not terminated:
        item = stream.items[env.item_index]
        assert obs["start_frame"].shape == (1,) and obs["start_frame"][0] == item.annotations["onset_frame"]
        assert obs["valid"].sum() == 12
        assert (obs["features"][:12, 128] == 1).all()
        answer = [item.answer, item.answer]
        wrong = (item.answer + 1) % 5
        action = answer if total % 2 == 0 else [wrong, wrong]
        obs, reward, terminated, truncated, info = env.step(np.array(action))
        assert reward == (1.0 if total % 2 == 0 else 0.0) and info["score"]["correct"] == (total % 2 == 0)
        correct += reward
        total += 1
    assert total == len(stream.items) and correct == (total + 1) // 2


def test_reset_deterministic_and_history_episode(env, tones):
    env.reset(seed=9)
    first = env.episode
    env.reset(seed=9)
    assert env.episode == first
    history = build_history_stream(0, tones, HistoryCondition(delay_s=120))
    obs, info = env.reset(options={"episode": history})
    assert env._formation_steps == 4096 // 32 and len(env.episode.items) == 1
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8


def test_foreign_library_stream_rejected(env):
    from memgym.datasets.sources.tones import ToneLibrary

    other = ToneLibrary(identities=61)
    stream = build_history_stream(0, other)
    with pytest.raises(MemgymError, match="was built from library"):
        env.reset(options={"episode": stream})


def test_symbolic_attribute_values_are_refused(tones):
    with pytest.raises(ConfigError, match=r"config.attribute_values=16: audio streams need 4 values"):
        AudioStreamEnv(StreamConfig(attribute_values=16), library=tones)


def test_registered_id():
    assert "memgym/AMemOps-v0" in gymnasium.registry
    env = gymnasium.make("memgym/AMemOps-v0", library="tones", config=StreamConfig(distractors=(4,)))
    obs, info = env.reset(seed=0)
    assert info["phase"] == "formation"
    env.close()


def test_vector_env(tones):
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: AudioStreamEnv(StreamConfig(distractors=(4,)), library=tones) for _ in range(2)]
    )
    obs, info = envs.reset(seed=[1, 2])
    assert obs["features"].shape == (2, 32, 131)
    assert not np.array_equal(obs["features"][0], obs["features"][1])
    envs.close()
