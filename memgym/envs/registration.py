"""Gymnasium ids of memgym's environments, registered on ``import memgym``.

Entry points are strings, so registering imports none of the heavy env modules;
``gymnasium.make("memgym/AMemOps-v0")`` imports the one it needs.
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
