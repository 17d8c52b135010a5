"""A Stable-Baselines3 policy in the loop of ``memgym/AMemOps-v0``, rewarded by the env.

The same loop as docs/amemops_models.md ("A policy in the loop"): ``sb3_contrib.RecurrentPPO``
with ``MultiInputLstmPolicy`` on the env's Dict observations and ``MultiDiscrete([5, 5])``
answers, its sub-envs forked (``SubprocVecEnv(start_method="fork")``) after this process has run
torch on two threads. Short tone streams (128 frames = 4 formation steps, 2 initial and 2 absent
query proposals) make an episode cost a few steps.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import memgym  # noqa: F401  (registers the gym ids)

STREAM = {
    "frames": 128,
    "n_initial": 2,
    "n_update": 0,
    "n_interference": 0,
    "n_absent": 2,
    "distractors": [0],
    "library": {"kind": "tones"},
}
HELD_OUT = range(10_000, 10_020)
"""Stream indices of the evaluation (``reset(seed=i)`` plays stream ``i``; training draws its
streams from the env's RNG over 2**31 indices)."""


def _make_env() -> gymnasium.Env:
    return gymnasium.make("memgym/AMemOps-v0", config=STREAM, seed=0, indexed_streams=True)


def _accuracy(act, seeds) -> float:
    """Fraction of the queries of streams ``seeds`` answered right by ``act(obs, start) -> action``."""
    env = _make_env()
    correct, queries = 0.0, 0
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        start, done = True, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(act(obs, start))
            start, done = False, terminated or truncated
            correct += reward
            queries += "score" in info
    env.close()
    assert queries >= len(seeds)  # every stream asks something
    return correct / queries


@pytest.mark.slow
def test_recurrent_ppo_in_subprocess_envs_beats_a_random_policy():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.vec_env import SubprocVecEnv

    torch.set_num_threads(2)  # the workers fork after torch has started its thread pool
    torch.ones(256, 256) @ torch.ones(256, 256)
    torch.set_num_threads(1)
    envs = SubprocVecEnv([_make_env, _make_env], start_method="fork")
    envs.seed(0)
    model = sb3_contrib.RecurrentPPO(
        "MultiInputLstmPolicy",
        envs,
        n_steps=64,
        batch_size=64,
        n_epochs=4,
        learning_rate=3e-3,
        gamma=0.0,  # every reward answers the step's own query
        policy_kwargs={"lstm_hidden_size": 32, "net_arch": [32]},
        seed=0,
        device="cpu",
    )
    try:
        model.learn(2048)
    finally:
        envs.close()
    state = None

    def policy(obs, start):
        nonlocal state
        action, state = model.predict(
            obs, state=None if start else state, episode_start=np.array([start]), deterministic=True
        )
        return action

    rng = np.random.default_rng(0)
    trained = _accuracy(policy, HELD_OUT)
    random = _accuracy(lambda obs, start: rng.integers(0, 5, size=2), HELD_OUT)
    assert random < 0.35  # 1 in 5 classes is right, on average
    assert trained > random + 0.2
