"""Every registered Gymnasium id takes the same kinds of ``config``: its config dataclass, a nested
mapping of its keys, or a YAML file path; bad keys are one ConfigError naming the key (and file)."""

import gymnasium
import pytest
from gymnasium.envs.registration import load_env_creator

import memgym  # noqa: F401  (registers the ids)
from memgym.core.config import build_config, yaml_text
from memgym.core.errors import ConfigError
from memgym.envs.registration import GYM_ENVS

SMALL = {
    "memgym/DialogMem-v0": {
        "house_seed": 2,
        "camera": {"width": 32, "height": 24},
        "task_scorers": {"qa": "exact_match"},
    },
    "memgym/AMemOps-v0": {"library": {"kind": "tones"}, "distractors": [4], "offset_seconds": [2, 30]},
    "memgym/VoxMem-v0": {"budget": 4096, "max_text": 512},
}
"""Per id, keys that differ from the defaults (nested where the config nests)."""


def config_class(env_id: str) -> type:
    return load_env_creator(gymnasium.spec(env_id).entry_point).config_class


def test_every_registered_env_has_a_small_config():
    assert set(SMALL) == set(GYM_ENVS)


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_config_as_dataclass_mapping_or_yaml_file(env_id, tmp_path):
    cls = config_class(env_id)
    expected = build_config(cls, SMALL[env_id])
    assert expected != cls()
    path = tmp_path / "env.yaml"
    path.write_text(yaml_text(expected))
    for given in (expected, SMALL[env_id], path, str(path)):
        env = gymnasium.make(env_id, config=given)
        assert env.unwrapped.config == expected, given
        env.close()
    assert gymnasium.make(env_id).unwrapped.config == cls()


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_bad_config_is_one_error_naming_the_key(env_id, tmp_path):
    key = next(iter(SMALL[env_id]))
    with pytest.raises(ConfigError, match=f"unknown key '{key}x' \\(did you mean '{key}'.*; allowed keys: .*{key}"):
        gymnasium.make(env_id, config={f"{key}x": 1})
    path = tmp_path / "bad.yaml"
    path.write_text(f"{key}: [[1]]\n")
    with pytest.raises(ConfigError, match=f"bad.yaml: {key}"):
        gymnasium.make(env_id, config=path)
    with pytest.raises(ConfigError, match="expected a .* a mapping of its keys or a YAML file path, got int"):
        gymnasium.make(env_id, config=5)
    with pytest.raises(ConfigError, match="is a directory, expected a YAML config file"):
        gymnasium.make(env_id, config=tmp_path)


def test_voxmem_keys_as_keywords_apply_over_config():
    env = gymnasium.make("memgym/VoxMem-v0", config={"budget": 4096}, max_text=64)
    assert (env.unwrapped.config.budget, env.unwrapped.config.max_text) == (4096, 64)


def test_voxmem_keys_are_range_checked_in_code_too():
    from memgym.envs.voxmem_env import VoxMemEnvConfig

    with pytest.raises(ConfigError, match=r"VoxMemEnvConfig: 'max_text' = 0 is too small"):
        VoxMemEnvConfig(max_text=0)
    with pytest.raises(ConfigError, match=r"'budget' = 0 is too small"):
        gymnasium.make("memgym/VoxMem-v0", budget=0)
