"""DialogMemEnv: check_env, dialogue in formation text, navigation and QA scoring in use."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from memgym.agents.agent import run_episode
from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.backends.errors import ReasonerError
from memgym.core.protocols import Scorer
from memgym.envs.dialogmem_env import DialogMemEnv
from memgym.memory.embodied.dialogue import DialogueMemory
from memgym.pipelines.structured_reasoner import StructuredReasoner

SMALL = {
    "house_seed": 2,
    "house": {"min_rooms": 3, "max_rooms": 4},
    "traversal": {"min_goals": 2, "max_goals": 2},
    "camera": {"width": 32, "height": 24},
    "execute_navigation": True,
}


@pytest.fixture(scope="module")
def env():
    env = DialogMemEnv(SMALL, render_mode="rgb_array")
    env.reset(seed=0)
    return env


def test_check_env():
    check_env(DialogMemEnv(SMALL, render_mode="rgb_array"), skip_render_check=False)


def test_formation_text_carries_each_turn_at_its_frame(env):
    episode = env.episode
    assert episode.dialogue, "a generated episode has dialogue"
    observation, info = env.reset(options={"episode": episode})
    heard = {}
    while info["phase"] == "formation":
        if observation["text"]:
            heard[info["frame"]] = observation["text"]
        observation, _, _, _, info = env.step(env.formation_action())
    for turn in episode.dialogue:
        assert f"{turn.spec.speaker}: {turn.text}" in heard[turn.spec.step].splitlines()
    assert len(heard) == len({t.spec.step for t in episode.dialogue})
    assert observation["text"] == episode.items[0].prompt


def oracle_action(item):
    if item.task == "navigation":
        return {"text": "", "position": np.asarray(item.answer["position"], np.float32)}
    return {"text": item.answer, "position": np.zeros(3, np.float32)}


def play(env, episode, answer, **options):
    observation, info = env.reset(options={"episode": episode, **options})
    while info["phase"] == "formation":
        observation, _, _, _, info = env.step(env.formation_action())
    scores, terminated = [], False
    for item in episode.items:
        observation, reward, terminated, _, info = env.step(answer(item))
        scores.append(info["score"])
    assert terminated
    return scores


def test_oracle_answers_score_full_marks(env):
    episode = env.episode
    for item, score in zip(episode.items, play(env, episode, oracle_action)):
        if item.task == "navigation":
            assert score["geodesic_success"] == 1.0 and score["execution_success"] == 1.0
            assert 0.0 < score["spl"] <= 1.0
        else:
            assert score["token_f1"] == 1.0


def test_missing_locations_fail_navigation(env):
    episode = env.episode
    nowhere = {"text": "unknown", "position": np.full(3, np.nan, np.float32)}
    for item, score in zip(episode.items, play(env, episode, lambda item: nowhere)):
        if item.task == "navigation":
            assert score["geodesic_success"] == 0.0 and score["spl"] == 0.0 and score["distance_to_goal"] is None


def test_scorer_failures_are_recorded_and_only_pending_items_are_scored():
    class FailingJudge(Scorer):
        def score(self, item, prediction):
            raise ReasonerError("judge timed out")

    env = DialogMemEnv(SMALL, scorers={"qa": FailingJudge()})
    env.reset(seed=0)
    episode = env.episode
    first_qa = next(i for i in episode.items if i.task == "qa")
    scores = play(env, episode, oracle_action, score_items=[first_qa.item_id])
    for item, score in zip(episode.items, scores):
        if item.item_id == first_qa.item_id:
            assert score == {"error": "judge timed out", "reward": 0.0}
        else:
            assert score == {"skipped": True, "reward": 0.0}


def test_dialogue_memory_with_structured_reasoner_runs_the_loop(env):
    agent = ReasonerAgent(DialogueMemory(), StructuredReasoner())
    result = run_episode(env, agent, episode=env.episode)
    assert len(result.scores) == len(env.episode.items)
    assert agent.memory.lines == [f"{t.spec.speaker}: {t.text}" for t in env.episode.dialogue]
    navigation = [s for s, i in zip(result.scores, env.episode.items) if i.task == "navigation"]
    assert all(s["geodesic_success"] == 0.0 for s in navigation)  # dialogue stores no poses


def test_plain_embodied_episodes_are_scored_against_the_object_location(env):
    from memgym.datasets.embodied import EmbodiedEpisode, default_items

    items = default_items(env.scene, env.episode.traversal, np.random.default_rng(0), num_navigation=2, num_qa=1)
    plain = EmbodiedEpisode(
        episode_id="plain", benchmark="embodied", items=tuple(items), traversal=env.episode.traversal
    )

    def answer(item):
        if item.task == "navigation":
            target = env.scene.object(item.answer["object_id"])
            return {"text": "", "position": np.asarray(target.position, np.float32)}
        return {"text": str(item.answer), "position": np.zeros(3, np.float32)}

    for item, score in zip(plain.items, play(env, plain, answer)):
        assert score["reward"] == 1.0, (item, score)


def test_runs_in_a_vector_env():
    import gymnasium

    import memgym  # noqa: F401  (registers the ids)

    small = {k: v for k, v in SMALL.items() if k != "execute_navigation"}
    envs = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("memgym/DialogMem-v0", config=small)] * 2)
    observations, info = envs.reset(seed=[0, 1])
    assert list(info["phase"]) == ["formation", "formation"]
    assert all(text for text in observations["text"])  # the first frame carries the first instruction
    observations, rewards, _, _, info = envs.step(envs.action_space.sample())
    assert observations["rgb"].shape == (2, 24, 32, 3) and list(rewards) == [0.0, 0.0]
    envs.close()


def test_rollouts_toward_another_island_end_as_close_as_the_agent_gets():
    from memgym.scenes.locomotion import AgentState
    from memgym.scenes.simple import box_room

    env = DialogMemEnv(SMALL)
    env.scene = box_room(8.0, 4.0, inner_walls=[((4.0, 1.25, 2.0), (0.1, 2.5, 4.0))])  # two closed rooms
    env._start = AgentState(np.array([1.0, 0.0, 2.0]), 0.0)
    path = env.execute(np.array([4.3, 0.0, 2.0]))  # snaps into the other room: out of reach
    wall_side = 4.0 - 0.05 - env.scene.agent.radius
    assert len(path) and path[-1][0] < 4.0 and np.hypot(path[-1][0] - wall_side, path[-1][2] - 2.0) < 0.3
    assert len(env.execute(np.array([30.0, 0.0, 2.0]))) == 0  # off the grid: no rollout


def test_generated_episodes_default_to_the_datasets_houses_and_items():
    """An agent stepping the env meets the houses and items `memgym generate dialogmem` builds
    (6-9 rooms with real-house clutter, unique cues), not the uncluttered houses where the category
    alone finds most targets."""
    from memgym.envs.dialogmem_env import DialogMemEnvConfig
    from memgym.pipelines.dialogmem.generation import DialogMemGenerateConfig

    env_config, dataset_config = DialogMemEnvConfig(), DialogMemGenerateConfig()
    assert env_config.house == dataset_config.house and env_config.construction == dataset_config.construction
    assert (env_config.house.min_rooms, env_config.house.max_rooms, env_config.house.clutter) == (6, 9, "hm3d_v2")
    small = DialogMemEnv({**SMALL, "house": {"min_rooms": 3, "max_rooms": 4}}).config
    assert small.house.clutter == "hm3d_v2" and small.construction.unique_cues  # overrides keep the rest
