"""Every Gymnasium id memgym registers must pass Gymnasium's own API checker, and Stable-Baselines3's
through :func:`memgym.wrappers.sb3_ready`.

Envs are made through ``gymnasium.make`` (so the spec and render modes are checked too) with small
settings where the defaults would build a large episode: VoxMem plays the suite's tiny spoken
dataset (``vox_dataset``) rather than generating a history on every reset with a new seed
(``tests/envs/test_voxmem_env.py`` covers that path).
"""

import ast
import subprocess
import sys
import warnings

import gymnasium
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import memgym  # noqa: F401  (registers the ids)
from memgym.envs.registration import GYM_ENVS
from memgym.wrappers import sb3_ready

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


def small_kwargs(env_id: str, request: pytest.FixtureRequest) -> dict:
    """:data:`SMALL_KWARGS` of ``env_id``; VoxMem's names the session's tiny spoken dataset."""
    if env_id == "memgym/VoxMem-v0":
        return {"dataset": str(request.getfixturevalue("vox_dataset"))}
    return SMALL_KWARGS.get(env_id, {})


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_registered_env_passes_check_env(env_id, request):
    env = gymnasium.make(env_id, render_mode="rgb_array", **small_kwargs(env_id, request))
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


SB3_OBSERVATION_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
"""Observation key types Stable-Baselines3's ``MultiInputPolicy`` family encodes."""


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_registered_env_passes_sb3_check_env_through_the_wrappers(env_id, request):
    """memgym.wrappers.sb3_ready: Text keys as token ids, VoxMem's audio as features, Text answers
    as choices, DialogMem's Dict answer as one Box; no key or action SB3 does not support."""
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = sb3_ready(gymnasium.make(env_id, **small_kwargs(env_id, request)), answers=["", "I don't know."])
    fields = env.observation_space.spaces
    assert all(isinstance(space, SB3_OBSERVATION_SPACES) for space in fields.values()), fields
    # SB3 policies flatten each key from dimension 1 on: a 0-d Box crashes them on reset
    assert all(space.shape for space in fields.values() if isinstance(space, spaces.Box)), fields
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(env, warn=True)
    unsupported = [str(w.message) for w in caught if "not supported" in str(w.message)]
    assert not unsupported, unsupported
    env.close()


def test_ids_are_registered_on_import():
    for env_id in GYM_ENVS:
        assert env_id in gymnasium.registry


RESET_IMPORTS = """
import sys
import gymnasium
import memgym
gymnasium.make("memgym/DialogMem-v0", config={config!r}).reset(seed=0)
print(sorted(sys.modules))
"""


def test_dialogmem_reset_imports_only_what_it_needs():
    script = RESET_IMPORTS.format(config=SMALL_KWARGS["memgym/DialogMem-v0"]["config"])
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    imported = set(ast.literal_eval(result.stdout.strip().splitlines()[-1]))
    assert "memgym.scenes.procedural" in imported  # the scene it renders, looked up by name
    unrelated = {"torch", "transformers", "librosa", "soundfile", "memgym.memory", "memgym.pipelines", "memgym.agents"}
    assert not {m for m in imported if m.split(".")[0] in unrelated or ".".join(m.split(".")[:2]) in unrelated}
    assert not {m for m in imported if "voxmem" in m or "amemops" in m}
