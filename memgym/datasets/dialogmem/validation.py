"""Validation of dialogue turns: rule checks, an optional LLM grounding audit, regenerate then drop.

Spec-level rules (a failing spec is dropped; rewording cannot fix it):

* **policy** -- :func:`~memgym.datasets.dialogmem.policy.policy_violations`;
* **visibility alignment** -- :func:`~memgym.datasets.dialogmem.policy.visibility_violations`;
* **settled episodic values** -- :func:`~memgym.datasets.dialogmem.policy.episodic_violations`;
* **chains** -- an update or correction needs its earlier version stated (and kept) first.

Text-level rules (a failing utterance is regenerated, up to ``max_attempts``, then dropped):

* **metadata leakage** -- object ids (``sofa_12``), key names (``times_seen``), braces, ``=``,
  coordinates or the fact-line marker must not appear;
* **format** -- one line, 3-50 words, ends with ``.``, ``!`` or ``?``, no ``Name:`` prefix;
* **grounding** -- the object's category and the content's value are named.

When an auditor (a reasoner) is configured, an utterance that passes the rules is also asked
about: "does it state exactly this content?"; only a strict ``yes`` keeps it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgym.backends.structured import words
from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.core.records import Record, record
from memgym.datasets.dialogmem.content import MemoryItem, ObservationLog
from memgym.datasets.dialogmem.policy import (
    TurnSpec,
    describe,
    episodic_violations,
    policy_violations,
    visibility_violations,
)
from memgym.datasets.dialogmem.residents import Resident

_OBJECT_ID = re.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+\b", re.IGNORECASE)
_SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b", re.IGNORECASE)
_MARKUP = re.compile(r"[{}\[\]<>=#|\\]")
_DECIMAL = re.compile(r"-?\d+\.\d+")
_PREFIX = re.compile(r"^\s*[A-Z][a-z]+\s*:")


@record("dialogmem.dialogue_turn")
@dataclasses.dataclass(frozen=True, kw_only=True)
class DialogueTurn(Record):
    """A realised, validated turn.

    Attributes:
        spec: what the turn says (speaker, step, type, references, content).
        text: the utterance.
        attempts: realisations tried before this one passed (1 = first try).
    """

    spec: TurnSpec
    text: str
    attempts: int = 1


@dataclasses.dataclass(frozen=True)
class Dropped:
    """A turn that did not make it, with why."""

    spec: TurnSpec
    reasons: tuple[str, ...]


def leakage_violations(text: str) -> list[str]:
    """Metadata that must never appear in an utterance."""
    problems = []
    if _OBJECT_ID.search(text):
        problems.append("leaks an object id")
    if _SNAKE.search(text):
        problems.append("leaks a field name")
    if _MARKUP.search(text) or "FACT" in text:
        problems.append("contains markup")
    if _DECIMAL.search(text):
        problems.append("leaks coordinates")
    return problems


def format_violations(text: str) -> list[str]:
    """Shape rules for one utterance."""
    problems = []
    if "\n" in text:
        problems.append("spans several lines")
    count = len(text.split())
    if not 3 <= count <= 50:
        problems.append(f"has {count} words (expected 3-50)")
    if not text.rstrip().endswith((".", "!", "?")):
        problems.append("does not end a sentence")
    if _PREFIX.match(text):
        problems.append("starts with a speaker prefix")
    return problems


def grounding_violations(text: str, item: MemoryItem | None) -> list[str]:
    """The utterance must name the item's object category and its value."""
    if item is None:
        return []
    said = " " + " ".join(words(text)) + " "
    problems = []
    if f" {' '.join(words(item.category))} " not in said:
        problems.append(f"does not name the {item.category}")
    if f" {' '.join(words(item.value))} " not in said:
        problems.append(f"does not state {item.value!r}")
    return problems


def text_violations(text: str, spec: TurnSpec) -> list[str]:
    """All text-level rule violations of an utterance for ``spec``."""
    return leakage_violations(text) + format_violations(text) + grounding_violations(text, spec.content)


AUDIT_PROMPT = """A dialogue line must state one fact about one object, and nothing else about objects.

Fact: {fact}.
Line: "{text}"

Does the line state this fact, without contradicting it and without adding other facts about objects? \
Reply with yes or no only."""


class GroundingAuditor:
    """LLM audit: does an utterance state exactly its spec's content? Only ``yes`` passes."""

    def __init__(self, reasoner: Reasoner) -> None:
        self.reasoner = reasoner

    def passes(self, text: str, spec: TurnSpec) -> bool:
        """True when the auditor answers a plain yes."""
        if spec.content is None:
            return True
        prompt = AUDIT_PROMPT.format(fact=describe(spec.content), text=text)
        reply = self.reasoner.generate([Message.text("user", prompt)], max_new_tokens=4)
        return reply.strip().strip(".").lower() == "yes"


