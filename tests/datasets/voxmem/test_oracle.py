"""The answer oracle and the transcript-only candidates on hand-written histories with known answers."""

from __future__ import annotations

import pytest

from memgym.datasets.voxmem.oracle import answer_query, transcript_candidates
from memgym.datasets.voxmem.records import Query, SessionFact
from memgym.datasets.voxmem.taxonomy import AMBIGUOUS, REFUSAL

LAMP, FENCE, DOOR = "the lamp replacement", "the broken fence", "the squeaky door"


def fact(subject, value, speaker="u0", cue="neutral", sound=""):
    return SessionFact(family="home_repair", subject=subject, value=value, speaker=speaker, cue=cue, sound=sound)


def query(evidence, operation, subtype, subjects=(LAMP,), **extra):
    return Query(
        evidence=evidence,
        operation=operation,
        subtype=subtype,
        asker="u0",
        family="home_repair",
        subjects=subjects,
        **extra,
    )


HISTORY = [
    fact(LAMP, "Monday", "u0", cue="hesitation", sound="rain"),
    fact(FENCE, "Friday", "u1", cue="fast", sound="dog"),
    fact(LAMP, "Wednesday", "u2", cue="slow", sound="dog"),
    fact(DOOR, "", "u0"),
    fact(LAMP, "Saturday", "u0", cue="surprise", sound=""),
    fact(FENCE, "Tuesday", "u0", cue="slow", sound="rain"),
]
"""Six sessions in history order: the lamp three times (u0 hesitant over rain, u2 slow over a dog,
u0 surprised in silence), the fence twice (u1 fast over a dog, u0 slow over rain), the door once
without a value."""

CASES = [
    # information extraction
    (query("speaker", "IE", "context_to_cue", (FENCE,)), AMBIGUOUS),  # u1 and u0 both gave a fence day
    (query("speaker", "IE", "context_to_cue", (DOOR,)), REFUSAL),  # no value was ever given
    (query("speaker", "IE", "cue_to_fact"), AMBIGUOUS),  # I gave Monday and Saturday
    (query("paralinguistic", "IE", "cue_to_fact", cue="hesitation"), "Monday"),
    (query("paralinguistic", "IE", "cue_to_fact", cue="slow"), REFUSAL),  # the slow lamp session was u2's
    (query("sound", "IE", "cue_to_fact", sound="rain"), "Monday"),
    (query("sound", "IE", "context_to_cue", (FENCE,)), "rain"),  # only my fence session
    # multi-session reasoning
    (query("semantics", "MSR", "counting"), "3"),
    (query("speaker", "MSR", "counting"), "2"),  # u0 and u2
    (query("paralinguistic", "MSR", "counting", cue="surprise"), "1"),  # of my two lamp sessions
    (query("sound", "MSR", "counting", sound="dog"), "1"),
    (query("semantics", "MSR", "matching", (LAMP, FENCE)), AMBIGUOUS),  # the lamp has three values
    (query("speaker", "MSR", "comparing", (LAMP, FENCE)), LAMP),  # I spoke about the lamp twice, the fence once
    (query("paralinguistic", "MSR", "comparing", (FENCE, DOOR)), REFUSAL),  # the door has no value
    (query("sound", "MSR", "comparing", options=("dog", "rain")), AMBIGUOUS),  # one each
    # temporal evolution tracking
    (query("semantics", "TET", "latest"), "Saturday"),
    (query("semantics", "TET", "full_sequence"), "Monday, then Wednesday, then Saturday"),
    (query("speaker", "TET", "at_point", point=1), "someone else"),
    (query("paralinguistic", "TET", "full_sequence"), "hesitant, then surprised"),  # only my sessions
    (query("sound", "TET", "latest"), "no background sound"),
    (query("sound", "TET", "at_point", point=1), "dog"),
    (query("semantics", "TET", "at_point", (DOOR,), point=0), REFUSAL),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{q.evidence}-{q.operation}-{q.subtype}-{a}" for q, a in CASES])
def test_oracle_answers_hand_written_histories(case):
    q, expected = case
    assert answer_query(q, HISTORY) == expected


def test_transcript_candidates_hide_voice_cue_and_sound():
    q = query("sound", "IE", "cue_to_fact", sound="rain")
    evidence = [fact(LAMP, "Monday", "u0", sound="rain"), fact(LAMP, "Friday", "u0", sound="dog")]
    # a reader of the words alone cannot tell which session had rain, nor whether I spoke in either
    assert transcript_candidates(q, evidence) == {"Monday", "Friday", REFUSAL}
    # the voice is hidden too: re-voicing my statement does not show in the words
    revoiced = [fact(LAMP, "Monday", "u1", sound="rain")]
    assert answer_query(q, revoiced) == REFUSAL and transcript_candidates(q, revoiced) == {"Monday", REFUSAL}
    # semantic questions are answered by the words
    assert transcript_candidates(query("semantics", "TET", "latest"), HISTORY) == {"Saturday"}
    # sessions about other subjects do not change the candidates
    assert transcript_candidates(q, [*evidence, fact(FENCE, "Tuesday", "u2", cue="fast", sound="siren")]) == (
        transcript_candidates(q, evidence)
    )
