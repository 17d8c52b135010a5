"""Every Gymnasium id memgym registers must pass Gymnasium's own API checker.

Envs are made through ``gymnasium.make`` (so the spec and render modes are checked too) with small
settings where the defaults would build a large episode.
"""

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import memgym  # noqa: F401  (registers the ids)
from memgym.envs.registration import GYM_ENVS

SMALL_KWARGS = {
    "memgym/DialogMem-v0": {
        "config": {
            "house_seed": 2,
            "house": {"min_rooms": 3, "max_rooms": 4},
            "traversal": {"min_goals": 2, "max_goals": 2},
            "camera": {"width": 32, "height": 24},
        }
    },
    "memgym/AMemOps-v0": {"library": "tones"},
}


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_registered_env_passes_check_env(env_id):
    env = gymnasium.make(env_id, render_mode="rgb_array", **SMALL_KWARGS.get(env_id, {}))
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


def test_ids_are_registered_on_import():
    for env_id in GYM_ENVS:
        assert env_id in gymnasium.registry
