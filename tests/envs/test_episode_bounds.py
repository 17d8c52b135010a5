"""The registered ``max_episode_steps`` are sound: each is its env's ``episode_step_bound()`` at
the defaults, the bounds hold on generated episodes, and a loop that hits a ``TimeLimit`` says so
instead of dropping items."""

from __future__ import annotations

from typing import Any

import gymnasium
import pytest

import memgym  # noqa: F401  (registers the ids)
from memgym.agents.agent import Agent, run_episode
from memgym.backends.asr import ASRConfig
from memgym.core.errors import MemgymError
from memgym.core.protocols import Memory
from memgym.datasets.dialogmem.defaults import default_house
from memgym.datasets.traversal import TraversalConfig, max_traversal_frames
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.envs.audio_stream_env import AudioStreamEnv
from memgym.envs.dialogmem_env import DialogMemEnv
from memgym.envs.registration import GYM_ENVS, MAX_EPISODE_STEPS
from memgym.envs.voxmem_env import VoxMemEnv
from memgym.scenes.procedural import HouseConfig, max_house_objects
from memgym.scenes.spec import SceneSpec, load_scene

TONES = {"frames": 256, "n_initial": 2, "n_update": 2, "n_interference": 1, "n_absent": 1, "distractors": [1]}
SMALL_DIALOGMEM = {
    "house": {"min_rooms": 3, "max_rooms": 3},
    "traversal": {"min_goals": 2, "max_goals": 2},
    "camera": {"width": 16, "height": 12},
}


def _steps(env: gymnasium.Env, seed: int) -> int:
    """Steps of one episode played with formation actions (terminated or truncated)."""
    env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.unwrapped.formation_action())
        steps, done = steps + 1, terminated or truncated
    return steps


def test_registered_limits_are_the_default_bounds():
    defaults = {
        "memgym/DialogMem-v0": DialogMemEnv(),
        "memgym/VoxMem-v0": VoxMemEnv(),
        "memgym/AMemOps-v0": AudioStreamEnv(library="tones"),  # the bound does not read the library
    }
    assert set(defaults) == set(GYM_ENVS) == set(MAX_EPISODE_STEPS)
    for env_id, env in defaults.items():
        assert gymnasium.spec(env_id).max_episode_steps == env.episode_step_bound() == MAX_EPISODE_STEPS[env_id]
    made = gymnasium.make("memgym/AMemOps-v0", library="tones")
    assert made.spec.max_episode_steps == 90 and isinstance(made, gymnasium.wrappers.TimeLimit)


def test_amemops_streams_stay_within_their_bound():
    env = AudioStreamEnv(TONES, library="tones", block_frames=32)
    bound = env.episode_step_bound()
    assert bound == 8 + 6
    lengths = [_steps(env, seed) for seed in range(6)]
    assert max(lengths) <= bound and min(lengths) >= 8 + 1  # every stream asks something


def test_dialogmem_bound_holds_on_generated_episodes():
    env = gymnasium.make("memgym/DialogMem-v0", config=SMALL_DIALOGMEM)
    base = env.unwrapped
    objects_bound = max_house_objects(base.config.house)
    for seed in range(2):
        steps = _steps(env, seed)
        assert steps <= base.episode_step_bound()
        assert len(base.episode.traversal.frames) <= max_traversal_frames(base.config.traversal)
        assert len(base.scene.objects) <= objects_bound
    assert max_traversal_frames(TraversalConfig()) == 33_009


@pytest.mark.parametrize("seed", [0, 1])
def test_house_object_bound_holds_on_the_default_houses(seed):
    config: HouseConfig = default_house()
    scene = load_scene(SceneSpec(backend="procedural", seed=seed, options={"house": config.__dict__}))
    assert 0 < len(scene.objects) <= max_house_objects(config) == 819


def test_voxmem_bound_of_a_dataset_is_its_longest_episode(tmp_path):
    config = VoxMemConfig(items=1, cells=("sound/IE",), budgets=("3k",), asr=ASRConfig(kind="none"), out=str(tmp_path))
    env = VoxMemEnv(dataset=VoxMemBuilder(config).build())
    assert env.episode_step_bound() == _steps(env, 0) <= 3072 + 1
    assert VoxMemEnv(budget=2048).episode_step_bound() == 2049


class _Nothing(Memory):
    """Remembers nothing (the loop is under test, not the memory)."""

    def reset(self) -> None:
        pass

    def observe(self, observation: Any) -> None:
        pass

    def retrieve(self, query: Any) -> Any:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> Any:
        return None


class _AnswersNone(Agent):
    def answer(self, observation: Any, info: dict[str, Any]) -> Any:
        return [4, 4]


def test_a_truncated_episode_is_an_error_not_missing_items():
    config = {**TONES, "library": {"kind": "tones"}}
    full = run_episode(gymnasium.make("memgym/AMemOps-v0", config=config), _AnswersNone(_Nothing()), seed=0)
    assert len(full.scores) == len(full.answers) > 1
    short = gymnasium.make("memgym/AMemOps-v0", config=config, max_episode_steps=full.formation_steps + 1)
    with pytest.raises(MemgymError, match=r"truncated with \d+ item\(s\) unanswered.*max_episode_steps=-1"):
        run_episode(short, _AnswersNone(_Nothing()), seed=0)
