"""memgym.testing's contracts run over every registered memory, scorer and env (the way a plugin
package runs them on its own), and each contract check shown to fail on a plugin that breaks it.

The DialogMem and AMemOps memories play their benchmark's smallest episodes (about 1-2 s each, the
first case of each benchmark also makes its two episodes); the VoxMem ones need the spoken test
dataset, and the envs play whole episodes twice: those cases are slow.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

import memgym  # noqa: F401  (registers the env ids)
from memgym.core.episode import Episode, TaskItem
from memgym.core.errors import ConfigError
from memgym.core.protocols import Memory, Reasoner, Scorer
from memgym.core.registry import ENVS, MEMORIES, SCORERS
from memgym.envs.registration import GYM_ENVS
from memgym.envs.two_phase import TwoPhaseEnv
from memgym.plugin_table import BUILTINS
from memgym.testing import (
    MemoryChecks,
    MemoryContract,
    ScorerCase,
    check_memory,
    check_scorer,
    check_two_phase_env,
    harness_for,
)
from memgym.testing.harness_dialogmem import ENV_CONFIG
from memgym.testing.harness_voxmem import VoxMemHarness

MEMORY_OVERRIDES: dict[str, tuple[str, ...]] = {"3dmem+linked": ("link.linker=controlled",)}
"""Eval overrides a memory cannot be built without (``3dmem+clip``'s CLIP model is built per test)."""


def _memory_case(name: str):
    slow = MEMORIES.locate(name)[0].startswith("memgym.memory.voxmem.") or name == "3dmem+clip"
    return pytest.param(name, marks=pytest.mark.slow) if slow else name


@pytest.fixture(scope="module")
def voxmem_harness(vox_dataset) -> VoxMemHarness:
    """VoxMem's harness on the suite's spoken test dataset (built once per session)."""
    return VoxMemHarness(dataset=vox_dataset)


VOXMEM_NAMES = {n for n in MEMORIES.names() if MEMORIES.locate(n)[0].startswith("memgym.memory.voxmem.")}


@pytest.mark.parametrize("name", [_memory_case(name) for name in MEMORIES.names()])
def test_every_registered_memory_keeps_the_memory_contract(name, request, tmp_path):
    harness = request.getfixturevalue("voxmem_harness") if name in VOXMEM_NAMES else None
    overrides = MEMORY_OVERRIDES.get(name, ())
    if name == "3dmem+clip":
        from tests.support.tiny_hf_models import build_tiny_clip

        overrides = (f"link.clip_model={build_tiny_clip(tmp_path / 'clip')}",)
    options = harness_for(MEMORIES.get(name)).options_with(name, overrides) if overrides else None
    check_memory(name, options, harness)


# --- the memory checks fail on memories that break them -------------------------------------------------


class Notes(Memory):
    """A plain DialogMem memory: the dialogue lines heard, handed back verbatim."""

    reads = frozenset({"dialogue"})

    def __init__(self) -> None:
        self.lines: list[str] = []

    def reset(self) -> None:
        self.lines = []

    def observe(self, observation) -> None:
        self.lines += [line for line in str(observation.get("text", "")).splitlines() if line]

    def retrieve(self, query) -> str:
        return "\n".join(self.lines)

    def state_dict(self) -> dict:
        return {"lines": list(self.lines)}

    def load_state_dict(self, state: dict) -> None:
        self.lines = list(state["lines"])


class Leaky(Notes):
    def reset(self) -> None:  # keeps the last episode's lines
        pass


class Noisy(Notes):
    def retrieve(self, query) -> str:
        return f"{super().retrieve(query)}\n{random.random()}"


class Forgetful(Notes):
    def state_dict(self) -> dict:
        return {"lines": []}


class Fragile(Notes):
    @classmethod
    def from_options(cls, options):
        return cls() if options.visual.num_frames else cls()


class Listing(Notes):
    def retrieve(self, query) -> list:
        return list(self.lines)


@pytest.fixture
def register():
    """Register memory classes under test names for one test."""
    added: list[str] = []

    def add(cls: type[Memory]) -> str:
        name = f"contract-{cls.__name__.lower()}"
        MEMORIES.register(name)(cls)
        added.append(name)
        return name

    yield add
    for name in added:
        del MEMORIES._entries[name]


def test_a_plain_memory_keeps_the_contract_through_the_mixin(register):
    class TestNotes(MemoryContract):
        memory_name = register(Notes)

    suite = TestNotes()
    for check in [m for m in dir(suite) if m.startswith("test_")]:
        getattr(suite, check)()


@pytest.mark.parametrize(
    "cls, check, message",
    [
        (Leaky, "check_isolates_episodes", "after playing another episode it played an episode differently"),
        (Noisy, "check_deterministic", "two memories from the same options played the same episode differently"),
        (Forgetful, "check_restores_state", r"load_state_dict\(state_dict\(\)\) answered differently"),
        (Fragile, "check_bad_options", "raised AttributeError: 'Unreadable' object has no attribute 'visual'"),
        (Listing, "check_forms_and_answers", "retrieve returned list: the agent reads a str"),
    ],
)
def test_each_memory_check_fails_on_a_memory_that_breaks_it(register, cls, check, message):
    checks = MemoryChecks(register(cls))
    with pytest.raises(AssertionError, match=rf"memory 'contract-{cls.__name__.lower()}' \(dialogmem\): .*{message}"):
        getattr(checks, check)()


def test_a_memory_of_no_benchmark_is_named(register):
    class Everything(Notes):
        reads = frozenset({"audio", "dialogue"})

    with pytest.raises(AssertionError, match="is taken by no benchmark's evaluation"):
        MemoryChecks(register(Everything))


def test_memories_refuse_options_they_cannot_read_with_one_config_error():
    from memgym.testing.memory_contract import Unreadable

    for name in ("3dmem", "gdn2", "cascaded"):
        with pytest.raises(ConfigError, match=f"memory '{name}' builds from"):
            MEMORIES.get(name).from_options(Unreadable())


# --- scorers -----------------------------------------------------------------------------------------------


class ReferenceJudge(Reasoner):
    """A judge stand-in: 5 when the candidate answer repeats the reference, else 1."""

    def generate(self, messages, *, max_new_tokens: int = 256) -> str:
        text = messages[-1].text_only()
        reference = re.search(r"Reference answer: (.*)", text).group(1).strip().lower()
        candidate = re.search(r"Candidate answer: (.*)", text).group(1).strip().lower()
        return "5" if candidate == reference else "1"


def _dialogmem_items(task: str) -> list[TaskItem]:
    first, second = harness_for(MEMORIES.get("dialogue")).episodes()
    return [item for episode in (first, second) for item in episode.items if item.task == task]


def _text_cases() -> list[ScorerCase]:
    return [ScorerCase(item, gold=item.answer, wrong="a purple elephant") for item in _dialogmem_items("qa")]


def _navigation() -> tuple[Scorer, list[ScorerCase]]:
    from memgym.scenes.spec import load_scene
    from memgym.tasks.dialogmem.navigation import NavigationScorer, goal_points

    episode = harness_for(MEMORIES.get("dialogue")).episodes()[0]
    items = [item for item in episode.items if item.task == "navigation"]
    wrong = np.full(3, np.nan, np.float32)  # the agent's answer when it cannot localise
    cases = [ScorerCase(item, gold=goal_points(item.answer)[0], wrong=wrong) for item in items]
    return NavigationScorer(load_scene(episode.traversal.scene)), cases


def _attribute_query() -> tuple[Scorer, list[ScorerCase]]:
    harness = harness_for(MEMORIES.get("gdn2"))
    classes = int(harness.env(None).action_space.nvec[0])
    items = [item for episode in harness.episodes() for item in episode.items]
    cases = [ScorerCase(i, np.full(2, int(i.answer)), np.full(2, (int(i.answer) + 1) % classes)) for i in items]
    return SCORERS.get("attribute_query")(), cases


def _voxmem(vox_dataset) -> tuple[Scorer, list[ScorerCase]]:
    from memgym.core.episode import Dataset
    from memgym.tasks.voxmem.scoring import load_answer_context

    items = [episode.items[0] for episode in Dataset.load(vox_dataset / "manifest.jsonl")]
    cases = [ScorerCase(item, gold=item.answer, wrong="a purple elephant") for item in items]
    return SCORERS.get("voxmem")(*load_answer_context(vox_dataset)), cases


SCORER_CASES: dict[str, Callable[..., tuple[Scorer, list[ScorerCase]]]] = {
    "exact_match": lambda: (SCORERS.get("exact_match")(), _text_cases()),
    "token_f1": lambda: (SCORERS.get("token_f1")(), _text_cases()),
    "llm_match": lambda: (SCORERS.get("llm_match")(ReferenceJudge(), "contract-judge"), _text_cases()),
    "navigation": _navigation,
    "attribute_query": _attribute_query,
    "voxmem": _voxmem,
}
"""Registered scorer -> (the scorer as its env builds it, cases of real items of that env)."""


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "voxmem" else n for n in SCORER_CASES]
)
def test_every_registered_scorer_keeps_the_scorer_contract(name, request):
    make = SCORER_CASES[name]
    scorer, cases = make(request.getfixturevalue("vox_dataset")) if name == "voxmem" else make()
    assert cases
    check_scorer(scorer, cases)


