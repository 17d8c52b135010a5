"""Assembling an item's nested histories: its core sessions, then haystacks and fillers added level
by level until each budget is full.

Every budget level adds up to ``haystacks_per_level`` haystacks and then fillers, so each longer
history holds more of both. A haystack is kept only when the oracle still gives every answer the
history must keep (:class:`AnswerCheck`), and no session goes into more than
``max_session_reuse`` items' histories.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from memgym.backends.tts.base import Voice
from memgym.core.errors import MemgymError
from memgym.datasets.speech.voices import assign_voices
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.datasets.voxmem.history import BudgetTooSmallError, core_order, nest_histories, timestamps
from memgym.datasets.voxmem.layout import ItemLayout
from memgym.datasets.voxmem.oracle import answer_query
from memgym.datasets.voxmem.plans import STATE_CUES
from memgym.datasets.voxmem.records import Plan, Query, Session, SessionFact
from memgym.datasets.voxmem.refusal import derive_refusal
from memgym.datasets.voxmem.sessions import SessionWriter
from memgym.datasets.voxmem.taxonomy import REFUSAL
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME

AR_HEADROOM = 0.4
"""Share of the evidence's tokens left free in the histories of items an AR item can be derived
from, so the edit (a statement re-voiced by a slower voice: at most 200/145 wpm = +38 %, or a cue
removed) cannot push the reused history over its budget."""
FIT_ATTEMPTS = 6
"""New candidate sessions tried when the next one does not fit the remaining budget."""
HAYSTACK_TRIES = 20
"""Candidate haystacks drawn per added haystack before a level falls back to fillers."""


def _ordered_facts(plan: Plan) -> list[SessionFact]:
    """The plan's facts with ranked (TET) sessions first in rank order, as the oracle reads them."""
    return [s.fact for s in sorted(plan.sessions, key=lambda s: (s.order < 0, s.order))]


@dataclasses.dataclass
class AnswerCheck:
    """A query, the facts of a history so far and the answer they must keep giving."""

    query: Query
    facts: list[SessionFact]
    answer: str

    def holds_with(self, fact: SessionFact) -> bool:
        """Whether the answer stays with ``fact`` added wherever it lands in the history (a
        haystack on the question's subject could otherwise change a latest or ordered answer)."""
        return all(
            answer_query(self.query, [*self.facts[:k], fact, *self.facts[k:]]) == self.answer
            for k in range(len(self.facts) + 1)
        )


@dataclasses.dataclass
class History:
    """An item's assembled history (shared with the AR items derived from it)."""

    placed: list[Any]  # core index (int) or extra Session
    histories: dict[int, list[int]]
    stamps: list[str]
    voices: dict[str, Voice]


