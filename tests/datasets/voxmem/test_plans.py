"""Plans for all 15 cells and semantics IE, the oracle, transcript-only checks and AR derivation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memgym.datasets.voxmem.oracle import answer_query, transcript_candidates
from memgym.datasets.voxmem.plans import plan_item
from memgym.datasets.voxmem.refusal import derive_refusal, refusal_edit
from memgym.datasets.voxmem.taxonomy import BUILDABLE_CELLS, CELLS, REFUSAL, SUBTYPES
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME

SOUNDS = ["dog", "rain", "siren", "clock_alarm", "vacuum_cleaner", "thunderstorm"]


def test_fifteen_cells():
    assert len(CELLS) == 15 and ("semantics", "IE") not in CELLS


@pytest.mark.parametrize("cell", [c for c in BUILDABLE_CELLS if c[1] != "AR"])
def test_every_cell_and_subtype_plans_validly(cell):
    evidence, operation = cell
    for subtype in SUBTYPES[operation]:
        for seed in range(5):
            plan = plan_item("p", evidence, operation, subtype, SOUNDS, np.random.default_rng(seed))
            facts = [s.fact for s in sorted(plan.sessions, key=lambda s: (s.order < 0, s.order))]
            assert answer_query(plan.query, facts) == plan.answer != REFUSAL
            if plan.audio_native:  # a text-only answerer keeps a wrong candidate
                assert transcript_candidates(plan.query, facts) - {plan.answer}
            again = plan_item("p", evidence, operation, subtype, SOUNDS, np.random.default_rng(seed))
            assert again == plan


def test_ar_derivation_refuses_and_keeps_words_for_audio_native_items():
    eligible = {}
    for evidence, operation in [c for c in CELLS if c[1] != "AR"]:
        for subtype in SUBTYPES[operation]:
            for seed in range(3):
                source = plan_item("src", evidence, operation, subtype, SOUNDS, np.random.default_rng(seed))
                if refusal_edit(source) is None:
                    continue
                ar = derive_refusal(source, "ar")
                eligible[evidence] = eligible.get(evidence, 0) + 1
                assert ar.answer == REFUSAL and ar.question == source.question and ar.operation == "AR"
                facts = [s.fact for s in sorted(ar.sessions, key=lambda s: (s.order < 0, s.order))]
                assert answer_query(ar.query, facts) == REFUSAL
                assert [s.key for s in ar.sessions] == [s.key for s in source.sessions]
                changed = {a.key for a, b in zip(ar.sessions, source.sessions) if a.fact != b.fact}
                assert changed and changed == set(ar.ar_edits)
                if ar.audio_native:  # the words remain: only voice, tone or sound is neutralised
                    for a, b in zip(ar.sessions, source.sessions):
                        assert (a.fact.subject, a.fact.value) == (b.fact.subject, b.fact.value)
                    assert transcript_candidates(ar.query, facts) - {REFUSAL}
    assert set(eligible) == {"semantics", "speaker", "paralinguistic", "sound"}


@pytest.mark.parametrize("subtype", SUBTYPES["IE"])
def test_semantics_ie_asks_the_one_session_that_states_a_value_for_its_subject(subtype):
    """Not one of the paper's cells: one evidence session states the subject's value; around it
    other subjects' values (context-to-cue) and also a same-subject mention without a value
    (cue-to-fact). Removing the subject refuses it."""
    for seed in range(5):
        plan = plan_item("p", "semantics", "IE", subtype, SOUNDS, np.random.default_rng(seed))
        subject = plan.query.subjects[0]
        evidence = [s for s in plan.sessions if s.role == "evidence"]
        assert len(evidence) == 1 and evidence[0].fact.subject == subject and plan.answer == evidence[0].fact.value
        same_subject = [s.fact.value for s in plan.sessions if s.role == "haystack" and s.fact.subject == subject]
        assert same_subject == ([""] if subtype == "cue_to_fact" else [])
        assert not plan.audio_native and refusal_edit(plan) == "drop_context"


def test_oracle_detects_an_alternative_answer():
    plan = plan_item("p", "speaker", "IE", "cue_to_fact", SOUNDS, np.random.default_rng(0))
    evidence = next(s.fact for s in plan.sessions if s.role == "evidence")
    rival = dataclasses.replace(evidence, value=next(v for v in ("two nights", "Monday") if v != evidence.value))
    facts = [s.fact for s in plan.sessions]
    assert answer_query(plan.query, [*facts, rival]) != plan.answer


def test_users_key_sets_the_users_of_every_plan(tmp_path):
    from memgym.core.errors import ConfigError
    from memgym.datasets.voxmem.build import VoxMemBuilder
    from memgym.datasets.voxmem.config import VoxMemConfig

    builder = VoxMemBuilder(VoxMemConfig(items=30, users=5, out=str(tmp_path)))
    plans = [
        builder.items.plan(i, 0, word=False) for i, cell in enumerate(builder.items.layout()[0]) if cell[1] != "AR"
    ]
    assert all(p.users == ("u0", "u1", "u2", "u3", "u4") for p in plans)
    assert {s.fact.speaker for p in plans for s in p.sessions} == set(plans[0].users)
    size = len(builder.voice_bank)
    for bad in (0, 1, size + 1):
        with pytest.raises(ConfigError, match=f"users: expected 2 to {size} .*got {bad}$"):
            VoxMemBuilder(VoxMemConfig(users=bad, out=str(tmp_path)))


@pytest.mark.parametrize("cell", [c for c in CELLS if c[1] != "AR"])
def test_two_users_are_enough_for_every_cell(cell):
    for subtype in SUBTYPES[cell[1]]:
        plan = plan_item("p", *cell, subtype, SOUNDS, np.random.default_rng(1), users=2)
        assert plan.users == ("u0", "u1") and {s.fact.speaker for s in plan.sessions} <= {"u0", "u1"}


def test_semantics_counting_asks_for_given_values_beside_a_mention_without_one():
    """The count is of sessions that gave a value; a haystack on the same subject that gives none
    ("... is still up in the air") is in the history, and the question says what is counted."""
    for seed in range(5):
        plan = plan_item("p", "semantics", "MSR", "counting", SOUNDS, np.random.default_rng(seed))
        subject = plan.query.subjects[0]
        on_subject = [s for s in plan.sessions if s.fact.subject == subject]
        assert any(s.role == "haystack" and not s.fact.value for s in on_subject)
        assert plan.answer == str(sum(s.role == "evidence" and bool(s.fact.value) for s in on_subject))
        slot = FAMILY_BY_NAME[plan.query.family].slot
        article = "an" if slot[0] in "aeiou" else "a"
        assert plan.question.endswith(f"was {article} {slot} for {subject} given?")


def test_counting_questions_take_an_before_a_vowel():
    """'was an oven time ... given?' (not 'a oven time'); the structured reader still reads it."""
    from memgym.pipelines.voxmem.reader import parse_question

    asked = {}
    for seed in range(200):
        plan = plan_item("p", "semantics", "MSR", "counting", SOUNDS, np.random.default_rng(seed))
        asked[FAMILY_BY_NAME[plan.query.family].slot] = plan.question
        if "oven time" in asked:
            break
    assert "was an oven time for" in asked["oven time"]
    assert parse_question(asked["oven time"]).fields["slot"] == "oven time"
