"""Every Gymnasium id memgym registers must pass Gymnasium's own API checker."""

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import memgym  # noqa: F401  (registers the ids)
from memgym.envs.registration import GYM_ENVS


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_registered_env_passes_check_env(env_id):
    env = gymnasium.make(env_id, render_mode="rgb_array")
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


def test_ids_are_registered_on_import():
    for env_id in GYM_ENVS:
        assert env_id in gymnasium.registry
