"""Dialogue writers (template and LLM through any Reasoner) and filler corpora."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.core.protocols import Reasoner
from memgym.datasets.voxmem.filler import GeneratedFillerCorpus, InstructS2SCorpus
from memgym.datasets.voxmem.records import SessionFact
from memgym.datasets.voxmem.writing import LLMWriter, TemplateWriter, leaks

FACT = SessionFact(family="renovation", subject="the kitchen renovation", value="five thousand dollars", speaker="u0")


def test_template_writer_states_value_once_and_never_leaks():
    writer = TemplateWriter()
    for seed in range(30):
        for fact in (FACT, SessionFact(family="renovation", subject="the kitchen renovation", value="", speaker="u1")):
            user, assistant, name = writer.write(fact, 3, np.random.default_rng(seed))
            assert len(user) == len(assistant) == 3 and name == "template"
            assert sum(bool(fact.value) and fact.value in u for u in user) == (1 if fact.value else 0)
            assert not any(leaks(t, ["rain", "dog"]) for t in user + assistant)
            assert not any("thousand" in a for a in assistant)  # the assistant side never sees the value


class ScriptedReasoner(Reasoner):
    """Returns canned replies and records prompts."""

    def __init__(self, replies):
        self.replies, self.prompts = list(replies), []

    def generate(self, messages, *, max_new_tokens=256):
        self.prompts.append(messages[-1].text_only())
        return self.replies.pop(0)


def test_llm_writer_uses_valid_output_and_writes_sides_independently():
    user = "1. I want to plan the kitchen renovation.\n2. The budget is five thousand dollars.\n3. What next?"
    assistant = "Happy to help.\nA checklist helps.\nLet's start with the layout."
    reasoner = ScriptedReasoner([user, assistant])
    turns_user, turns_assistant, name = LLMWriter(reasoner).write(FACT, 3, np.random.default_rng(0))
    assert name == "llm" and turns_user[1] == "The budget is five thousand dollars."
    assert turns_assistant == ["Happy to help.", "A checklist helps.", "Let's start with the layout."]
    assert "five thousand" not in reasoner.prompts[1]  # the assistant prompt never contains the value


def test_llm_writer_falls_back_on_leaks():
    leaky = "I sound so surprised!\nThe budget is five thousand dollars.\nOk."
    reasoner = ScriptedReasoner([leaky, "It was five thousand dollars, right?\nSure.\nOk."])
    turns_user, turns_assistant, name = LLMWriter(reasoner).write(FACT, 3, np.random.default_rng(0))
    template_user, template_assistant, _ = TemplateWriter().write(FACT, 3, np.random.default_rng(0))
    assert name == "template" and turns_user == template_user and turns_assistant == template_assistant


def test_generated_fillers_are_deterministic_and_varied():
    corpus = GeneratedFillerCorpus()
    assert corpus.dialogue(5) == corpus.dialogue(5)
    assert len({str(corpus.dialogue(i)) for i in range(len(corpus))}) == len(corpus) == 12000


def test_instructs2s_corpus_reads_json_and_jsonl(tmp_path):
    records = [
        {"id": 1, "conversation": [{"from": "human", "value": "How do I bake bread? " + "word " * 100},
                                   {"from": "gpt", "value": "Mix flour and water."}]},
        {"id": 2, "conversations": [{"from": "gpt", "value": "orphan"}]},
    ]  # fmt: skip
    (tmp_path / "a.json").write_text(json.dumps(records))
    (tmp_path / "b.jsonl").write_text(
        json.dumps({"conversation": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello."}]})
        + "\n"
    )
    corpus = InstructS2SCorpus(tmp_path)
    assert len(corpus) == 2
    user, assistant = corpus.dialogue(0)
    assert len(user[0].split()) <= 61 and assistant == ["Mix flour and water."]
    assert corpus.dialogue(1) == (["Hi?"], ["Hello."])


def test_instructs2s_corpus_errors(tmp_path):
    with pytest.raises(MemgymError, match="does not exist"):
        InstructS2SCorpus(tmp_path / "missing")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(MemgymError, match="bad.jsonl:1"):
        InstructS2SCorpus(tmp_path)


class FakeLLM(Reasoner):
    """Follows the writer's prompts well enough to pass validation (quoted value, short replies)."""

    def generate(self, messages, *, max_new_tokens=256):
        import re

        prompt = messages[-1].text_only()
        if prompt.startswith("Rewrite this question"):
            return "So, " + prompt.split("Question: ", 1)[1][0].lower() + prompt.split("Question: ", 1)[1][1:]
        if "voice assistant gives" in prompt:
            return "Sure thing.\nNoted.\nGreat, let's continue."
        value = re.search(r'is "([^"]+)"', prompt)
        subject = re.search(r"about (.+?), one per line", prompt).group(1)
        middle = f"It's {value.group(1)} for {subject}." if value else f"Nothing is decided for {subject} yet."
        return f"Let's talk about {subject}.\n{middle}\nThanks a lot."


def test_builder_with_llm_writer_and_reworded_questions(tmp_path):
    from memgym.backends.asr import ASRConfig
    from memgym.core.episode import Dataset
    from memgym.datasets.voxmem.build import VoxMemBuilder
    from memgym.datasets.voxmem.config import VoxMemConfig

    config = VoxMemConfig(items=2, budgets=("4k",), out=str(tmp_path), writer="llm", asr=ASRConfig(kind="none"))
    folder = VoxMemBuilder(config, reasoner=FakeLLM()).build()
    episodes = Dataset.load(folder / "manifest.jsonl")
    assert len(episodes) == 2 and all(e.items[0].prompt.startswith("So, ") for e in episodes)
    topical = [s for e in episodes for s in e.sessions if s.role != "filler"]
    assert topical and all(s.source.endswith(":llm") for s in topical)
    assert all(any(t.text == "Sure thing." for t in s.turns) for s in topical)
