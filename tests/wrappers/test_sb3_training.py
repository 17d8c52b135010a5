"""A short ``sb3_contrib.RecurrentPPO`` run on each registered env through :func:`memgym.wrappers.sb3_ready`:
training completes, and the trained policy plays a whole episode with valid actions (every item
answered and scored). Small on purpose (a few hundred steps, tiny networks); the learning claim
on AMemOps is ``tests/agents/test_sb3_loop.py``'s."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium
import numpy as np
import pytest

import memgym  # noqa: F401  (registers the ids)
from memgym.backends.asr import ASRConfig
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.wrappers import sb3_ready

DIALOGMEM = {
    "house_seed": 2,
    "house": {"min_rooms": 3, "max_rooms": 3},
    "traversal": {"min_goals": 2, "max_goals": 2},
    "camera": {"width": 16, "height": 12},
}
TONES = {"frames": 128, "n_initial": 2, "n_update": 0, "n_interference": 0, "n_absent": 2, "distractors": [0]}


def _train_and_play(make_env: Callable[[], gymnasium.Env], policy: str, steps: int) -> gymnasium.Env:
    """Train RecurrentPPO for ``steps`` steps on ``make_env()``, then play one episode of a fresh
    copy with the deterministic policy; returns that env (its episode played to the end)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    model = sb3_contrib.RecurrentPPO(
        policy,
        make_env(),
        n_steps=64,
        batch_size=64,
        n_epochs=2,
        policy_kwargs={"lstm_hidden_size": 16, "net_arch": [16]},
        seed=0,
        device="cpu",
    )
    model.learn(steps)
    env = make_env()
    obs, info = env.reset(seed=1)
    state, start, done = None, True, False
    while not done:
        action, state = model.predict(obs, state=state, episode_start=np.array([start]), deterministic=True)
        assert env.action_space.contains(action), action
        obs, _, terminated, truncated, info = env.step(action)
        start, done = False, terminated or truncated
    assert terminated and not truncated
    base = env.unwrapped
    assert len(base.scores) == len(base.episode.items) > 0 and all("reward" in s for s in base.scores)
    return env


@pytest.mark.slow
def test_recurrent_ppo_runs_on_dialogmem():
    def make():
        return sb3_ready(gymnasium.make("memgym/DialogMem-v0", config=DIALOGMEM), ["yes", "no"], flatten=True)

    _train_and_play(make, "MlpLstmPolicy", 256)


@pytest.mark.slow
def test_recurrent_ppo_runs_on_voxmem(tmp_path):
    config = VoxMemConfig(items=2, cells=("sound/IE",), budgets=("3k",), asr=ASRConfig(kind="none"), out=str(tmp_path))
    folder = VoxMemBuilder(config).build()

    def make():
        return sb3_ready(gymnasium.make("memgym/VoxMem-v0", dataset=str(folder)), ["yes", "no", "I can't tell."])

    _train_and_play(make, "MultiInputLstmPolicy", 256)


@pytest.mark.slow
def test_recurrent_ppo_runs_on_amemops():
    def make():
        env = gymnasium.make("memgym/AMemOps-v0", config={**TONES, "library": {"kind": "tones"}}, seed=0)
        return sb3_ready(env, flatten=True)

    env = _train_and_play(make, "MlpLstmPolicy", 256)
    assert env.observation_space.shape == (32 * 131 + 32 + 1,)
