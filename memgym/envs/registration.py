"""Gymnasium ids of memgym's environments, registered on ``import memgym``.

Each id names an env of the env registry (:data:`memgym.core.registry.ENVS`, ``memgym list
envs``), whose ``"module:Class"`` is the id's entry point, so registering imports none of the
heavy env modules; ``gymnasium.make("memgym/AMemOps-v0")`` imports the one it needs. Each env class's
docstring is its manual (spaces, phases, rewards, a ``gymnasium.make`` example); the shared
two-phase shape is :class:`memgym.envs.two_phase.TwoPhaseEnv`. ``memgym list`` prints the ids.

>>> import gymnasium
>>> import memgym
>>> sorted(env_id for env_id in gymnasium.registry if env_id.startswith("memgym/"))
['memgym/AMemOps-v0', 'memgym/DialogMem-v0', 'memgym/VoxMem-v0']
>>> all(isinstance(gymnasium.spec(env_id).entry_point, str) for env_id in GYM_ENVS)
True

Each id's ``max_episode_steps`` (:data:`MAX_EPISODE_STEPS`, the ``TimeLimit`` ``gymnasium.make``
adds) is its env's ``episode_step_bound()`` at the default configuration: an upper bound on the
steps of every episode it generates, derived from the generator's limits (the env docstrings
say how), so the limit never cuts a generated episode short:

>>> gymnasium.spec("memgym/AMemOps-v0").max_episode_steps
90

With a larger configuration, or stored episodes that may be longer, pass
``max_episode_steps=-1`` (no limit) or the env's own ``episode_step_bound()`` to ``gymnasium.make``.
"""

from __future__ import annotations

import gymnasium

from memgym.core.registry import ENVS

GYM_ENVS: dict[str, str] = {
    "memgym/DialogMem-v0": "dialogmem",
    "memgym/VoxMem-v0": "voxmem",
    "memgym/AMemOps-v0": "amemops",
}
"""Gymnasium id -> its env's name in :data:`~memgym.core.registry.ENVS`."""
MAX_EPISODE_STEPS: dict[str, int] = {
    "memgym/DialogMem-v0": 36_285,  # 33,009 traversal frames + 4 items x 819 house objects
    "memgym/VoxMem-v0": 4_097,  # a 4,096-token history of >= 1 token per turn, then 1 question
    "memgym/AMemOps-v0": 90,  # 2,048 frames / 32 per block + 26 query proposals
}
"""Gymnasium id -> registered ``max_episode_steps`` (the env's ``episode_step_bound()`` at its
defaults; ``tests/envs/test_episode_bounds.py`` recomputes them)."""


def register_gym_envs() -> None:
    """Register every id in :data:`GYM_ENVS` with Gymnasium (idempotent), its entry point the
    ``"module:Class"`` the env registry locates for its name (declared by :mod:`memgym.plugin_table`)."""
    for env_id, name in GYM_ENVS.items():
        if env_id not in gymnasium.registry:
            entry_point = ENVS.locate(name)[0]
            gymnasium.register(id=env_id, entry_point=entry_point, max_episode_steps=MAX_EPISODE_STEPS[env_id])
