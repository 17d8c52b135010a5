"""A Stable-Baselines3 policy in the loop of ``memgym/AMemOps-v0``, rewarded by the env.

The same loop as docs/amemops_models.md ("A policy in the loop"): ``sb3_contrib.RecurrentPPO``
with ``MultiInputLstmPolicy`` on the env's Dict observations and ``MultiDiscrete([5, 5])``
answers, its sub-envs forked (``SubprocVecEnv(start_method="fork")``) after this process has run
torch on two threads. Short tone streams (128 frames = 4 formation steps, 2 initial and 2 absent
query proposals) make an episode cost a few steps.

Asserted: the trained policy beats random answers by 20 points and is at least as right as the best
fixed answer on held-out streams (it has learned the answer prior in full). It does not beat that
answer: the test's loop scored exactly the fixed answer's 63.7% on 40 held-out streams after 2,048
and after 4,096 env steps (remembering what was heard needs more RL than a slow test can afford;
docs/amemops_models.md, "A policy in the loop"). One seed is asserted because it is not a lucky draw:
with ``seed`` 0, 1 and 2 (env and policy), each on the default path and under
``ATEN_CPU_CAPABILITY=default``, the trained policy scored 63.5% on these 20 held-out streams, the best
fixed answer's share, against 20.6% for random answers (session 22, one thread; a seed costs 17-25 s).
"""

from __future__ import annotations

import collections

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


def _play(act, seeds) -> tuple[float, list[tuple[str, int]]]:
    """Accuracy over the queries of streams ``seeds`` answered by ``act(obs, start) -> action``, and
    each query's (asked attribute, answer class)."""
    env = _make_env()
    correct, asked = 0.0, []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        start, done = True, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(act(obs, start))
            start, done = False, terminated or truncated
            correct += reward
            if "score" in info:
                asked.append((info["score"]["attribute"], int(info["score"]["answer"])))
    env.close()
    assert len(asked) >= len(seeds)  # every stream asks something
    return correct / len(asked), asked


def best_constant(asked: list[tuple[str, int]]) -> float:
    """Accuracy of the best fixed (gain, pan) answer: per head, the most frequent answer to it."""
    heads = {attribute for attribute, _ in asked}
    return sum(max(collections.Counter(a for h, a in asked if h == head).values()) for head in heads) / len(asked)


@pytest.mark.slow
def test_recurrent_ppo_in_subprocess_envs_learns_the_best_constant_answer():
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
    trained, asked = _play(policy, HELD_OUT)
    random, _ = _play(lambda obs, start: rng.integers(0, 5, size=2), HELD_OUT)
    assert random < 0.35  # 1 in 5 classes is right, on average
    assert trained > random + 0.2
    # the policy has learned the answer prior in full: no fixed answer does better (at this budget it
    # does not beat it either: that needs memory, docs/amemops_models.md "A policy in the loop")
    assert trained >= best_constant(asked), (trained, best_constant(asked))
