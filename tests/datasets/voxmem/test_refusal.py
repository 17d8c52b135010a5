"""Answer-refusal items: derived from items of the same dataset, on their histories, words kept."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError
from memgym.core.records import read_jsonl
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.datasets.voxmem.oracle import answer_query
from memgym.datasets.voxmem.plans import plan_item
from memgym.datasets.voxmem.records import Plan, Query, SessionFact, SessionPlan
from memgym.datasets.voxmem.refusal import derive_refusal, refusal_edit
from memgym.datasets.voxmem.taxonomy import REFUSAL
from memgym.datasets.voxmem.writing import replace_phrase

SOUNDS = ["dog", "rain", "siren", "clock_alarm", "vacuum_cleaner", "thunderstorm"]


def _by_item(folder):
    out = {}
    for e in Dataset.load(folder / "manifest.jsonl"):
        out.setdefault(e.items[0].item_id, {})[e.budget] = e
    return out


def test_ar_items_reuse_their_sources_history_and_edit_only_the_evidence(small_build):
    _, folder, _ = small_build
    plans = {p.plan_id: p for p in read_jsonl(folder / "plans.jsonl")}
    episodes = _by_item(folder)
    refusals = [p for p in plans.values() if p.operation == "AR"]
    assert {p.evidence for p in refusals} == {"semantics", "speaker", "sound"}
    edits_seen = set()
    for plan in refusals:
        source = plans[plan.source_plan_id]  # the source is an item of this dataset
        assert source.operation != "AR" and source.evidence == plan.evidence
        edited_keys = set(plan.ar_edits)
        for budget, ar in episodes[plan.plan_id].items():
            original = episodes[source.plan_id][budget]
            assert [s.timestamp for s in ar.sessions] == [s.timestamp for s in original.sessions]
            assert ar.question_audio == original.question_audio and ar.items[0].prompt == original.items[0].prompt
            changed = [(a, b) for a, b in zip(ar.sessions, original.sessions) if a.session_id != b.session_id]
            assert changed and len(changed) == len(edited_keys)  # every other session is shared
            for new, old in changed:
                edits_seen.update(plan.ar_edits.values())
                assert new.role == old.role and len(new.turns) == len(old.turns)
                moved = new.fact.subject != old.fact.subject  # drop_context: only the subject changes
                assert moved == (set(plan.ar_edits.values()) == {"drop_context"})
                assert moved or plan.evidence != "semantics"  # semantics items are refused by drop_context only
                for a, b in zip(new.turns, old.turns):  # turn by turn
                    assert a.role == b.role
                    expected = replace_phrase(b.text, old.fact.subject, new.fact.subject) if moved else b.text
                    assert a.text == expected
                    if a.role == "user":
                        assert (a.user, a.cue, a.sound) == (new.fact.speaker, new.fact.cue, new.fact.sound)
                kept = {
                    f: getattr(new.fact, f) == getattr(old.fact, f)
                    for f in ("subject", "value", "speaker", "cue", "sound")
                }
                assert kept["value"] and sum(not same for same in kept.values()) == 1  # one attribute edited
    # every_subtype (the default) may refuse a speaker or sound source by drop_context too
    assert "drop_context" in edits_seen and edits_seen & {"drop_cue", "revoice"}


def test_every_ar_item_gets_its_own_source_item_of_the_same_evidence(tmp_path):
    builder = VoxMemBuilder(VoxMemConfig(items=90, refusal_scope="words_kept", out=str(tmp_path)))
    schedule, sources = builder.items.layout()
    ars = [i for i, cell in enumerate(schedule) if cell[1] == "AR"]
    assert sorted(sources) == ars and len(set(sources.values())) == len(ars) == 24
    for index, source in sources.items():
        assert schedule[source][0] == schedule[index][0] and schedule[source][1] != "AR"
        assert refusal_edit(builder.items.plan(source, 0, word=False)) is not None
    # a subtype is switched only where needed: 15 items leave speaker IE as its only refusable source
    raw = builder.items.schedule()
    assert [i for i in range(90) if raw[i] != schedule[i]] == [3] and schedule[3] == ("speaker", "IE", "cue_to_fact")


def test_by_default_ar_items_derive_from_every_operation_of_every_evidence_type(tmp_path):
    """refusal_scope=every_subtype is the default: 90 items give 24 AR items whose sources cover IE,
    MSR and TET of all four evidence types, with no subtype switched."""
    builder = VoxMemBuilder(VoxMemConfig(items=90, out=str(tmp_path)))
    schedule, sources = builder.items.layout()
    assert len(sources) == 24 and schedule == builder.items.schedule()
    covered = {schedule[j][:2] for j in sources.values()}
    assert covered == {(e, op) for e in ("speaker", "paralinguistic", "sound") for op in ("IE", "MSR", "TET")} | {
        ("semantics", "MSR"), ("semantics", "TET")
    }  # fmt: skip


def test_ar_item_without_a_possible_source_is_a_config_error(tmp_path):
    with pytest.raises(
        ConfigError, match=r"speaker/AR.*no speaker item left.*speaker/IE \(cue_to_fact\), speaker/MSR \(comparing\)"
    ):
        config = VoxMemConfig(
            items=2, cells=("speaker/TET", "speaker/AR"), refusal_scope="words_kept", out=str(tmp_path)
        )
        VoxMemBuilder(config).items.layout()


def test_counting_items_yield_refusals_where_the_premise_can_be_removed():
    for evidence, edit in [("semantics", "drop_context"), ("paralinguistic", "revoice")]:
        source = plan_item("p", evidence, "MSR", "counting", SOUNDS, np.random.default_rng(0))
        assert refusal_edit(source) == edit
        ar = derive_refusal(source, "ar")
        facts = [s.fact for s in ar.sessions]
        assert answer_query(ar.query, facts) == REFUSAL
    for evidence in ("speaker", "sound"):  # who spoke / what was audible: no edit removes the premise
        assert refusal_edit(plan_item("p", evidence, "MSR", "counting", SOUNDS, np.random.default_rng(0))) is None


def _fact(subject, value, speaker, cue="neutral", sound=""):
    return SessionFact(family="home_repair", subject=subject, value=value, speaker=speaker, cue=cue, sound=sound)


def _plan(evidence, subtype, query_extra, sessions, answer):
    query = Query(
        evidence=evidence,
        operation="IE",
        subtype=subtype,
        asker="u0",
        family="home_repair",
        subjects=("the lamp replacement",),
        **query_extra,
    )
    return Plan(
        plan_id="hand",
        evidence=evidence,
        operation="IE",
        subtype=subtype,
        query=query,
        question="?",
        answer=answer,
        users=("u0", "u1", "u2"),
        sessions=tuple(sessions),
        audio_native=evidence != "semantics",
    )


def test_hand_written_refusals_edit_exactly_the_evidence():
    lamp, fence = "the lamp replacement", "the broken fence"
    # "When I sounded hesitant telling you about the lamp replacement, what repair day did I give?"
    plan = _plan(
        "paralinguistic",
        "cue_to_fact",
        {"cue": "hesitation"},
        [
            SessionPlan(key="ev0", role="evidence", fact=_fact(lamp, "Monday", "u0", cue="hesitation")),
            SessionPlan(key="hs0", role="haystack", fact=_fact(lamp, "Friday", "u0", cue="surprise")),
            SessionPlan(key="hs1", role="haystack", fact=_fact(fence, "Tuesday", "u0", cue="hesitation")),
        ],
        "Monday",
    )
    assert answer_query(plan.query, [s.fact for s in plan.sessions]) == "Monday"
    assert refusal_edit(plan) == "drop_cue"
    ar = derive_refusal(plan, "ar")
    assert ar.ar_edits == {"ev0": "drop_cue"} and ar.sessions[0].fact == dataclasses.replace(
        plan.sessions[0].fact, cue="neutral"
    )
    assert ar.sessions[1:] == plan.sessions[1:] and ar.answer == REFUSAL and ar.question == plan.question
    # "How did I sound when I told you the repair day for the lamp replacement?" -> re-voiced
    plan = _plan(
        "paralinguistic",
        "context_to_cue",
        {},
        [
            SessionPlan(key="ev0", role="evidence", fact=_fact(lamp, "Monday", "u0", cue="laughter")),
            SessionPlan(key="hs0", role="haystack", fact=_fact(fence, "Friday", "u0", cue="surprise")),
        ],
        "laughing",
    )
    assert refusal_edit(plan) == "revoice"
    ar = derive_refusal(plan, "ar")
    assert [s.fact.speaker for s in ar.sessions] == ["u1", "u0"] and ar.ar_edits == {"ev0": "revoice"}


def test_replace_phrase_keeps_sentence_case():
    text = "The lamp replacement is done. For the lamp replacement, Monday."
    assert replace_phrase(text, "the lamp replacement", "the broken fence") == (
        "The broken fence is done. For the broken fence, Monday."
    )


def _ordered_facts(plan):
    return [s.fact for s in sorted(plan.sessions, key=lambda s: (s.order < 0, s.order))]


NEW_SUBTYPES = [
    ("speaker", "IE", "context_to_cue"),
    *(("speaker", "MSR", sub) for sub in ("counting", "matching")),
    *(("speaker", "TET", sub) for sub in ("latest", "at_point", "full_sequence")),
    *(("sound", "MSR", sub) for sub in ("counting", "matching", "comparing")),
    *(("sound", "TET", sub) for sub in ("latest", "at_point", "full_sequence")),
]
"""Subtypes that no words-kept edit refuses: refused by removing the evidence (refusal_scope=every_subtype)."""


@pytest.mark.parametrize("cell", NEW_SUBTYPES, ids=["/".join(c) for c in NEW_SUBTYPES])
def test_every_subtype_scope_refuses_by_removing_only_the_evidence(cell):
    for seed in range(3):
        source = plan_item("src", *cell, SOUNDS, np.random.default_rng(seed))
        assert refusal_edit(source) is None  # the default scope is unchanged
        assert refusal_edit(source, "every_subtype") == "drop_context"
        ar = derive_refusal(source, "ar", "every_subtype")
        assert answer_query(source.query, _ordered_facts(source)) == source.answer != REFUSAL
        assert answer_query(ar.query, _ordered_facts(ar)) == REFUSAL  # the source's answer is no longer recoverable
        assert not ar.audio_native and ar.question == source.question and ar.answer == REFUSAL
        target = source.query.subjects[0]
        used = {s.fact.subject for s in source.sessions}
        for new, old in zip(ar.sessions, source.sessions):
            if old.fact.subject != target:
                assert new == old and new.key not in ar.ar_edits  # everything else unchanged
            else:  # only the subject moves, to one no session of the item names
                assert dataclasses.replace(new.fact, subject=target) == old.fact and new.fact.subject not in used
                assert ar.ar_edits[new.key] == "drop_context"


@pytest.mark.slow  # renders four items
def test_every_subtype_ar_items_keep_their_sources_history_but_the_evidence(tmp_path):
    from memgym.backends.asr import ASRConfig

    config = VoxMemConfig(
        items=4,
        cells=("speaker/TET", "speaker/AR", "sound/MSR", "sound/AR"),
        budgets=("4k", "6k"),
        out=str(tmp_path),
        refusal_scope="every_subtype",
        asr=ASRConfig(kind="none"),
    )
    folder = VoxMemBuilder(config).build()
    plans = {p.plan_id: p for p in read_jsonl(folder / "plans.jsonl")}
    episodes = _by_item(folder)
    refusals = [p for p in plans.values() if p.operation == "AR"]
    assert sorted(plans[p.source_plan_id].cell for p in refusals) == ["sound/MSR", "speaker/TET"]
    for plan in refusals:
        source = plans[plan.source_plan_id]
        for budget, ar in episodes[plan.plan_id].items():
            original = episodes[source.plan_id][budget]
            facts = [s.fact for s in ar.sessions if s.fact is not None]
            assert answer_query(plan.query, facts) == REFUSAL
            assert answer_query(source.query, [s.fact for s in original.sessions if s.fact]) == source.answer
            changed = [(a, b) for a, b in zip(ar.sessions, original.sessions) if a.session_id != b.session_id]
            assert len(ar.sessions) == len(original.sessions) and len(changed) == len(plan.ar_edits)
            for new, old in changed:  # the evidence moved to another subject, words otherwise kept
                assert new.fact.subject != old.fact.subject and new.role == old.role
                assert [t.text for t in new.turns] == [
                    replace_phrase(t.text, old.fact.subject, new.fact.subject) for t in old.turns
                ]