@dataclasses.dataclass(eq=False)
class HistoryAssembler:
    """Grows the nested histories of the items of one build.

    Args:
        config: the build config (``haystacks_per_level``, ``length_control``,
            ``refusal_scope``, ``max_session_reuse``).
        budgets: the build's budgets, ascending (tokens).
        sessions: writes and renders the sessions.
        layout: the build's items (whether an item may be the source of an AR item).
        voice_bank: the voices users are given.
    Attributes:
        usage: session id -> ids of the items whose histories hold it (the builder adds each
            kept item's sessions).
    """

    config: VoxMemConfig
    budgets: list[int]
    sessions: SessionWriter
    layout: ItemLayout
    voice_bank: list[Voice]
    usage: dict[str, set[str]] = dataclasses.field(default_factory=dict, init=False)

    @property
    def sound_classes(self) -> list[str]:
        """The background sounds a session may carry (the session writer's)."""
        return self.sessions.sound_classes

    def assemble(self, plan: Plan, pool: list[Plan], rng: np.random.Generator) -> tuple[History, list[Session]]:
        """Render the plan's sessions and grow its nested histories.

        Every budget level adds up to ``haystacks_per_level`` haystacks (:meth:`_next_haystack`)
        and then fillers, so each longer history holds more of both (:class:`_Extras`). Under
        ``length_control=fixed_competition`` the haystacks added above the smallest budget are
        never on the question's subjects (:meth:`fixed_competition`). An item an AR item may be
        derived from keeps :data:`AR_HEADROOM` of its evidence's tokens free.
        """
        voices = assign_voices(list(plan.users), self.voice_bank, rng)
        # fillers depend on this item's generator only
        self.sessions.next_filler = int(rng.integers(len(self.sessions.fillers)))
        core = [self.sessions.topical_session(s.fact, s.role, voices, "written") for s in plan.sessions]
        order = core_order([s.order for s in plan.sessions], rng)
        can_be_edited = self.layout.may_be_refused(plan)
        extras = _Extras(
            self, plan, self._borrowable(plan, pool), self._answer_checks(plan, can_be_edited), voices, rng
        )
        evidence_tokens = sum(c.tokens for c, s in zip(core, plan.sessions) if s.role == "evidence")
        headroom = int(AR_HEADROOM * evidence_tokens) if can_be_edited else 0  # AR edits happen in place
        try:
            placed, histories = nest_histories(
                [s.tokens for s in core], order, self.budgets, extras.next_extra, rng, headroom=headroom
            )
        except BudgetTooSmallError as exc:
            raise BudgetTooSmallError(f"item {plan.plan_id} ({plan.cell}/{plan.subtype}): {exc}") from None
        stamps = timestamps(len(placed), rng)
        stamp_of = {idx: stamps[k] for k, idx in enumerate(histories[self.budgets[-1]])}
        history = History(placed, histories, [stamp_of[i] for i in range(len(placed))], voices)
        return history, core

    @staticmethod
    def _borrowable(plan: Plan, pool: list[Plan]) -> list[tuple[str, SessionFact]]:
        """``(plan id, fact)`` of the evidence sessions of other items on ``plan``'s topic family
        whose subjects ``plan`` does not use: haystacks it may borrow, in pool order."""
        used_subjects = {s.fact.subject for s in plan.sessions} | set(plan.query.subjects)
        return [
            (p.plan_id, s.fact)
            for p in pool
            if p.query.family == plan.query.family and p.plan_id != plan.plan_id
            for s in p.sessions
            if s.role == "evidence" and s.fact.subject not in used_subjects
        ]

    def _answer_checks(self, plan: Plan, can_be_edited: bool) -> list[AnswerCheck]:
        """The answers ``plan``'s history must keep giving: its own and, when an AR item may be
        derived from it, that item's refusal (an added session must not give it an answer)."""
        checks = [AnswerCheck(plan.query, _ordered_facts(plan), plan.answer)]
        if can_be_edited:
            refused = derive_refusal(plan, "", self.config.refusal_scope)
            checks.append(AnswerCheck(plan.query, _ordered_facts(refused), REFUSAL))
        return checks

    def fixed_competition(self, budget: int) -> bool:
        """Whether haystacks added while filling ``budget`` stay off the question's subjects
        (``length_control=fixed_competition`` above the smallest budget)."""
        return self.config.length_control == "fixed_competition" and budget > self.budgets[0]

    def _next_haystack(self, plan, borrowable, checks, voices, rng, *, on_subject: bool = True) -> Session | None:
        """A haystack for ``plan``'s history that supplies no alternative answer, or ``None``.

        For audio-native items every other haystack is first tried on the question's own subject
        (:meth:`_written_haystack` with ``same_subject``: told from the evidence only by voice, tone
        or background), so longer histories hold more sessions that topic matching cannot rule
        out; otherwise evidence sessions borrowed from other items on the same topic family come
        first, then sessions written for the item on other subjects. Each is kept only when the
        oracle still gives every answer in ``checks`` with it (the item's, and the refusal of the
        AR item derivable from it), its fact is not already in the history, and the session is not
        yet in ``max_session_reuse`` items' histories.
        """
        topical_first = on_subject and plan.audio_native and (len(checks[0].facts) - len(plan.sessions)) % 2 == 0
        for attempt in range(HAYSTACK_TRIES):
            if topical_first and attempt < HAYSTACK_TRIES // 2:
                fact, source = self._written_haystack(plan, rng, same_subject=True), "written"
            elif borrowable:
                source_id, fact = borrowable.pop(0)
                source = f"borrowed:{source_id}"
                fact = dataclasses.replace(fact, speaker=fact.speaker if fact.speaker in voices else plan.users[-1])
            else:
                fact, source = self._written_haystack(plan, rng), "written"
            if fact in checks[0].facts or not all(check.holds_with(fact) for check in checks):
                continue  # (a fact already in this history would repeat one of its sessions)
            session = self.sessions.topical_session(fact, "haystack", voices, source)
            if len(self.usage.get(session.session_id, ())) >= self.config.max_session_reuse:
                continue
            for check in checks:
                check.facts.append(fact)
            return session
        return None

    def _written_haystack(self, plan: Plan, rng: np.random.Generator, *, same_subject: bool = False) -> SessionFact:
        """A haystack written for ``plan``: one of its evidence sessions with another value (phrased
        the same way, so words do not tell it from evidence), by any user, in the question's cue or
        sound half the time for paralinguistic / sound items; moved to another subject of its
        family, or with ``same_subject`` kept on one of the question's subjects, where only the
        acoustic evidence (voice, tone, background) tells it from the evidence."""
        query = plan.query
        evidence = [s.fact for s in plan.sessions if s.role == "evidence"]
        like = evidence[int(rng.integers(len(evidence)))]
        family = FAMILY_BY_NAME[query.family]
        cue, sound = "neutral", ""
        if query.evidence == "paralinguistic":
            cue = query.cue if query.cue and rng.random() < 0.5 else str(rng.choice(STATE_CUES))
        targets = [x for x in (query.sound, *query.options) if x]
        if query.evidence == "sound":
            sound = str(rng.choice(targets)) if targets and rng.random() < 0.5 else str(rng.choice(self.sound_classes))
        elif rng.random() < 0.4:
            sound = str(rng.choice(self.sound_classes))
        return dataclasses.replace(
            like,
            subject=str(
                rng.choice(
                    list(query.subjects) if same_subject else [x for x in family.subjects if x not in query.subjects]
                )
            ),
            value=str(rng.choice([v for v in family.values if v != like.value])),
            speaker=str(rng.choice(plan.users)),
            cue=cue,
            sound=sound,
        )

    def _next_filler(self, voices: dict[str, Voice], rng: np.random.Generator) -> Session:
        for _ in range(len(self.sessions.fillers) + 1):
            session = self.sessions.filler_session(voices, rng)
            if len(self.usage.get(session.session_id, ())) < self.config.max_session_reuse:
                return session
        raise MemgymError(
            f"every filler dialogue is already used by {self.config.max_session_reuse} items; "
            "raise max_session_reuse or provide a larger filler corpus (filler_path)"
        )


