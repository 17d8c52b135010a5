"""The answer oracle: recomputes a question's answer from the structured facts of a history.

Planning fixes the gold answer with :func:`answer_query` over the plan's own sessions; quality
control runs it again over the assembled history (evidence + haystacks + fillers, in order) and
requires the same answer, so no added session can supply an alternative answer. It returns
:data:`~memgym.datasets.voxmem.taxonomy.REFUSAL` when the question's premise is absent and
:data:`~memgym.datasets.voxmem.taxonomy.AMBIGUOUS` when the history supports several answers.

:func:`transcript_candidates` is the transcript-only counterpart: the answers a text-only
answerer cannot rule out when it sees every session's words and order but neither voices, tones
nor background sounds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.voxmem.records import Query, SessionFact
from memgym.datasets.voxmem.taxonomy import AMBIGUOUS, REFUSAL
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME

RATE_ORDER = {"slow": 0, "neutral": 1, "fast": 2}
"""Speaking-rate rank of the cues used by rate comparisons."""


def sound_label(sound: str) -> str:
    """Spoken form of a sound class (``"clock_alarm"`` -> ``"clock alarm"``)."""
    return sound.replace("_", " ")


def _speaker_label(fact: SessionFact, asker: str) -> str:
    return "you" if fact.speaker == asker else "someone else"


def _state(query: Query, fact: SessionFact) -> str:
    if query.evidence == "semantics":
        return fact.value
    if query.evidence == "speaker":
        return _speaker_label(fact, query.asker)
    if query.evidence == "paralinguistic":
        return CUE_WORDS[fact.cue]
    return sound_label(fact.sound) if fact.sound else "no background sound"


def _premise(query: Query, facts: Sequence[SessionFact], subject: str) -> list[SessionFact]:
    """Sessions in which a value for ``subject`` was stated.

    Questions about the asker's own tone, and IE sound questions ("when I told you ..."), only
    count the asker's sessions; speaker questions count everyone's (who said it is the question).
    """
    hits = [f for f in facts if f.subject == subject and f.value]
    said_by_asker = query.evidence == "paralinguistic" or (query.operation == "IE" and query.evidence == "sound")
    return [f for f in hits if f.speaker == query.asker] if said_by_asker else hits


def _unique(values: list[str]) -> str:
    if not values:
        return REFUSAL
    return values[0] if len(set(values)) == 1 else AMBIGUOUS


def answer_query(query: Query, facts: Sequence[SessionFact]) -> str:
    """The answer ``facts`` (topical sessions, in history order) support for ``query``."""
    answer = _ANSWERS.get(query.operation)
    if answer is None:
        raise ValueError(f"unknown operation '{query.operation}'")
    return answer(query, facts)


def _answer_ie(query: Query, facts: Sequence[SessionFact]) -> str:
    ev = query.evidence
    hits = _premise(query, facts, query.subjects[0])
    if query.subtype == "context_to_cue":
        if ev == "speaker":
            return _unique(["yes" if f.speaker == query.asker else "no" for f in hits])
        return _unique([_state(query, f) for f in hits])
    if ev == "speaker":
        hits = [f for f in hits if f.speaker == query.asker]
    elif ev == "paralinguistic":
        hits = [f for f in hits if f.cue == query.cue]
    elif ev == "sound":
        hits = [f for f in hits if f.sound == query.sound]
    return _unique([f.value for f in hits])


def _answer_msr(query: Query, facts: Sequence[SessionFact]) -> str:
    ev, sub = query.evidence, query.subtype
    if sub == "counting":
        hits = _premise(query, facts, query.subjects[0])
        if not hits:
            return REFUSAL
        if ev == "semantics":
            return str(len(hits))
        if ev == "speaker":
            return str(len({f.speaker for f in hits}))
        if ev == "paralinguistic":
            return str(sum(f.cue == query.cue for f in hits))
        return str(sum(f.sound == query.sound for f in hits))
    per_subject = [_premise(query, facts, s) for s in query.subjects]
    if any(not hits for hits in per_subject):
        return REFUSAL
    if sub == "matching":
        states = []
        for hits in per_subject:
            state = _unique([f.speaker if ev == "speaker" else _state(query, f) for f in hits])
            if state == AMBIGUOUS:
                return AMBIGUOUS
            states.append(state)
        return "yes" if states[0] == states[1] else "no"
    return _answer_comparing(query, per_subject)


def _answer_comparing(query: Query, per_subject: list[list[SessionFact]]) -> str:
    """MSR comparing, from the premise sessions of each of the question's subjects."""
    ev = query.evidence
    if ev == "semantics":
        family = FAMILY_BY_NAME[query.family]
        ranks = []
        for hits in per_subject:
            value = _unique([f.value for f in hits])
            if value == AMBIGUOUS:
                return AMBIGUOUS
            ranks.append(family.values.index(value))
        return _argmax(query.subjects, ranks)
    if ev == "speaker":
        mine = [sum(f.speaker == query.asker for f in hits) for hits in per_subject]
        return REFUSAL if not any(mine) else _argmax(query.subjects, mine)
    if ev == "paralinguistic":
        ranks = []
        for hits in per_subject:
            cue = _unique([f.cue for f in hits])
            if cue == AMBIGUOUS or cue not in RATE_ORDER:
                return AMBIGUOUS
            ranks.append(RATE_ORDER[cue])
        return _argmax(query.subjects, ranks)
    hits = per_subject[0]
    return _argmax(
        tuple(sound_label(o) for o in query.options), [sum(f.sound == o for f in hits) for o in query.options]
    )


