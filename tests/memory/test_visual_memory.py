"""Every visual memory: state round trip and swap mid-run on an agent, and a DialogMem episode
with the offline structured reasoner."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.errors import ConfigError
from memgym.core.registry import MEMORIES
from memgym.envs.dialogmem_env import DialogMemEnv
from memgym.pipelines.structured_reasoner import StructuredReasoner
from memgym.scenes.spec import load_scene
from tests.support.box_scene import TABLE_MEMORY_OPTIONS, table_memory

SMALL = {
    "house_seed": 2,
    "house": {"min_rooms": 3, "max_rooms": 4},
    "traversal": {"min_goals": 3, "max_goals": 3},
    "camera": {"width": 64, "height": 48},
    "semantic": True,
}
NAMES = ("frames", "frames+dialogue", "conceptgraph", "conceptgraph+dialogue", "3dmem", "3dmem+dialogue")


@pytest.fixture(scope="module")
def played():
    """name -> (memory, per-item scores, actions) for one generated episode."""
    env = DialogMemEnv(SMALL)
    env.reset(seed=0)
    episode = env.episode
    out = {}
    for name in NAMES:
        agent = ReasonerAgent(
            MEMORIES.get(name)(perception="exact"), StructuredReasoner()
        )  # memory logic on exact input
        observation, info = env.reset(options={"episode": episode})
        agent.reset()
        agent.memory.bind_episode(episode)
        while info["phase"] == "formation":
            agent.act(observation, info)
            observation, _, _, _, info = env.step(env.formation_action())
        scores, actions = [], []
        for item in episode.items:
            action = agent.answer(observation, info)
            observation, _, _, _, info = env.step(action)
            scores.append(info["score"])
            actions.append((item, action, agent.last_reply))
        out[name] = (agent.memory, scores, actions)
    return episode, out


def navigation(actions):
    return [(item, action, reply) for item, action, reply in actions if item.task == "navigation"]


@pytest.mark.parametrize("name", NAMES)
def test_every_item_gets_an_answer_and_a_score(played, name):
    episode, out = played
    memory, scores, actions = out[name]
    assert memory.frame_count == len(episode.traversal.frames)
    assert len(scores) == len(episode.items) and all("error" not in s for s in scores)
    chosen = [a for a in navigation(actions) if a[2].startswith("OBJECT ")]
    assert chosen, "the structured reasoner picks an entry for some instructions"
    for _, action, _ in chosen:
        assert np.all(np.isfinite(action["position"]))


def test_frames_navigate_to_observation_poses(played):
    episode, out = played
    poses = np.array([f.position for f in episode.traversal.frames])
    for _, action, reply in navigation(out["frames"][2]):
        if reply.startswith("OBJECT "):
            assert np.min(np.linalg.norm(poses - action["position"], axis=1)) < 1e-5


def object_success(scene, predicted, object_id) -> float:
    """The paper's rule: within 1 m geodesic of the object's location, both snapped to the floor."""
    nav = scene.navgrid
    if not np.all(np.isfinite(predicted)):
        return 0.0
    a, b = nav.snap(np.asarray(predicted, float)), nav.snap(np.asarray(scene.object(object_id).position))
    if a is None or b is None:
        return 0.0
    return float(nav.geodesic_distance(a, b) <= 1.0)


def test_structured_memories_localise_better_than_frames(played):
    episode, out = played
    scene = load_scene(episode.traversal.scene)

    def success(name):
        rows = navigation(out[name][2])
        return np.mean([object_success(scene, a["position"], item.answer["object_id"]) for item, a, _ in rows])

    assert success("conceptgraph") > success("frames")
    assert success("3dmem") > success("frames")


def test_appended_dialogue_lifts_qa(played):
    _, out = played

    def qa(name):
        return np.mean([s["reward"] for s, (item, _, _) in zip(out[name][1], out[name][2]) if item.task == "qa"])

    for name in ("frames", "conceptgraph", "3dmem"):
        assert qa(f"{name}+dialogue") > qa(name)


OPTIONS = TABLE_MEMORY_OPTIONS
OBS = {"text": "", "position": np.zeros(3, np.float32)}


build = table_memory


@pytest.mark.parametrize(
    "name", ["frames", "frames+dialogue", "conceptgraph", "conceptgraph+dialogue", "3dmem", "3dmem+dialogue"]
)
def test_round_trip_and_swap_mid_run(box_views, name):
    reasoner = StructuredReasoner()
    whole = build(name, box_views)
    agent = ReasonerAgent(build(name, box_views, 4), reasoner)
    restored = MEMORIES.get(name)(**OPTIONS)
    restored.load_state_dict(pickle.loads(pickle.dumps(agent.memory.state_dict())))
    previous = agent.swap_memory(restored)
    for view in box_views[4:]:
        agent.act(view, {"phase": "formation"})
    assert previous.frame_count == 4 and restored.frame_count == len(box_views)
    whole.bind_reasoner(reasoner)
    for prompt in ("Go to the mug.", "Which crate did you see first?"):
        ours = agent.answer({**OBS, "text": prompt}, {"task": "qa"})
        assert ours["text"] == ReasonerAgent(whole, reasoner).answer({**OBS, "text": prompt}, {"task": "qa"})["text"]
        assert restored.retrieve(prompt).text == whole.retrieve(prompt).text
    clone = pickle.loads(pickle.dumps(whole))
    assert clone.reasoner is None
    clone.bind_reasoner(reasoner)
    assert clone.retrieve("Go to the mug.").structured_text == whole.retrieve("Go to the mug.").structured_text
    with pytest.raises(ConfigError, match="options"):
        MEMORIES.get(name)(voxel=0.1).load_state_dict(whole.state_dict())
