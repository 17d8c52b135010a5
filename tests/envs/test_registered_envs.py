"""Every Gymnasium id memgym registers must pass Gymnasium's own API checker, and Stable-Baselines3's
for every observation key of a type SB3 supports (Text keys are dropped, as the env docs show).

Envs are made through ``gymnasium.make`` (so the spec and render modes are checked too) with small
settings where the defaults would build a large episode.
"""

import ast
import subprocess
import sys
import warnings

import gymnasium
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import FilterObservation

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


SLOW_ENVS = {"memgym/VoxMem-v0"}
"""Ids whose check (every reset generates a spoken history) is left to 'make test'."""


@pytest.mark.parametrize(
    "env_id", [pytest.param(i, marks=pytest.mark.slow) if i in SLOW_ENVS else i for i in sorted(GYM_ENVS)]
)
def test_registered_env_passes_check_env(env_id):
    env = gymnasium.make(env_id, render_mode="rgb_array", **SMALL_KWARGS.get(env_id, {}))
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


SB3_OBSERVATION_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
"""Observation key types Stable-Baselines3's ``MultiInputPolicy`` family encodes."""


class CandidateAnswers(gymnasium.ActionWrapper):
    """A Text action space (SB3 has none) as ``Discrete(len(answers))``: the agent picks an answer."""

    def __init__(self, env: gymnasium.Env, answers: list[str]) -> None:
        super().__init__(env)
        self.answers = answers
        self.action_space = spaces.Discrete(len(answers))

    def action(self, action) -> str:
        return self.answers[int(action)]


@pytest.mark.parametrize("env_id", sorted(GYM_ENVS))
def test_registered_env_passes_sb3_check_env(env_id):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gymnasium.make(env_id, **SMALL_KWARGS.get(env_id, {}))
    fields = env.observation_space.spaces
    kept = [key for key, space in fields.items() if not isinstance(space, spaces.Text)]
    assert all(isinstance(fields[key], SB3_OBSERVATION_SPACES) for key in kept), fields
    # SB3 policies flatten each key from dimension 1 on: a 0-d Box crashes them on reset
    assert all(fields[key].shape for key in kept if isinstance(fields[key], spaces.Box)), fields
    if len(kept) < len(fields):
        env = FilterObservation(env, kept)
    if isinstance(env.action_space, spaces.Text):
        env = CandidateAnswers(env, ["", "I don't know."])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(env, warn=True)
    unsupported = [str(w.message) for w in caught if "not supported" in str(w.message)]
    assert not [message for message in unsupported if "observation" in message.lower()]
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