def test_every_builtin_scorer_has_contract_cases():
    assert set(SCORER_CASES) == set(BUILTINS["scorer"])


class Generous(Scorer):
    def score(self, item, prediction):
        return {"reward": 2.0}


class Moody(Scorer):
    def score(self, item, prediction):
        return {"reward": random.random()}


class Meddling(Scorer):
    def score(self, item, prediction):
        item.annotations["seen"] = True
        return {"reward": float(prediction == item.answer)}


class Backwards(Scorer):
    def score(self, item, prediction):
        return {"reward": float(prediction != item.answer)}


@pytest.mark.parametrize(
    "scorer, message",
    [
        (Generous(), "reward 2.0 is outside"),
        (Moody(), "scored differently the second time"),
        (Meddling(), "scoring changed the item"),
        (Backwards(), "the gold answer's reward 0.0 is below the wrong answer's 1.0"),
    ],
)
def test_each_scorer_check_fails_on_a_scorer_that_breaks_it(scorer, message):
    item = TaskItem(item_id="q0", task="qa", answer="red")
    with pytest.raises(AssertionError, match=message):
        check_scorer(scorer, [ScorerCase(item, gold="red", wrong="blue")])


# --- envs ----------------------------------------------------------------------------------------------------

ENV_KWARGS = {
    "memgym/DialogMem-v0": lambda request: {"config": ENV_CONFIG},
    "memgym/AMemOps-v0": lambda request: {"library": "tones"},
    "memgym/VoxMem-v0": lambda request: {"dataset": str(request.getfixturevalue("vox_dataset"))},
}
"""Gymnasium id -> small settings of its env (the contract plays whole episodes)."""


