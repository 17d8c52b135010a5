"""TwoPhaseEnv's contract, checked on a small recall env defined here."""

import dataclasses

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from memgym.agents.agent import Agent, run_episode
from memgym.core.episode import Episode, TaskItem
from memgym.core.protocols import Memory
from memgym.core.records import record
from memgym.envs.two_phase import TwoPhaseEnv


@record("test.recall_episode")
@dataclasses.dataclass(frozen=True, kw_only=True)
class RecallEpisode(Episode):
    values: tuple[int, ...] = ()


class RecallEnv(TwoPhaseEnv):
    """Formation shows (slot, value) pairs; use asks for a slot's latest value."""

    def __init__(self, render_mode=None, slots: int = 4, length: int = 6):
        super().__init__(render_mode)
        self.slots, self.length = slots, length
        self.observation_space = spaces.Dict(
            {"slot": spaces.Discrete(slots), "value": spaces.Discrete(10), "query": spaces.Discrete(2)}
        )
        self.action_space = spaces.Discrete(10)

    def _build_episode(self, rng, options):
        values = tuple(int(v) for v in rng.integers(0, 10, size=self.length))
        items = tuple(
            TaskItem(item_id=f"q{s}", task="recall", answer=self._latest(values, s), annotations={"slot": s})
            for s in range(min(self.slots, self.length))
        )
        return RecallEpisode(episode_id="generated", benchmark="test", values=values, items=items)

    def _latest(self, values, slot):
        return [v for i, v in enumerate(values) if i % self.slots == slot][-1]

    def _begin(self, episode):
        return len(episode.values)

    def _formation_observation(self, step):
        return {"slot": step % self.slots, "value": self.episode.values[step], "query": 0}

    def _use_observation(self, item, index):
        return {"slot": item.annotations["slot"], "value": 0, "query": 1}

    def _score(self, item, action):
        correct = float(int(action) == item.answer)
        return {"accuracy": correct, "reward": correct}

    def render(self):
        image = np.zeros((8, 8, 3), dtype=np.uint8)
        image[:, : self.step_index % 8] = 255
        return image


class SlotMemory(Memory):
    def __init__(self):
        self.table = {}

    def reset(self):
        self.table = {}

    def observe(self, observation):
        self.table[int(observation["slot"])] = int(observation["value"])

    def retrieve(self, query):
        return self.table.get(int(query["slot"]), 0)

    def state_dict(self):
        return {"table": dict(self.table)}

    def load_state_dict(self, state):
        self.table = dict(state["table"])


class ForgetfulMemory(SlotMemory):
    def observe(self, observation):
        pass


class LookupAgent(Agent):
    def answer(self, observation, info):
        return self.memory.retrieve(observation)


def test_check_env_passes():
    check_env(RecallEnv(render_mode="rgb_array"), skip_render_check=False)


def test_phases_rewards_and_termination():
    env = RecallEnv()
    obs, info = env.reset(seed=3)
    assert info["phase"] == "formation" and info["step"] == 0
    phases = [info["phase"]]
    for _ in range(5):
        obs, reward, terminated, truncated, info = env.step(env.formation_action())
        phases.append(info["phase"])
        assert reward == 0.0 and not terminated
    assert phases == ["formation"] * 6
    obs, reward, terminated, _, info = env.step(0)
    assert info["phase"] == "use" and info["item_id"] == "q0" and obs["query"] == 1
    answers = [env.episode.items[i].answer for i in range(4)]
    for i, answer in enumerate(answers):
        obs, reward, terminated, _, info = env.step(answer)
        assert reward == 1.0 and info["score"]["accuracy"] == 1.0
        assert terminated == (i == 3)
    with pytest.raises(RuntimeError, match="terminated"):
        env.step(0)


def test_same_seed_same_episode_and_given_episode_is_played():
    env = RecallEnv()
    env.reset(seed=7)
    first = env.episode
    env.reset(seed=7)
    assert env.episode == first
    custom = RecallEpisode(episode_id="mine", benchmark="test", values=(1, 2), items=())
    _, info = env.reset(options={"episode": custom})
    assert info["episode_id"] == "mine"


