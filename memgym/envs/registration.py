"""Gymnasium ids of memgym's environments, registered on ``import memgym``.

Entry points are ``"module:Class"`` strings, so registering imports none of the heavy env
modules; ``gymnasium.make("memgym/AMemOps-v0")`` imports the one it needs. Each env class's
docstring is its manual (spaces, phases, rewards, a ``gymnasium.make`` example); the shared
two-phase shape is :class:`memgym.envs.two_phase.TwoPhaseEnv`. ``memgym list`` prints the ids.

>>> import gymnasium
>>> import memgym
>>> sorted(env_id for env_id in gymnasium.registry if env_id.startswith("memgym/"))
['memgym/AMemOps-v0', 'memgym/DialogMem-v0', 'memgym/VoxMem-v0']
>>> all(isinstance(gymnasium.spec(env_id).entry_point, str) for env_id in GYM_ENVS)
True
"""

from __future__ import annotations

import gymnasium

GYM_ENVS: dict[str, str] = {
    "memgym/DialogMem-v0": "memgym.envs.dialogmem_env:DialogMemEnv",
    "memgym/VoxMem-v0": "memgym.envs.voxmem_env:VoxMemEnv",
    "memgym/AMemOps-v0": "memgym.envs.audio_stream_env:AudioStreamEnv",
}
"""Gymnasium id -> ``module:Class`` entry point."""


def register_gym_envs() -> None:
    """Register every id in :data:`GYM_ENVS` with Gymnasium (idempotent)."""
    for env_id, entry_point in GYM_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)