def _gym_id(name: str) -> str:
    """The Gymnasium id of the env registered as ``name`` (GYM_ENVS maps ids to it or to its class)."""
    return next(i for i, target in GYM_ENVS.items() if target in (name, ENVS.locate(name)[0]))


@pytest.mark.slow  # two whole episodes of each env
@pytest.mark.parametrize("name", ENVS.names())
def test_every_registered_env_keeps_the_env_contract(name, request):
    env_id = _gym_id(name)
    kwargs = ENV_KWARGS[env_id](request)
    # Gymnasium's check_env runs on every id in tests/envs/test_registered_envs.py
    check_two_phase_env(lambda: gymnasium.make(env_id, max_episode_steps=-1, **kwargs), gymnasium_checks=False)


class Counting(TwoPhaseEnv):
    """Formation shows three numbers, use asks for their sum."""

    observation_space = spaces.Dict({"number": spaces.Discrete(100)})
    action_space = spaces.Discrete(300)

    def _build_episode(self, rng, options):
        numbers = [int(n) for n in rng.integers(0, 100, size=3)]
        item = TaskItem(item_id="sum", task="sum", answer=sum(numbers))
        return Episode(episode_id=f"e{numbers}", benchmark="demo", items=(item,), annotations={"numbers": numbers})

    def _begin(self, episode):
        self.numbers = episode.annotations["numbers"]
        return len(self.numbers)

    def _formation_observation(self, step):
        return {"number": self.numbers[step]}

    def _use_observation(self, item, index):
        return {"number": 0}

    def _score(self, item, action):
        return {"reward": float(action == item.answer)}


class Unseeded(Counting):
    def _build_episode(self, rng, options):
        return super()._build_episode(np.random.default_rng(random.randrange(1 << 30)), options)


def test_a_two_phase_env_keeps_the_env_contract_and_an_unseeded_one_breaks_it():
    check_two_phase_env(Counting)
    with pytest.raises(AssertionError, match="Deterministic step observations are not equivalent"):
        check_two_phase_env(Unseeded)  # Gymnasium's check_env notices first
    with pytest.raises(AssertionError, match="env 'Unseeded': two envs reset with seed 0 played differently"):
        check_two_phase_env(Unseeded, gymnasium_checks=False)


def test_every_registered_env_has_contract_settings():
    assert set(ENV_KWARGS) == {_gym_id(name) for name in ENVS.names()}
