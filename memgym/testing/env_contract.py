"""The env contract: Gymnasium's API checker plus what the two phases promise
(:class:`~memgym.envs.two_phase.TwoPhaseEnv`'s manual). An env must:

1. pass :func:`gymnasium.utils.env_checker.check_env` (spaces, seeding, render);
2. **reset** into formation (or straight into use for an episode without formation steps) with
   ``info`` holding ``phase``, ``step`` 0 and ``episode_id``;
3. **form**: formation steps reward 0, neither terminate nor truncate, count ``info["step"]`` up,
   stay in the observation space, and ignore the action (any action gives the observations the
   canonical :meth:`~memgym.envs.two_phase.TwoPhaseEnv.formation_action` gives);
4. **use**: each use step's ``info`` names the ``item_id`` and ``task`` it asks; answering it
   returns ``info["score"]`` whose ``"reward"`` is the step's reward; the episode terminates right
   after its last item, and a further ``step`` raises;
5. **be deterministic by seed**: two envs reset with the same seed play the same episode into the
   same observations, rewards and infos;
6. **rewind**: :meth:`~memgym.envs.two_phase.TwoPhaseEnv.rewind_use` shows the first use item again;
7. **bound its steps**: ``episode_step_bound()`` (when not None) is no smaller than an episode's steps.

:func:`check_two_phase_env` runs them on envs from a factory (the suite runs it over every
registered env); :class:`EnvContract` is the mixin form.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium

from memgym.testing.compare import difference

EnvFactory = Callable[[], gymnasium.Env]
"""Makes a fresh env (e.g. ``lambda: gymnasium.make("memgym/AMemOps-v0", library="tones")``)."""


def check_two_phase_env(make_env: EnvFactory, *, seed: int = 0, gymnasium_checks: bool = True) -> None:
    """Run every check of the env contract on envs made by ``make_env``.

    Args:
        seed: the seed of the episodes played.
        gymnasium_checks: also run Gymnasium's ``check_env`` (check 1).

    Raises:
        AssertionError: the first check it fails.
    """
    env = make_env()
    name = getattr(env.unwrapped, "registered_name", type(env.unwrapped).__name__)
    try:
        if gymnasium_checks:
            from gymnasium.utils.env_checker import check_env

            check_env(env.unwrapped, skip_render_check=True)
        first = _play(env, seed, sample_formation=False, name=name)
        other = make_env()
        try:
            second = _play(other, seed, sample_formation=True, name=name)
        finally:
            other.close()
        found = difference(first, second)
        if found is not None:
            raise AssertionError(
                f"env '{name}': two envs reset with seed {seed} played differently (the second sent sampled "
                f"formation actions, which must be ignored), {found}"
            )
    finally:
        env.close()


def _play(env: gymnasium.Env, seed: int, *, sample_formation: bool, name: str) -> list[Any]:
    """Play one episode (formation actions: canonical or sampled; use answers: the formation
    action), checking each step; returns every (observation, reward, flags, info) in order."""

    def expect(condition: Any, problem: str) -> None:
        if not condition:
            raise AssertionError(f"env '{name}': {problem}")

    base = env.unwrapped
    observation, info = env.reset(seed=seed)
    expect(info.get("phase") in ("formation", "use"), f"reset's info['phase'] is {info.get('phase')!r}")
    expect(
        info.get("step") == 0 and isinstance(info.get("episode_id"), str),
        f"reset's info lacks step 0 / episode_id: {info}",
    )
    trace: list[Any] = [(copy.deepcopy(observation), dict(info))]
    env.action_space.seed(seed)
    steps = 0
    while info["phase"] == "formation":
        expect(env.observation_space.contains(observation), f"formation step {steps}: observation outside the space")
        action = env.action_space.sample() if sample_formation else base.formation_action()
        observation, reward, terminated, truncated, info = env.step(action)
        steps += 1
        expect(reward == 0 and not truncated, f"formation step {steps}: reward {reward}, truncated {truncated}")
        expect(
            info["phase"] == "use" or info["step"] == steps, f"formation step {steps}: info['step'] is {info['step']}"
        )
        trace.append((copy.deepcopy(observation), reward, terminated, truncated, dict(info)))
    items = len(base.episode.items)
    first_use = copy.deepcopy(observation)
    answered, terminated = 0, items == 0
    while not terminated:
        expect(info.get("item_id") and info.get("task"), f"use step {answered}: info lacks item_id / task: {info}")
        expect(env.observation_space.contains(observation), f"use step {answered}: observation outside the space")
        observation, reward, terminated, truncated, info = env.step(base.formation_action())
        answered += 1
        score = info.get("score")
        expect(isinstance(score, dict) and float(score.get("reward", float("nan"))) == reward,
               f"use step {answered}: info['score'] {score} does not hold the step's reward {reward}")  # fmt: skip
        expect(
            not truncated and (terminated == (answered == items)),
            f"use step {answered} of {items}: terminated {terminated}",
        )
        trace.append((copy.deepcopy(observation), reward, terminated, truncated, dict(info)))
    try:
        env.step(base.formation_action())
    except RuntimeError:
        pass
    else:
        expect(False, "step after the episode terminated did not raise")
    bound = base.episode_step_bound()
    expect(bound is None or bound >= steps + items, f"episode_step_bound() {bound} < the {steps + items} steps played")
    if items:
        again, _ = base.rewind_use()
        found = difference(again, first_use)
        expect(found is None, f"rewind_use() did not show the first use item again, {found}")
    return trace


class EnvContract:
    """The env contract as a test class to mix in: implement :meth:`make_env`::

    from memgym.testing import EnvContract

    class TestDigits(EnvContract):
        def make_env(self):
            return gymnasium.make("demo/Digits-v0")
    """

    seed: int = 0

    def make_env(self) -> gymnasium.Env:
        """A fresh env under test (small settings: the contract plays whole episodes)."""
        raise NotImplementedError

    def test_env_contract(self) -> None:
        check_two_phase_env(self.make_env, seed=self.seed)
