"""ReasonerAgent: evidence to chat, replies to actions (text, or an entry's location)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.backends.structured import Fact, format_fact
from memgym.core.errors import ConfigError
from memgym.core.protocols import Memory, Reasoner
from memgym.pipelines.structured_reasoner import StructuredReasoner


@dataclasses.dataclass
class FactEvidence:
    text: str
    locations: dict


class FactMemory(Memory):
    """Returns fixed fact lines and entry locations (a stand-in for an object-level memory)."""

    def __init__(self):
        facts = [Fact("m1", "mug", "perceptual", "color", "red"), Fact("m2", "mug", "perceptual", "color", "blue")]
        self.evidence = FactEvidence("\n".join(map(format_fact, facts)), {"m1": (1.0, 0.0, 2.0), "m2": (3.0, 0.0, 4.0)})

    def reset(self):
        pass

    def observe(self, observation):
        pass

    def retrieve(self, query):
        return self.evidence

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


OBS = {"text": "", "position": np.zeros(3, np.float32)}


def test_navigation_answers_the_location_of_the_chosen_entry():
    agent = ReasonerAgent(FactMemory(), StructuredReasoner())
    action = agent.answer({**OBS, "text": "Go to the blue mug."}, {"task": "navigation"})
    assert agent.last_reply == "OBJECT m2"
    np.testing.assert_allclose(action["position"], [3.0, 0.0, 4.0])
    action = agent.answer({**OBS, "text": "Go to the mug."}, {"task": "navigation"})  # ambiguous
    assert np.isnan(action["position"]).all()


def test_questions_are_answered_in_text_with_the_prompt_last():
    agent = ReasonerAgent(FactMemory(), StructuredReasoner())
    messages = agent.messages("Which room is the red mug in?", FactMemory().evidence, "qa")
    assert messages[-1].text_only().splitlines()[-1] == "Question: Which room is the red mug in?"
    action = agent.answer({**OBS, "text": "What color is the mug?"}, {"task": "qa"})
    assert action["text"] == "unknown"


def test_the_env_states_the_task_and_the_wording_never_decides_it():
    agent = ReasonerAgent(FactMemory(), StructuredReasoner())
    action = agent.answer({**OBS, "text": "Where is the blue mug?"}, {"task": "navigation"})
    assert agent.last_reply == "OBJECT m2"
    np.testing.assert_allclose(action["position"], [3.0, 0.0, 4.0])
    assert (
        agent.messages("Go to the blue mug.", FactMemory().evidence, "navigation")[-1]
        .text_only()
        .endswith("\nInstruction: Go to the blue mug.")
    )
    action = agent.answer({**OBS, "text": "Go to the mug whose colour is red, which one is it?"}, {"task": "qa"})
    assert action["text"] != "OBJECT m1" and np.isfinite(action["position"]).all()


class Budgets(Reasoner):
    """Records the budget of each call; replies with two lines."""

    def __init__(self):
        self.calls = []

    def generate(self, messages, *, max_new_tokens=256):
        self.calls.append(("generate", max_new_tokens))
        return "red\nmore"


class LineBudgets(Budgets):
    """A reasoner that can stop at a line end (as the transformers ones)."""

    def generate_line(self, messages, *, max_new_tokens=256):
        self.calls.append(("generate_line", max_new_tokens))
        return "red"


def test_answer_budgets_per_task_capped_by_max_new_tokens():
    reasoner = Budgets()
    agent = ReasonerAgent(FactMemory(), reasoner, 20, {"qa": 4, "navigation": 30})
    for task in ("qa", "navigation", "other"):
        agent.answer({**OBS, "text": "What color is the mug?"}, {"task": task})
    assert reasoner.calls == [("generate", 4), ("generate", 20), ("generate", 20)]
    assert agent.last_reply == "red\nmore"  # a reasoner without generate_line replies as it likes
    lines = LineBudgets()
    action = ReasonerAgent(FactMemory(), lines, 20, {"qa": 4}).answer({**OBS, "text": "What color?"}, {"task": "qa"})
    assert lines.calls == [("generate_line", 4)] and action["text"] == "red"
    with pytest.raises(ConfigError, match="qa"):
        ReasonerAgent(FactMemory(), reasoner, 20, {"qa": 0})
