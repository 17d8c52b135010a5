"""The template realiser's grammar: every wording passes the utterance rules, is read back by the
structured reasoner's dialogue reading as its fact and no other (social, perceptual and episodic
alike), and one fact has many wordings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dialogmem_fixtures import LOG

from memgym.datasets.dialogmem.content import MemoryItem
from memgym.datasets.dialogmem.grammar import FACT_SENTENCES
from memgym.datasets.dialogmem.policy import TurnSpec
from memgym.datasets.dialogmem.realise import TemplateRealiser
from memgym.datasets.dialogmem.residents import STYLES, Resident
from memgym.datasets.dialogmem.validation import text_violations
from memgym.pipelines.dialogmem.reasoner.dialogue_reading import read_statements

VALUES = {
    "color": "dark brown",
    "material": "wood",
    "size": "large",
    "room": "living room",
    "on": "coffee table",
    "near": "sofa",
    "times_seen": "three times",
    "order": "second",
    "segment": "dining table",
    "owner": "Amelia",
    "usage": "afternoon naps",
    "alias": "the lighthouse",
    "significance": "a wedding gift",
}
KEY_TYPES = {"owner": "social", "usage": "social", "alias": "social", "significance": "social"}
KEY_TYPES |= {k: "episodic" for k in ("times_seen", "order", "segment")}


def item(key: str, operation: str) -> MemoryItem:
    previous = {"owner": "Ben", "usage": "keeping snacks"}.get(key, "") if operation != "state" else ""
    return MemoryItem(
        object_id="armchair_3",
        category="armchair",
        type=KEY_TYPES.get(key, "perceptual"),  # type: ignore[arg-type]
        key=key,
        value=VALUES[key],
        version=int(operation != "state"),
        operation=operation,  # type: ignore[arg-type]
        previous=previous,
    )


def spec(content: MemoryItem, turn_type: str) -> TurnSpec:
    return TurnSpec(
        turn_id=3, step=2, speaker="Ben", turn_type=turn_type, visible=LOG.visible[2], referenced=("armchair_3",),
        content=content,
    )  # fmt: skip


@pytest.mark.parametrize(("key", "operation"), sorted(FACT_SENTENCES))
def test_every_wording_passes_the_rules_and_reads_back(key, operation):
    content = item(key, operation)
    realiser = TemplateRealiser()
    texts = set()
    for seed in range(60):
        speaker = Resident(name="Ben", relationship="son", style=STYLES[seed % len(STYLES)])
        turn_type = ("commentary", "recall", "post_arrival")[seed % 3]
        text = realiser.realise(spec(content, turn_type), speaker, [], rng=np.random.default_rng(seed))
        assert text_violations(text, spec(content, turn_type)) == [], text
        statements = read_statements([text], ["armchair", "coffee table", "sofa", "dining table"], ["Ben", "Amelia"])
        said = [(s.category, s.key, s.value) for s in statements]
        assert ("armchair", key, VALUES[key]) in said, text
        assert {s.key for s in statements} == {key}, text  # read as no other fact
        if content.previous:
            assert any(s.change and (s.previous in ("", content.previous)) for s in statements), text
        texts.add(text)
    assert len(texts) >= 30  # many realisations of one fact


def test_the_wording_follows_the_generator_and_the_turn_otherwise():
    content, speaker = item("color", "state"), Resident(name="Ben", relationship="son", style="chatty")
    realiser = TemplateRealiser()
    same = [realiser.realise(spec(content, "commentary"), speaker, [], rng=np.random.default_rng(5)) for _ in range(2)]
    assert same[0] == same[1]
    other = {realiser.realise(spec(content, "commentary"), speaker, [], attempt) for attempt in range(6)}
    assert len(other) > 1  # a regenerated turn is worded differently
    moved = dataclasses.replace(spec(content, "commentary"), turn_id=4)
    assert realiser.realise(moved, speaker, []) == realiser.realise(moved, speaker, [])


def test_the_llm_realiser_is_asked_for_perceptual_and_episodic_facts_in_plain_words():
    from scripted_reasoner import ScriptedReasoner

    from memgym.datasets.dialogmem.realise import LLMRealiser

    realiser = LLMRealiser(ScriptedReasoner(["unused"]))
    speaker = Resident(name="Ben", relationship="son", style="casual")
    for key in ("times_seen", "order", "segment", "material"):
        prompt = realiser.prompt(spec(item(key, "state"), "recall"), speaker, [])
        assert VALUES[key] in prompt and key not in prompt and "armchair_3" not in prompt, prompt
