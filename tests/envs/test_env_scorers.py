"""TwoPhaseEnv's scorers: chosen per task by registered name (``task_scorers``) or given as a
scorer or a factory; a name of another task's scorer or an unknown name is one clear error."""

from __future__ import annotations

import pytest
from gymnasium import spaces

from memgym.core.episode import Episode, TaskItem
from memgym.core.errors import ConfigError, MemgymError
from memgym.core.protocols import Scorer
from memgym.core.scoring import ScorerContext, build_scorer, judged_scorer, scorer_class, task_scorer_names
from memgym.envs.two_phase import TwoPhaseEnv


class AskEnv(TwoPhaseEnv):
    """No formation; use asks two text questions, scored by the env's ``qa`` scorer."""

    observation_space = spaces.Dict({"question": spaces.Text(32)})
    action_space = spaces.Text(32)

    def __init__(self, dataset: str = "", **scoring):
        super().__init__(**scoring)
        self.dataset = dataset

    def _build_episode(self, rng, options):
        items = (TaskItem(item_id="a", task="qa", prompt="colour?", answer="red mug"),
                 TaskItem(item_id="b", task="qa", prompt="room?", answer="kitchen"))  # fmt: skip
        return Episode(episode_id="e", benchmark="test", items=items)

    def _begin(self, episode):
        return 0

    def _formation_observation(self, step):
        return {"question": ""}

    def _use_observation(self, item, index):
        return {"question": item.prompt}

    def scorer_context(self):
        return ScorerContext(dataset_dir=self.dataset)


def answer_all(env: AskEnv, answers: list[str]) -> list[dict]:
    env.reset(seed=0)
    return [env.step(a)[4]["score"] for a in answers]


def test_a_registered_name_scores_each_task():
    assert answer_all(AskEnv(task_scorers={"qa": "token_f1"}), ["the red mug", "hall"]) == [
        {"token_f1": 1.0, "reward": 1.0},
        {"token_f1": 0.0, "reward": 0.0},
    ]
    assert answer_all(AskEnv(task_scorers={"qa": "exact_match"}), ["red", "Kitchen."])[1]["exact_match"] == 1.0


class Counting(Scorer):
    """Scores qa answers by length and records the contexts it was built with."""

    tasks = frozenset({"qa"})
    built: list[ScorerContext] = []

    def score(self, item, prediction):
        return {"chars": len(prediction), "reward": 0.5}


def _counting(context: ScorerContext) -> Counting:
    Counting.built.append(context)
    return Counting()


def test_a_given_scorer_or_factory_replaces_the_name_and_is_built_once_per_context():
    given = AskEnv(task_scorers={"qa": "token_f1"}, scorers={"qa": Counting()})
    assert answer_all(given, ["ab", "abc"]) == [{"chars": 2, "reward": 0.5}, {"chars": 3, "reward": 0.5}]
    Counting.built.clear()
    env = AskEnv(dataset="folder", scorers={"qa": _counting})
    for _ in range(3):
        answer_all(env, ["x", "y"])
    assert Counting.built == [ScorerContext(dataset_dir="folder")]  # one build for every episode of that folder
    env.dataset = "other"
    answer_all(env, ["x", "y"])
    assert Counting.built[-1] == ScorerContext(dataset_dir="other") and len(Counting.built) == 2


def test_unknown_names_and_other_tasks_scorers_are_one_line_errors():
    with pytest.raises(ConfigError) as unknown:
        AskEnv(task_scorers={"qa": "token_f"})
    message = str(unknown.value)
    assert "\n" not in message and message.startswith("task_scorers.qa: unknown scorer 'token_f'")
    assert "(did you mean 'token_f1'?)" in message and message.endswith("exact_match, llm_match, token_f1")
    with pytest.raises(ConfigError, match=r"task_scorers.qa: scorer 'voxmem' scores spoken_qa items, not qa"):
        AskEnv(task_scorers={"qa": "voxmem"})
    with pytest.raises(ConfigError, match=r"scores attribute_query items, not qa"):
        AskEnv(scorers={"qa": scorer_class("attribute_query", "attribute_query", "scorer")()})
    env = AskEnv(task_scorers={"navigation": "navigation"})
    env.reset(seed=0)
    with pytest.raises(MemgymError, match=r"no scorer for task 'qa'; set task_scorers.qa="):
        env.step("red")


def test_a_judged_scorer_needs_the_judge_it_is_given():
    assert scorer_class("llm_match", "qa", "qa_scorer").judged and not scorer_class("token_f1", "qa", "x").judged
    with pytest.raises(ConfigError, match="llm_match scorer needs a judge model"):
        build_scorer("llm_match", "qa", ScorerContext(), "task_scorers.qa")
    with pytest.raises(ConfigError, match="llm_match scorer needs a judge model"):
        judged_scorer("llm_match", None)(ScorerContext())
    assert task_scorer_names("spoken_qa") == ["voxmem"] and "attribute_query" in task_scorer_names("attribute_query")


def test_the_benchmark_envs_name_their_default_scorers():
    from memgym.envs.audio_stream_env import TASK_SCORERS
    from memgym.envs.dialogmem_env import DialogMemEnvConfig
    from memgym.envs.embodied_env import EmbodiedEnvConfig
    from memgym.envs.voxmem_env import VoxMemEnvConfig

    defaults = [DialogMemEnvConfig().task_scorers, EmbodiedEnvConfig().task_scorers, VoxMemEnvConfig().task_scorers]
    assert defaults + [TASK_SCORERS] == [
        {"qa": "token_f1"},
        {"qa": "exact_match"},
        {"spoken_qa": "voxmem"},
        {"attribute_query": "attribute_query"},
    ]
    for names in [*defaults, TASK_SCORERS]:
        for task, name in names.items():
            assert task in scorer_class(name, task, "task_scorers").tasks
