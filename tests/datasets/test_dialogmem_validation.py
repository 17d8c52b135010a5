"""Rule validation of utterances, the LLM grounding audit, and regenerate-then-drop."""

from __future__ import annotations

import dataclasses

import pytest
from dialogmem_fixtures import LOG
from scripted_reasoner import ScriptedReasoner

from memgym.datasets.dialogmem.content import MemoryItem
from memgym.datasets.dialogmem.policy import TurnSpec
from memgym.datasets.dialogmem.realise import LLMRealiser, TemplateRealiser, clean_reply
from memgym.datasets.dialogmem.residents import STYLES, Resident
from memgym.datasets.dialogmem.validation import (
    GroundingAuditor,
    format_violations,
    grounding_violations,
    leakage_violations,
    realise_dialogue,
    stated_items,
)

BEN = Resident(name="Ben", relationship="son", style="casual")
OWNER = MemoryItem(object_id="mug_2", category="mug", type="social", key="owner", value="Amelia")
UPDATE = dataclasses.replace(OWNER, value="Ben", version=1, operation="update", previous="Amelia")


def turn(turn_id, step, content, turn_type="commentary"):
    return TurnSpec(
        turn_id=turn_id,
        step=step,
        speaker="Ben",
        turn_type=turn_type,
        visible=LOG.visible[step],
        referenced=(content.object_id,),
        content=content,
    )


@pytest.mark.parametrize(
    "text",
    ["The mug_2 is Amelia's.", "Its times_seen is two.", "The mug {owner: Amelia}.", "It is at 1.25, 0.3.", "FACT x y"],
)
def test_leakage_is_caught(text):
    assert leakage_violations(text)


def test_clean_text_passes_all_rules():
    text = "See that mug? The mug belongs to Amelia."
    assert leakage_violations(text) == [] and format_violations(text) == []
    assert grounding_violations(text, OWNER) == []


def test_format_and_grounding_rules():
    assert format_violations("Ben: the mug is Amelia's.")  # speaker prefix
    assert format_violations("Mug.")  # too short, fine ending
    assert format_violations("The mug is Amelia's")  # no sentence end
    assert format_violations("The mug is\nAmelia's.")
    assert grounding_violations("The cup belongs to Amelia.", OWNER) == ["does not name the mug"]
    assert grounding_violations("The mug belongs to Ben.", OWNER) == ["does not state 'Amelia'"]


@pytest.mark.parametrize("style", STYLES)
def test_template_realiser_passes_its_own_rules_for_every_style_and_key(style):
    speaker = Resident(name="Ben", relationship="son", style=style)
    realiser = TemplateRealiser()
    contents = [
        OWNER,
        UPDATE,
        dataclasses.replace(UPDATE, operation="correction"),
        dataclasses.replace(OWNER, key="usage", value="keeping snacks"),
        dataclasses.replace(OWNER, key="alias", value="the throne"),
        dataclasses.replace(OWNER, key="significance", value="a wedding gift"),
    ]
    for attempt in range(2):
        for item in contents:
            for turn_type in ("commentary", "recall", "post_arrival"):
                spec = dataclasses.replace(turn(0, 2, item), turn_type=turn_type)
                text = realiser.realise(spec, speaker, [], attempt)
                assert grounding_violations(text, item) == [] and format_violations(text) == [], text
        for key, value in (("color", "red"), ("room", "kitchen"), ("near", "sofa"), ("on", "table")):
            item = MemoryItem(object_id="mug_2", category="mug", type="perceptual", key=key, value=value)
            spec = dataclasses.replace(turn(0, 2, item), turn_type="navigation", goal="mug_2")
            text = realiser.realise(spec, speaker, [], attempt)
            assert grounding_violations(text, item) == [] and leakage_violations(text) == [], text


def test_llm_realiser_is_regenerated_then_kept():
    llm = ScriptedReasoner(["The mug_2 is Amelia's.", 'Ben: "That mug is Amelia\'s, for sure."'])
    turns, dropped = realise_dialogue([turn(0, 2, OWNER)], [BEN], LLMRealiser(llm), LOG, max_attempts=2)
    assert dropped == [] and turns[0].attempts == 2
    assert turns[0].text == "That mug is Amelia's, for sure."
    assert "belongs to Amelia" in llm.prompts[0] and "mug_2" not in llm.prompts[0]
    assert "broke the rules" in llm.prompts[1]


def test_persistent_failure_is_dropped_and_takes_its_update_with_it():
    llm = ScriptedReasoner(["nope", "still nope", "Ben has taken over the mug from Amelia."])
    specs = [turn(0, 2, OWNER), turn(1, 4, UPDATE, "recall")]
    turns, dropped = realise_dialogue(specs, [BEN], LLMRealiser(llm), LOG, max_attempts=2)
    assert turns == []
    assert len(dropped) == 2
    assert "after 2 attempts" in dropped[0].reasons[0]
    assert "without its earlier version" in dropped[1].reasons[0]
    items = stated_items([OWNER, UPDATE], turns)
    assert not any(i.stated for i in items)


def test_grounding_audit_gates_utterances():
    auditor = GroundingAuditor(ScriptedReasoner(["No", "yes"]))
    turns, dropped = realise_dialogue([turn(0, 2, OWNER)], [BEN], TemplateRealiser(), LOG, auditor=auditor)
    assert dropped == [] and turns[0].attempts == 2
    auditor = GroundingAuditor(ScriptedReasoner(["maybe", "Yes, it does", "no"]))
    turns, dropped = realise_dialogue([turn(0, 2, OWNER)], [BEN], TemplateRealiser(), LOG, auditor=auditor)
    assert turns == [] and "grounding audit failed" in dropped[0].reasons[0]


def test_specs_breaking_policy_or_visibility_are_dropped_without_realisation():
    llm = ScriptedReasoner([])
    bad = [turn(0, 4, OWNER), dataclasses.replace(turn(1, 2, OWNER), speaker="Zed")]
    turns, dropped = realise_dialogue(bad, [BEN], LLMRealiser(llm), LOG)
    assert turns == [] and llm.prompts == []
    reasons = {d.spec.turn_id: d.reasons[0] for d in dropped}
    assert "not visible" in reasons[0] and "unknown speaker" in reasons[1]


def test_clean_reply():
    assert clean_reply('\n  Ben: "Hello there."\nextra', "Ben") == "Hello there."
