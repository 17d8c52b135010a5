"""Plans for every buildable cell (the paper's 15 and semantics IE): the question, its gold answer and the sessions it needs, before any words.

:func:`plan_item` draws a topic family, subjects, values, speakers, cues and sounds for one
(evidence, operation, subtype) and lays out the evidence sessions and the item's own haystacks
(same topic, a different value / speaker / cue / sound, or no value at all). The gold answer is
computed by the oracle from the planned facts and checked against the answer the layout intends,
and for audio-native cells the transcript-only candidates must include at least one wrong
answer (validity constraints). AR plans are derived from these
(:mod:`~memgym.datasets.voxmem.refusal`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from memgym.core.errors import MemgymError
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.voxmem.oracle import answer_query, sound_label, transcript_candidates
from memgym.datasets.voxmem.records import Plan, Query, SessionFact, SessionPlan
from memgym.datasets.voxmem.taxonomy import AMBIGUOUS, AUDIO_NATIVE, BUILDABLE_CELLS, REFUSAL, SUBTYPES
from memgym.datasets.voxmem.topics import TOPIC_FAMILIES, TopicFamily

STATE_CUES = ("hesitation", "surprise", "emphasis", "fast", "slow", "laughter")
"""Cues a paralinguistic evidence session can carry (neutral is the absence of one)."""
ORDINALS = ("first", "second", "third")
MIN_USERS = 2
"""Fewest users a history can have (speaker questions and re-voicing need a second voice)."""


class PlanError(MemgymError):
    """A plan that violates its validity constraints (used internally to redraw)."""


@dataclasses.dataclass
class _Draw:
    """Per-plan random choices."""

    rng: np.random.Generator
    family: TopicFamily
    subjects: list[str]
    users: list[str]
    asker: str
    sounds: list[str]

    def others(self) -> list[str]:
        return [u for u in self.users if u != self.asker]

    def other(self) -> str:
        return str(self.rng.choice(self.others()))

    def values(self, n: int) -> list[str]:
        return [str(v) for v in self.rng.choice(self.family.values, size=n, replace=False)]

    def cues(self, n: int, pool: tuple[str, ...] = STATE_CUES) -> list[str]:
        return [str(c) for c in self.rng.choice(pool, size=n, replace=False)]

    def sound_classes(self, n: int) -> list[str]:
        return [str(s) for s in self.rng.choice(self.sounds, size=n, replace=False)]

    def coin(self) -> bool:
        return bool(self.rng.random() < 0.5)


def plan_item(
    plan_id: str,
    evidence: str,
    operation: str,
    subtype: str,
    sounds: list[str],
    rng: np.random.Generator,
    users: int = 3,
) -> Plan:
    """A valid plan for one cell and subtype (``operation`` not AR; see
    :func:`~memgym.datasets.voxmem.refusal.derive_refusal`).

    Args:
        plan_id: id of the plan.
        evidence, operation, subtype: the cell and one of its subtypes.
        sounds: environmental sound classes available (at least 4).
        rng: the item's generator.
        users: users in the history (ids ``u0`` .. ``u{users-1}``; ``u0`` asks); at least 2.
    Raises:
        MemgymError: an invalid cell/subtype, fewer than 2 users, too few sound classes, or no
            valid plan in 50 draws.
    """
    if (evidence, operation) not in BUILDABLE_CELLS or operation == "AR" or subtype not in SUBTYPES[operation]:
        raise MemgymError(f"no plan for cell {evidence}/{operation} with subtype '{subtype}'")
    if users < MIN_USERS:
        raise MemgymError(f"users: a VoxMem history needs at least {MIN_USERS} users, got {users}")
    if len(sounds) < 4:
        raise MemgymError(f"VoxMem needs at least 4 environmental sound classes, got {len(sounds)}")
    for _ in range(50):
        family = TOPIC_FAMILIES[int(rng.integers(len(TOPIC_FAMILIES)))]
        ids = [f"u{i}" for i in range(users)]
        draw = _Draw(rng, family, [str(s) for s in rng.permutation(family.subjects)], ids, "u0", list(sounds))
        query, question, intended, sessions = _LAYOUTS[operation](draw, evidence, subtype)
        try:
            return _validated(plan_id, evidence, operation, subtype, query, question, intended, sessions, ids)
        except PlanError:
            continue
    raise MemgymError(f"could not draw a valid plan for {evidence}/{operation}/{subtype} in 50 attempts")


def _validated(plan_id, evidence, operation, subtype, query, question, intended, sessions, users) -> Plan:
    facts = [s.fact for s in sorted(sessions, key=lambda s: (s.order < 0, s.order))]
    answer = answer_query(query, facts)
    if answer in (AMBIGUOUS, REFUSAL) or (intended is not None and answer != intended):
        raise PlanError(f"planned answer {intended!r} but the oracle gives {answer!r}")
    native = evidence in AUDIO_NATIVE
    if native and len(transcript_candidates(query, facts)) < 2:
        raise PlanError("answer recoverable from the transcript")
    return Plan(
        plan_id=plan_id,
        evidence=evidence,
        operation=operation,
        subtype=subtype,
        query=query,
        question=question,
        answer=answer,
        users=tuple(users),
        sessions=tuple(sessions),
        audio_native=native,
        ordered=operation == "TET",
    )


def _fact(d: _Draw, subject: str, value: str, speaker: str, cue: str = "neutral", sound: str = "", update=False):
    return SessionFact(
        family=d.family.name, subject=subject, value=value, speaker=speaker, cue=cue, sound=sound, update=update
    )


def _ev(key: str, fact: SessionFact, order: int = -1) -> SessionPlan:
    return SessionPlan(key=key, role="evidence", fact=fact, order=order)


def _hs(key: str, fact: SessionFact) -> SessionPlan:
    return SessionPlan(key=key, role="haystack", fact=fact)


def _ambient(d: _Draw, evidence: str) -> str:
    """Background sound for a session whose sound is not evidence (some sessions have one)."""
    return "" if evidence == "sound" or d.rng.random() < 0.6 else str(d.rng.choice(d.sounds))


# ----- information extraction ---------------------------------------------------------------------
def _layout_ie(d: _Draw, ev: str, sub: str):
    s0, s1, s2 = d.subjects[:3]
    v0, v1, v2 = d.values(3)
    q = dict(evidence=ev, operation="IE", subtype=sub, asker=d.asker, family=d.family.name, subjects=(s0,))
    if ev == "semantics":
        return _semantics_ie(d, q, sub, (s0, s1, s2), (v0, v1, v2))
    if sub == "context_to_cue":
        return _context_to_cue_ie(d, q, ev, (s0, s1, s2), (v0, v1, v2))
    return _cue_to_fact_ie(d, q, ev, (s0, s1, s2), (v0, v1, v2))


def _context_to_cue_ie(d: _Draw, q: dict, ev: str, subjects: tuple, values: tuple):
    """Speaker / paralinguistic / sound IE, context to cue: the question names the statement about
    ``s0`` and asks who said it, how it sounded or what was heard; the other two subjects' sessions
    differ in that cue."""
    s0, s1, s2 = subjects
    v0, v1, v2 = values
    slot = d.family.slot
    if ev == "speaker":
        mine = d.coin()
        speaker = d.asker if mine else d.other()
        sessions = [
            _ev("ev0", _fact(d, s0, v0, speaker, sound=_ambient(d, ev))),
            _hs("hs0", _fact(d, s1, v1, d.other() if mine else d.asker)),
            _hs("hs1", _fact(d, s2, v2, str(d.rng.choice(d.users)))),
        ]
        question = f"Was I the one who told you the {slot} for {s0}?"
        return Query(**q), question, "yes" if mine else "no", sessions
    if ev == "paralinguistic":
        c0, c1, c2 = d.cues(3)
        sessions = [
            _ev("ev0", _fact(d, s0, v0, d.asker, cue=c0, sound=_ambient(d, ev))),
            _hs("hs0", _fact(d, s1, v1, d.asker, cue=c1)),
            _hs("hs1", _fact(d, s2, v2, d.asker, cue=c2)),
        ]
        question = f"How did I sound when I told you the {slot} for {s0}?"
        return Query(**q), question, CUE_WORDS[c0], sessions
    a0, a1, a2 = d.sound_classes(3)
    sessions = [
        _ev("ev0", _fact(d, s0, v0, d.asker, sound=a0)),
        _hs("hs0", _fact(d, s1, v1, d.asker, sound=a1)),
        _hs("hs1", _fact(d, s2, v2, d.asker, sound=a2)),
    ]
    question = f"What could be heard in the background when I told you the {slot} for {s0}?"
    return Query(**q), question, sound_label(a0), sessions


def _cue_to_fact_ie(d: _Draw, q: dict, ev: str, subjects: tuple, values: tuple):
    """Speaker / paralinguistic / sound IE, cue to fact: the question names the cue (the asker, a
    way of sounding, a background sound) and asks the value given for ``s0``; a distractor on
    ``s0`` differs only in that cue."""
    s0, s1, _ = subjects
    v0, v1, v2 = values
    slot = d.family.slot
    if ev == "speaker":
        sessions = [
            _ev("ev0", _fact(d, s0, v0, d.asker, sound=_ambient(d, ev))),
            _hs("hs0", _fact(d, s0, v1, d.other(), sound=_ambient(d, ev))),
            _hs("hs1", _fact(d, s1, v2, d.asker)),
        ]
        question = f"What {slot} did I tell you for {s0}?"
        return Query(**q), question, v0, sessions
    if ev == "paralinguistic":
        c0, c1 = d.cues(2)
        sessions = [
            _ev("ev0", _fact(d, s0, v0, d.asker, cue=c0)),
            _hs("hs0", _fact(d, s0, v1, d.asker, cue=c1)),
            _hs("hs1", _fact(d, s1, v2, d.asker, cue=c0)),
        ]
        question = f"When I sounded {CUE_WORDS[c0]} telling you about {s0}, what {slot} did I give?"
        return Query(**q, cue=c0), question, v0, sessions
    a0, a1 = d.sound_classes(2)
    sessions = [
        _ev("ev0", _fact(d, s0, v0, d.asker, sound=a0)),
        _hs("hs0", _fact(d, s0, v1, d.asker, sound=a1)),
        _hs("hs1", _fact(d, s1, v2, d.asker, sound=a0)),
    ]
    question = f"When the sound of {sound_label(a0)} could be heard in the background, what {slot} did I give for {s0}?"
    return Query(**q, sound=a0), question, v0, sessions


def _semantics_ie(d: _Draw, q: dict, sub: str, subjects: tuple, values: tuple):
    """Semantics IE (not one of the paper's cells): the value stated in the one session on ``s0``,
    by any user. Context-to-cue: other subjects' values around it; cue-to-fact: also a session on
    ``s0`` that states no value, so the session is found by what it says, not by its subject."""
    s0, s1, s2 = subjects
    v0, v1, v2 = values
    sessions = [_ev("ev0", _fact(d, s0, v0, str(d.rng.choice(d.users))))]
    if sub == "context_to_cue":
        sessions += [_hs("hs0", _fact(d, s1, v1, str(d.rng.choice(d.users)))), _hs("hs1", _fact(d, s2, v2, d.asker))]
    else:
        sessions += [_hs("hs0", _fact(d, s0, "", str(d.rng.choice(d.users)))), _hs("hs1", _fact(d, s1, v1, d.asker))]
    verb = "given" if sub == "context_to_cue" else "settled"
    return Query(**q), f"What {d.family.slot} was {verb} for {s0}?", v0, sessions


# ----- multi-session reasoning ----------------------------------------------------------------------
def _layout_msr(d: _Draw, ev: str, sub: str):
    s0, s1, s2 = d.subjects[:3]
    q = dict(evidence=ev, operation="MSR", subtype=sub, asker=d.asker, family=d.family.name)
    if sub == "counting":
        return _msr_counting(d, ev, q, s0, s1)
    values = d.values(3)
    same = d.coin()
    if sub == "matching":
        return _msr_matching(d, ev, q, (s0, s1, s2), values, same)
    return _msr_comparing(d, ev, q, (s0, s1, s2), values, same)


def _a(noun: str) -> str:
    """``noun`` with its indefinite article ("a budget", "an oven time")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _msr_counting(d: _Draw, ev: str, q: dict, s0: str, s1: str):
    """How many sessions (or people) gave ``s0``'s slot, or sounded / were heard a given way."""
    slot = d.family.slot
    values = d.values(4)
    if ev == "semantics":
        k = int(d.rng.integers(2, 4))
        sessions = [_ev(f"ev{i}", _fact(d, s0, values[i], str(d.rng.choice(d.users)))) for i in range(k)]
        sessions += [_hs("hs0", _fact(d, s0, "", d.asker)), _hs("hs1", _fact(d, s1, values[3], d.other()))]
        question = f"In how many of our conversations was {_a(slot)} for {s0} given?"
        return Query(**q, subjects=(s0,)), question, str(k), sessions
    if ev == "speaker":
        speakers = [str(u) for u in d.rng.choice(d.users, size=3)]
        sessions = [_ev(f"ev{i}", _fact(d, s0, values[i], speakers[i])) for i in range(3)]
        sessions.append(_hs("hs0", _fact(d, s1, values[3], d.other())))
        question = f"How many different people told you {_a(slot)} for {s0}?"
        return Query(**q, subjects=(s0,)), question, str(len(set(speakers))), sessions
    m = int(d.rng.integers(1, 3))
    if ev == "paralinguistic":
        target, *rest = d.cues(3)
        cues = [target] * m + rest[: 3 - m]
        sessions = [_ev(f"ev{i}", _fact(d, s0, values[i], d.asker, cue=cues[i])) for i in range(3)]
        sessions.append(_hs("hs0", _fact(d, s1, values[3], d.asker, cue=target)))
        question = f"In how many of our conversations about {s0} did I sound {CUE_WORDS[target]}?"
        return Query(**q, subjects=(s0,), cue=target), question, str(m), sessions
    target, *rest = d.sound_classes(3)
    sounds = [target] * m + rest[: 3 - m]
    sessions = [_ev(f"ev{i}", _fact(d, s0, values[i], str(d.rng.choice(d.users)), sound=sounds[i])) for i in range(3)]
    sessions.append(_hs("hs0", _fact(d, s1, values[3], d.asker, sound=target)))
    question = f"In how many of our conversations about {s0} could the sound of {sound_label(target)} be heard?"
    return Query(**q, subjects=(s0,), sound=target), question, str(m), sessions


def _msr_matching(d: _Draw, ev: str, q: dict, subjects: tuple, values: list, same: bool):
    """Whether two subjects' sessions share a value, speaker, tone or background sound."""
    s0, s1, s2 = subjects
    v0, v1, v2 = values
    slot = d.family.slot
    if ev == "semantics":
        sessions = [
            _ev("ev0", _fact(d, s0, v0, str(d.rng.choice(d.users)))),
            _ev("ev1", _fact(d, s1, v0 if same else v1, str(d.rng.choice(d.users)))),
            _hs("hs0", _fact(d, s2, v2, str(d.rng.choice(d.users)))),
        ]
        question = f"Was the {slot} for {s0} the same as the {slot} for {s1}?"
    elif ev == "speaker":
        x = str(d.rng.choice(d.users))
        y = x if same else str(d.rng.choice([u for u in d.users if u != x]))
        sessions = [
            _ev("ev0", _fact(d, s0, v0, x, sound=_ambient(d, ev))),
            _ev("ev1", _fact(d, s1, v1, y, sound=_ambient(d, ev))),
            _hs("hs0", _fact(d, s2, v2, str(d.rng.choice(d.users)))),
        ]
        question = f"Was it the same person who told you the {slot} for {s0} and the {slot} for {s1}?"
    elif ev == "paralinguistic":
        c0, c1, c2 = d.cues(3)
        sessions = [
            _ev("ev0", _fact(d, s0, v0, d.asker, cue=c0)),
            _ev("ev1", _fact(d, s1, v1, d.asker, cue=c0 if same else c1)),
            _hs("hs0", _fact(d, s2, v2, d.asker, cue=c2)),
        ]
        question = f"Did I sound the same way when I told you about {s0} as when I told you about {s1}?"
    else:
        a0, a1, a2 = d.sound_classes(3)
        sessions = [
            _ev("ev0", _fact(d, s0, v0, str(d.rng.choice(d.users)), sound=a0)),
            _ev("ev1", _fact(d, s1, v1, str(d.rng.choice(d.users)), sound=a0 if same else a1)),
            _hs("hs0", _fact(d, s2, v2, str(d.rng.choice(d.users)), sound=a2)),
        ]
        question = f"Could the same sound be heard in the background when we talked about {s0} and about {s1}?"
    return Query(**q, subjects=(s0, s1)), question, "yes" if same else "no", sessions


def _msr_comparing(d: _Draw, ev: str, q: dict, subjects: tuple, values: list, same: bool):
    """Which of two subjects is higher, mentioned more, spoken faster, or which sound is heard more."""
    s0, s1, s2 = subjects
    v0, v1, v2 = values
    slot = d.family.slot
    if ev == "semantics":
        sessions = [
            _ev("ev0", _fact(d, s0, v0, str(d.rng.choice(d.users)))),
            _ev("ev1", _fact(d, s1, v1, str(d.rng.choice(d.users)))),
            _hs("hs0", _fact(d, s2, v2, str(d.rng.choice(d.users)))),
        ]
        question = f"Which had the {d.family.higher} {slot}: {s0} or {s1}?"
        return Query(**q, subjects=(s0, s1)), question, None, sessions
    if ev == "speaker":
        win, lose = (s0, s1) if same else (s1, s0)
        values = d.values(5)
        sessions = [
            _ev("ev0", _fact(d, win, values[0], d.asker)),
            _ev("ev1", _fact(d, win, values[1], d.asker)),
            _ev("ev2", _fact(d, lose, values[2], d.asker)),
            _hs("hs0", _fact(d, lose, values[3], d.other())),
            _hs("hs1", _fact(d, lose, values[4], d.other())),
        ]
        question = f"Which did I talk to you about in more of our conversations: {s0} or {s1}?"
        return Query(**q, subjects=(s0, s1)), question, win, sessions
    if ev == "paralinguistic":
        r0, r1 = [str(c) for c in d.rng.choice(["slow", "neutral", "fast"], size=2, replace=False)]
        sessions = [
            _ev("ev0", _fact(d, s0, v0, d.asker, cue=r0)),
            _ev("ev1", _fact(d, s1, v1, d.asker, cue=r1)),
            _hs("hs0", _fact(d, s2, v2, d.asker, cue=str(d.rng.choice(["slow", "fast"])))),
        ]
        question = f"When I told you about {s0} and about {s1}, in which case did I speak faster?"
        return Query(**q, subjects=(s0, s1)), question, None, sessions
    a, b = d.sound_classes(2)
    values = d.values(4)
    sounds = [a, a, b]
    sessions = [_ev(f"ev{i}", _fact(d, s0, values[i], str(d.rng.choice(d.users)), sound=sounds[i])) for i in range(3)]
    sessions.append(_hs("hs0", _fact(d, s1, values[3], d.asker, sound=b)))
    options = (a, b) if same else (b, a)
    question = (
        f"When we talked about {s0}, which could be heard more often in the background: "
        f"{sound_label(options[0])} or {sound_label(options[1])}?"
    )
    return Query(**q, subjects=(s0,), options=options), question, sound_label(a), sessions


# ----- temporal evolution tracking ---------------------------------------------------------------
def _layout_tet(d: _Draw, ev: str, sub: str):
    s0, s1 = d.subjects[:2]
    slot = d.family.slot
    values = d.values(5)
    k = 3
    if ev == "semantics":
        facts = [_fact(d, s0, values[i], str(d.rng.choice(d.users)), update=i > 0) for i in range(k)]
    elif ev == "speaker":
        pattern = [d.asker, d.other(), d.asker] if d.coin() else [d.other(), d.asker, d.other()]
        facts = [_fact(d, s0, values[i], pattern[i], sound=_ambient(d, ev)) for i in range(k)]
    elif ev == "paralinguistic":
        first, second = d.cues(2)
        cues = [first, second, str(d.rng.choice([c for c in STATE_CUES if c != second]))]
        facts = [_fact(d, s0, values[i], d.asker, cue=cues[i]) for i in range(k)]
    else:
        first, second = d.sound_classes(2)
        sounds = [first, second, str(d.rng.choice([s for s in d.sounds if s != second]))]
        facts = [_fact(d, s0, values[i], str(d.rng.choice(d.users)), sound=sounds[i]) for i in range(k)]
    sessions = [_ev(f"ev{i}", f, order=i) for i, f in enumerate(facts)]
    sessions.append(_hs("hs0", _fact(d, s1, values[3], str(d.rng.choice(d.users)), sound=_ambient(d, "x"))))
    sessions.append(_hs("hs1", _fact(d, s1, values[4], str(d.rng.choice(d.users)), update=True)))
    point = int(d.rng.integers(0, 2))
    nth = ORDINALS[point]
    topic = f"the {slot} for {s0}"
    question = {
        "semantics": {
            "latest": f"What is the latest {slot} for {s0}?",
            "at_point": f"What was {topic} the {nth} time it came up?",
            "full_sequence": f"In order, what was {topic} each time it came up?",
        },
        "speaker": {
            "latest": f"The last time someone told you {topic}, was it me or someone else?",
            "at_point": f"The {nth} time {topic} came up, was it me or someone else telling you?",
            "full_sequence": f"In order, each time {topic} came up, was it me or someone else telling you?",
        },
        "paralinguistic": {
            "latest": f"How did I sound the last time I told you {topic}?",
            "at_point": f"How did I sound the {nth} time I told you {topic}?",
            "full_sequence": f"In order, how did I sound each time I told you {topic}?",
        },
        "sound": {
            "latest": f"What could be heard in the background the last time {topic} came up?",
            "at_point": f"What could be heard in the background the {nth} time {topic} came up?",
            "full_sequence": f"In order, what could be heard in the background each time {topic} came up?",
        },
    }[ev][sub]
    query = Query(
        evidence=ev, operation="TET", subtype=sub, asker=d.asker, family=d.family.name, subjects=(s0,), point=point
    )
    return query, question, None, sessions


_LAYOUTS = {"IE": _layout_ie, "MSR": _layout_msr, "TET": _layout_tet}