def realise_dialogue(
    specs: Sequence[TurnSpec],
    residents: Sequence[Resident],
    realiser,
    log: ObservationLog,
    *,
    auditor: GroundingAuditor | None = None,
    max_attempts: int = 3,
    seed: int | None = None,
    history: Sequence[DialogueTurn] = (),
) -> tuple[list[DialogueTurn], list[Dropped]]:
    """Validate, realise and re-realise ``specs`` in order; returns (kept turns, dropped).

    A later version of a social chain is dropped when an earlier version was dropped, so a
    kept update or correction always follows the statement it changes. With ``seed`` (drawn from
    the episode's generator), attempt ``a`` of turn ``t`` is worded with the generator seeded by
    ``(seed, t, a)``. ``history``: turns realised before (a second pass) that the realiser sees as
    context when they were said at or before a spec's step.
    """
    by_name = {r.name: r for r in residents}
    kept: list[DialogueTurn] = []
    dropped: list[Dropped] = []
    versions: dict[tuple[str, str], tuple[int, int]] = {}
    for spec in sorted(specs, key=lambda s: (s.step, s.turn_id)):
        reasons = _spec_violations(spec, log, versions, by_name)
        if reasons:
            dropped.append(Dropped(spec, tuple(reasons)))
            continue
        said = [t for t in history if t.spec.step <= spec.step] + kept
        context = [f"{t.spec.speaker}: {t.text}" for t in said]
        turn, problems = _realise_turn(spec, by_name[spec.speaker], context, realiser, auditor, max_attempts, seed)
        if turn is None:
            dropped.append(Dropped(spec, tuple(f"after {max_attempts} attempts: {p}" for p in problems)))
            continue
        kept.append(turn)
        item = spec.content
        if item is not None and item.type == "social":
            versions[(item.object_id, item.key)] = (item.version, spec.step)
    kept = [dataclasses.replace(t, spec=dataclasses.replace(t.spec, turn_id=i)) for i, t in enumerate(kept)]
    return kept, dropped


def _spec_violations(
    spec: TurnSpec,
    log: ObservationLog,
    versions: dict[tuple[str, str], tuple[int, int]],
    by_name: Mapping[str, Resident],
) -> list[str]:
    """Why ``spec`` cannot be said (none: it can): the policy, visibility and episodic rules, a
    later version of a social chain whose earlier version was not kept (``versions``: (object,
    key) -> (version, step) of the latest kept statement), an unknown speaker."""
    reasons = policy_violations(spec) + visibility_violations(spec, log) + episodic_violations(spec, log)
    item = spec.content
    if item is not None and item.type == "social" and item.version > 0:
        prior = versions.get((item.object_id, item.key))
        if prior is None or prior[0] != item.version - 1 or prior[1] >= spec.step:
            reasons.append(f"{item.operation} without its earlier version stated first")
    if spec.speaker not in by_name:
        reasons.append(f"unknown speaker {spec.speaker!r}")
    return reasons


def _realise_turn(
    spec: TurnSpec,
    speaker: Resident,
    context: list[str],
    realiser: Any,
    auditor: GroundingAuditor | None,
    max_attempts: int,
    seed: int | None,
) -> tuple[DialogueTurn | None, list[str]]:
    """``(turn, [])`` for the first of ``max_attempts`` wordings of ``spec`` that breaks no text
    rule and passes the ``auditor``; ``(None, the last attempt's problems)`` when none does."""
    problems: list[str] = []
    for attempt in range(max_attempts):
        wording = {} if seed is None else {"rng": np.random.default_rng([seed, spec.turn_id, attempt])}
        text = realiser.realise(spec, speaker, context, attempt, **wording)
        problems = text_violations(text, spec)
        if not problems and auditor is not None and not auditor.passes(text, spec):
            problems = ["grounding audit failed"]
        if not problems:
            return DialogueTurn(spec=spec, text=text, attempts=attempt + 1), []
    return None, problems


def stated_items(items: Sequence[MemoryItem], turns: Sequence[DialogueTurn]) -> list[MemoryItem]:
    """``items`` with ``stated``/``time`` set from the kept turns only (first statement wins)."""
    said: dict[tuple[str, str, int], int] = {}
    for turn in turns:
        item = turn.spec.content
        if item is not None:
            said.setdefault((item.object_id, item.key, item.version), turn.spec.step)
    out = []
    for item in items:
        step = said.get((item.object_id, item.key, item.version))
        out.append(dataclasses.replace(item, stated=step is not None, time=step if step is not None else 0))
    return out