@dataclasses.dataclass(eq=False)
class _Extras:
    """The sessions one item's history grows by, level by level (:func:`nest_histories`'s
    ``next_extra``): this level's haystacks first, then fillers; a rendered candidate that does
    not fit yet waits in ``pending`` and is used first later.
    """

    assembler: HistoryAssembler
    plan: Plan
    borrowable: list[tuple[str, SessionFact]]
    checks: list[AnswerCheck]
    voices: dict[str, Voice]
    rng: np.random.Generator
    level_haystacks: dict[int, int] = dataclasses.field(init=False)  # haystacks placed at each level
    pending: list[Session] = dataclasses.field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.level_haystacks = {budget: 0 for budget in self.assembler.budgets}

    def next_extra(self, remaining: int, budget: int) -> tuple[Session, int] | None:
        """The next session of at most ``remaining`` tokens while filling ``budget``, with its
        tokens; None when neither a haystack nor a filler fits."""
        more = self.level_haystacks[budget] < self.assembler.config.haystacks_per_level
        for haystack in (True, False) if more else (False,):
            candidate = self._waiting(haystack, remaining, budget)
            if candidate is None:
                candidate = self._fresh(haystack, remaining, budget)
            if candidate is not None:
                self.level_haystacks[budget] += haystack
                return candidate, candidate.tokens
        return None

    def _waiting(self, haystack: bool, remaining: int, budget: int) -> Session | None:
        """The first pending candidate of the kind that fits (a same-subject haystack the length
        control keeps out of ``budget`` does not)."""
        for k, c in enumerate(self.pending):
            if (
                (c.role == "haystack") == haystack
                and c.tokens <= remaining
                and not (haystack and self._competing(c, budget))
            ):
                return self.pending.pop(k)
        return None

    def _fresh(self, haystack: bool, remaining: int, budget: int) -> Session | None:
        """A new candidate that fits, trying :data:`FIT_ATTEMPTS` (the others wait in ``pending``);
        None when none fits or no haystack is left."""
        for _ in range(FIT_ATTEMPTS):
            new = self._draw(haystack, budget)
            if new is None or new.tokens <= remaining:
                return new
            self.pending.append(new)
        return None

    def _draw(self, haystack: bool, budget: int) -> Session | None:
        assembler = self.assembler
        if haystack:
            on_subject = not assembler.fixed_competition(budget)
            return assembler._next_haystack(
                self.plan, self.borrowable, self.checks, self.voices, self.rng, on_subject=on_subject
            )
        return assembler._next_filler(self.voices, self.rng)

    def _competing(self, session: Session, budget: int) -> bool:
        """A same-subject haystack the length control keeps out of ``budget``."""
        return self.assembler.fixed_competition(budget) and session.fact.subject in self.plan.query.subjects