def _answer_tet(query: Query, facts: Sequence[SessionFact]) -> str:
    hits = _premise(query, facts, query.subjects[0])
    if not hits:
        return REFUSAL
    states = [_state(query, f) for f in hits]
    if query.subtype == "latest":
        return states[-1]
    if query.subtype == "at_point":
        return states[query.point] if query.point < len(states) else REFUSAL
    return ", then ".join(states)


_ANSWERS = {"IE": _answer_ie, "MSR": _answer_msr, "TET": _answer_tet}


def _argmax(options: Sequence[str], scores: Sequence[int]) -> str:
    best = max(scores)
    winners = [o for o, s in zip(options, scores) if s == best]
    return winners[0] if len(winners) == 1 else AMBIGUOUS


OTHER_SPEAKER = "<someone else>"
"""Stand-in voice for "a user other than the asker" when a transcript hides who spoke."""


def transcript_candidates(query: Query, facts: Sequence[SessionFact]) -> set[str]:
    """Answers a text-only answerer cannot exclude: who spoke, and how, and over which sound, hidden.

    The answerer knows the words (subjects, values, order) but not the voice, cue or sound of any
    session; it considers every assignment of those hidden attributes to the sessions about the
    question's subjects. The evidence attribute ranges over the values those sessions and the
    query use (plus neutral / no sound), so the candidates do not depend on unrelated sessions; for speaker evidence the voice ranges over the
    history's users, otherwise it only matters whether the asker spoke (asker or
    :data:`OTHER_SPEAKER`). Semantic questions have one candidate: the answer.
    """
    if query.evidence == "semantics":
        return {answer_query(query, facts)}
    relevant = [i for i, f in enumerate(facts) if f.subject in query.subjects]
    speakers = sorted({f.speaker for f in facts} | {query.asker})
    if query.evidence != "speaker":
        speakers = [query.asker, OTHER_SPEAKER]
    options: list[dict[str, str]] = [{"speaker": s} for s in speakers]
    if query.evidence == "paralinguistic":
        cues = sorted({facts[i].cue for i in relevant} | ({query.cue} if query.cue else set()) | {"neutral"})
        options = [{**o, "cue": c} for o in options for c in cues]
    elif query.evidence == "sound":
        sounds = sorted(
            {facts[i].sound for i in relevant} | {""} | set(query.options) | ({query.sound} if query.sound else set())
        )
        options = [{**o, "sound": a} for o in options for a in sounds]
    if len(options) ** len(relevant) > 20000:  # bounded enumeration: too many to list, never decisive
        return {"<too many>", answer_query(query, facts)}
    answers: set[str] = set()
    for code in range(len(options) ** len(relevant)):
        altered = list(facts)
        for i in relevant:
            code, pick = divmod(code, len(options))
            altered[i] = dataclasses.replace(facts[i], **options[pick])
        answers.add(answer_query(query, altered))
    return answers - {AMBIGUOUS}
