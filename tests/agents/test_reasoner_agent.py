"""ReasonerAgent: evidence to chat, replies to actions (text, or an entry's location)."""

from __future__ import annotations

import dataclasses

import numpy as np

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.backends.structured import Fact, StructuredReasoner, format_fact
from memgym.core.protocols import Memory


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
    messages = agent.messages("Which room is the red mug in?", FactMemory().evidence)
    assert messages[-1].text_only().splitlines()[-1] == "Which room is the red mug in?"
    action = agent.answer({**OBS, "text": "What color is the mug?"}, {"task": "qa"})
    assert action["text"] == "unknown"