def test_score_items_skips_the_others_and_rewind_use_changes_them():
    """``options["score_items"]`` / ``rewind_use(score_items)``: only those items are scored (and
    asked by the loop); the others score ``skipped`` whatever the action."""
    env, agent = RecallEnv(), LookupAgent(SlotMemory())
    result = run_episode(env, agent, seed=3, options={"score_items": ["q1", "q3"]})
    assert [a.answered for a in result.answers] == [False, True, False, True]
    assert [s.get("skipped", False) for s in result.scores] == [True, False, True, False]
    assert result.total_reward == 2.0  # the memory recalls both asked slots
    observation, info = env.rewind_use(score_items=["q0"])
    assert info["scored"] and info["item_id"] == "q0"
    _, _, _, _, info = env.step(env.episode.items[0].answer)
    assert info["score"] == {"accuracy": 1.0, "reward": 1.0} and not info["scored"]
    observation, info = env.rewind_use()
    assert "scored" not in info and env.scores == []


def test_agent_memory_swap_changes_results():
    env = RecallEnv()
    agent = LookupAgent(SlotMemory())
    good = run_episode(env, agent, seed=1)
    assert good.total_reward == 4.0 and good.formation_steps == 6
    old = agent.swap_memory(ForgetfulMemory())
    assert isinstance(old, SlotMemory)
    bad = run_episode(env, agent, seed=1)
    assert bad.episode_id == good.episode_id
    assert bad.total_reward < good.total_reward
    with pytest.raises(TypeError, match="Memory"):
        agent.memory = object()


def test_vector_env_steps_through_both_phases():
    vec = gymnasium.vector.SyncVectorEnv([lambda: RecallEnv() for _ in range(2)])
    obs, infos = vec.reset(seed=[0, 1])
    assert obs["slot"].shape == (2,)
    for _ in range(6):
        obs, rewards, terminated, truncated, infos = vec.step(np.zeros(2, dtype=np.int64))
    assert list(infos["phase"]) == ["use", "use"]


class BindingMemory(SlotMemory):
    """Records the protocol hooks the loop calls."""

    reads = frozenset({"truth"})

    def __init__(self):
        super().__init__()
        self.bound = []

    def bind_episode(self, episode, **context):
        self.bound.append((episode.episode_id, context))


class FailingAgent(LookupAgent):
    def answer(self, observation, info):
        if info["item_id"] == "q1":
            raise ValueError("no answer for q1")
        return super().answer(observation, info)


def test_memory_protocol_hooks_default_to_nothing():
    memory = SlotMemory.from_options(object())
    assert isinstance(memory, SlotMemory) and SlotMemory.reads == frozenset()
    assert memory.bind_episode("episode", asker="u0") is None and memory.bind_reasoner(object()) is None
    assert memory.snapshots() is None


def test_the_loop_binds_records_answer_errors_and_measures_the_formed_memory():
    env, memory = RecallEnv(), BindingMemory()
    seen = []
    result = run_episode(
        env,
        FailingAgent(memory),
        seed=1,
        context={"asker": "u0"},
        answer_errors=(ValueError,),
        after_formation=lambda agent: seen.append(dict(agent.memory.table)),
    )
    assert memory.bound == [("generated", {"asker": "u0"})]  # after reset, before formation
    assert seen == [memory.table] and len(seen[0]) == 4  # the whole formation, before the first answer
    assert [a.item_id for a in result.answers] == ["q0", "q1", "q2", "q3"]
    failed = result.answers[1]
    assert (
        failed.error == "no answer for q1"
        and failed.action == 0
        and failed.score["accuracy"] == float(env.episode.items[1].answer == 0)
    )
    assert all(a.error is None and a.score["accuracy"] == 1.0 for i, a in enumerate(result.answers) if i != 1)
    with pytest.raises(ValueError, match="q1"):  # not recorded unless asked
        run_episode(env, FailingAgent(SlotMemory()), seed=1)
