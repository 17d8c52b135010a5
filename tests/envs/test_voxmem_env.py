"""VoxMemEnv: Gymnasium contract, registration, formation/use phases, scoring."""

from __future__ import annotations

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import memgym  # noqa: F401  (registers the gymnasium ids)
from memgym.backends.asr import ASRConfig
from memgym.core.errors import MemgymError
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.envs.voxmem_env import VoxMemEnv


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("voxenv")
    config = VoxMemConfig(items=2, budgets=("4k",), out=str(out), asr=ASRConfig(kind="none"))  # keep both items
    return VoxMemBuilder(config).build()


def test_check_env_through_gymnasium_make(dataset):
    env = gymnasium.make("memgym/VoxMem-v0", dataset=str(dataset))
    check_env(env.unwrapped, skip_render_check=False)
    assert env.unwrapped.render().shape == (128, 256, 3)


def test_phases_and_scoring(dataset):
    env = VoxMemEnv(dataset=dataset)
    obs, info = env.reset(seed=3)
    episode = env.episode
    user_turns = sum(t.role == "user" for s in episode.sessions for t in s.turns)
    heard = obs["role"] == 0
    while info["phase"] == "formation":
        obs, reward, terminated, _, info = env.step("ignored")
        assert reward == 0.0 and not terminated
        heard += info["phase"] == "formation" and obs["role"] == 0
    assert heard == user_turns and obs["role"] == 2 and obs["text"] == episode.items[0].prompt
    _, reward, terminated, _, info = env.step("certainly not the answer")
    assert reward == 0.0 and terminated and info["score"]["correct"] == 0.0


def test_reward_is_the_voxmem_verdict(dataset):
    """The gold answer phrased as a hedged sentence scores 1; a bare refusal scores 1 only on AR items."""
    env = VoxMemEnv(dataset=dataset)
    for seed in range(4):
        _, info = env.reset(seed=seed)
        while info["phase"] == "formation":
            _, _, _, _, info = env.step("")
        item = env.episode.items[0]
        refusal = item.answer == "unanswerable"
        reply = "I can't tell from our conversations." if refusal else f"I'm not sure, but I think {item.answer}."
        _, reward, _, _, info = env.step(reply)
        assert reward == 1.0 and info["score"]["refused"] == refusal


def test_missing_dataset_is_a_clear_error(tmp_path):
    with pytest.raises(MemgymError, match="no manifest.jsonl"):
        VoxMemEnv(dataset=tmp_path)


@pytest.mark.slow
def test_env_generates_an_episode_without_a_dataset():
    env = VoxMemEnv(budget=4096)
    obs, info = env.reset(seed=1)
    assert info["phase"] == "formation" and env.episode.budget == 4096


def test_runs_in_a_vector_env(dataset):
    envs = gymnasium.vector.SyncVectorEnv([lambda: VoxMemEnv(dataset=dataset) for _ in range(2)])
    obs, info = envs.reset(seed=0)
    assert list(info["phase"]) == ["formation", "formation"]
    assert [a.shape for a in obs["audio"]] == [(-(-int(n) // 160), 160) for n in obs["audio_length"][:, 0]]
    obs, reward, *_ = envs.step(("", ""))
    assert reward.tolist() == [0.0, 0.0]
    envs.close()


def test_audio_is_sized_by_the_turn(dataset):
    """Each observation holds its turn's samples in 10 ms rows (not the longest turn's 480,000),
    and the memories read back exactly the dataset's waveform."""
    from memgym.datasets.voxmem.audio_files import read_turn_audio
    from memgym.memory.voxmem.history import turn_from_observation

    env = VoxMemEnv(dataset=dataset)
    obs, info = env.reset(seed=0)
    turns = [t for s in env.episode.sessions for t in s.turns]
    for turn in turns:
        length = int(obs["audio_length"][0])
        assert obs["audio"].shape == (-(-length // 160), 160) and obs["audio"].dtype == "float32"
        assert env.observation_space["audio"].contains(obs["audio"])
        if turn.role == "user":
            expected = read_turn_audio(dataset / turn.audio)[: env.max_samples].clip(-1.0, 1.0)
            assert length == expected.size and (turn_from_observation(obs).audio == expected).all()
        else:
            assert length == 0 and obs["audio"].shape == (0, 160)
        obs, _, _, _, info = env.step("")
    assert info["phase"] == "use"
