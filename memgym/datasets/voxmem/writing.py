"""Dialogue writing: a session's user side and assistant side, authored independently.

The user side is written from the session's fact (subject and value, or no value); the
assistant side only from the topic family and subject -- it never sees the user's words, so it
cannot echo the value. Neither side names the speaker, the tone of voice or a background sound
(:func:`leaks` checks that, and LLM output that leaks is replaced by the template writer's).

* :class:`TemplateWriter` (default, offline): phrase banks with random choice.
* :class:`LLMWriter`: any :class:`~memgym.core.protocols.Reasoner`; each side is one request;
  output is validated (the value said exactly once, nothing leaked, turn count) and falls back to
  the template writer when invalid, recording which writer produced the session.
  :func:`paraphrase_question` rewords template questions the same way (the structured query,
  not the wording, defines the answer).
"""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence

import numpy as np

from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.voxmem.records import SessionFact
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME

_OPENERS = (
    "I wanted to talk about {subject} for a minute.",
    "Can we go over {subject} again?",
    "So I've been thinking about {subject} lately.",
    "Let's sort out the details of {subject}.",
    "I need some help planning {subject}.",
)
_STATEMENTS = (
    "For {subject}, the {slot} is going to be {value}.",
    "I've decided the {slot} for {subject} should be {value}.",
    "Just so you know, the {slot} for {subject} is {value}.",
    "We settled on {value} as the {slot} for {subject}.",
)
_UPDATES = (
    "Change of plans for {subject}: the {slot} is now {value}.",
    "Update on {subject}, the {slot} has changed to {value}.",
    "Actually, the {slot} for {subject} is now {value} instead.",
)
_NO_VALUE = (
    "I still haven't settled on the {slot} for {subject}.",
    "The {slot} for {subject} is still up in the air.",
    "I'm not sure yet about the {slot} for {subject}.",
)
_CLOSERS = (
    "Can you keep that in mind for later?",
    "What should I prepare next?",
    "Does that seem reasonable to you?",
    "Thanks, that helps a lot.",
    "Any tips before I get started?",
)
_ASSISTANT = (
    "That seems like a solid plan for {subject}. Writing down the key details usually helps.",
    "Good to know. For {subject}, it helps to set a reminder a few days ahead.",
    "Got it. Many people find it useful to break {subject} into smaller steps.",
    "Thanks for the update. I'll keep {subject} in mind when we talk next time.",
    "Sure. A short checklist for {subject} can save time later.",
    "Happy to help with {subject}. Let me know if anything changes.",
    "Great. Checking the details of {subject} once more before the day is wise.",
)

FORBIDDEN = re.compile(
    r"\b(voice|tone|sound(?:ed|s|ing)?|background|noise|heard|hear|speaker|accent|laugh\w*|"
    + "|".join(sorted({w for words in CUE_WORDS.values() for w in words.split() if len(w) > 3}))
    + r")\b",
    re.IGNORECASE,
)
"""Words a dialogue must not contain: they would put speaker, tone or sound into the transcript."""


def leaks(text: str, sound_labels: list[str] = ()) -> bool:
    """True when ``text`` names a voice, tone, cue word or one of ``sound_labels``."""
    if FORBIDDEN.search(text):
        return True
    return any(re.search(rf"\b{re.escape(label)}\b", text, re.IGNORECASE) for label in sound_labels)


class DialogueWriter(abc.ABC):
    """Writes the turns of a topical session."""

    name = "writer"

    @abc.abstractmethod
    def write(self, fact: SessionFact, n_user: int, rng: np.random.Generator) -> tuple[list[str], list[str], str]:
        """``(user_texts, assistant_texts, writer_name)``: ``n_user`` turns per side."""


class TemplateWriter(DialogueWriter):
    """Offline template writer (the default)."""

    name = "template"

    def user_side(self, fact: SessionFact, n_user: int, rng: np.random.Generator) -> list[str]:
        """``n_user`` user utterances; exactly one states the value (or its absence)."""
        family = FAMILY_BY_NAME[fact.family]
        fill = {"subject": fact.subject, "slot": family.slot, "value": fact.value}
        if not fact.value:
            key = _NO_VALUE
        else:
            key = _UPDATES if fact.update else _STATEMENTS
        statement = _choice(rng, key).format(**fill)
        turns = [_choice(rng, _OPENERS).format(**fill), statement]
        closers = list(rng.permutation(_CLOSERS))
        while len(turns) < n_user:
            turns.append(str(closers.pop()))
        return turns[:n_user] if n_user >= 2 else [statement]

    def assistant_side(self, fact: SessionFact, n_turns: int, rng: np.random.Generator) -> list[str]:
        """``n_turns`` assistant replies written from the subject alone."""
        replies = rng.permutation(_ASSISTANT)[:n_turns]
        return [str(r).format(subject=fact.subject) for r in replies]

    def write(self, fact, n_user, rng):
        return self.user_side(fact, n_user, rng), self.assistant_side(fact, n_user, rng), self.name


class LLMWriter(DialogueWriter):
    """Writes both sides with a reasoner, each side in its own request.

    Args:
        reasoner: any :class:`Reasoner` (transformers, OpenAI-compatible endpoint, ...).
        fallback: writer used when the reasoner's output is invalid.
        sound_labels: sound names the text must not contain.
    """

    name = "llm"

    def __init__(self, reasoner: Reasoner, fallback: TemplateWriter | None = None, sound_labels=()) -> None:
        self.reasoner = reasoner
        self.fallback = fallback or TemplateWriter()
        self.sound_labels = list(sound_labels)

    def write(self, fact, n_user, rng):
        family = FAMILY_BY_NAME[fact.family]
        if fact.value:
            must = f'Exactly one line must state that the {family.slot} for {fact.subject} is "{fact.value}", word for word.'
            if fact.update:
                must += " Phrase it as a change from an earlier plan."
        else:
            must = f"One line must say the {family.slot} for {fact.subject} is not decided yet; give no value."
        user_prompt = (
            f"Write {n_user} short things a person says to a voice assistant about {fact.subject}, one per line, "
            f"no numbering. {must} Do not mention names, feelings, tone of voice, sounds or noises."
        )
        assistant_prompt = (
            f"Write {n_user} short, helpful replies a voice assistant gives during a chat about {fact.subject}, "
            f"one per line, no numbering. Do not state any specific {family.slot}, number, time or amount, and do "
            f"not mention names, feelings, tone of voice, sounds or noises."
        )
        user = _lines(self.reasoner.generate([Message.text("user", user_prompt)]))
        assistant = _lines(self.reasoner.generate([Message.text("user", assistant_prompt)]))
        template_user, template_assistant, _ = self.fallback.write(fact, n_user, rng)
        user_ok = self._user_lines_ok(user, fact, family.values, n_user)
        assistant_ok = len(assistant) >= n_user and not any(
            leaks(t, self.sound_labels) or any(v.lower() in t.lower() for v in family.values) for t in assistant
        )
        name = "llm" if user_ok and assistant_ok else ("llm+template" if user_ok or assistant_ok else "template")
        return (
            user[:n_user] if user_ok else template_user,
            assistant[:n_user] if assistant_ok else template_assistant,
            name,
        )

    def _user_lines_ok(self, user: list[str], fact: SessionFact, values: Sequence[str], n_user: int) -> bool:
        """Whether the reasoner's user lines can be kept: enough of them, no sound named, and the
        fact's value stated in exactly one of the first ``n_user`` (or, for an undecided slot, none
        of the family's ``values`` anywhere)."""
        if len(user) < n_user or any(leaks(t, self.sound_labels) for t in user):
            return False
        if fact.value:
            return sum(fact.value.lower() in t.lower() for t in user[:n_user]) == 1
        return not any(v.lower() in " ".join(user).lower() for v in values)


def paraphrase_question(reasoner: Reasoner, question: str, keep: list[str]) -> tuple[str, bool]:
    """Reword a template question with a reasoner; keep it unless every ``keep`` phrase survives.

    Returns:
        ``(question, rewritten)``: the reasoner's single-line question when valid (ends with
        ``?``, contains every phrase of ``keep`` verbatim), else the original and ``False``.
    """
    prompt = (
        "Rewrite this question so it sounds like a person casually asking a voice assistant. Keep its exact "
        "meaning, keep these phrases word for word: " + "; ".join(f'"{k}"' for k in keep) + ". Reply with the "
        f"question only.\n\nQuestion: {question}"
    )
    lines = _lines(reasoner.generate([Message.text("user", prompt)], max_new_tokens=96))
    candidate = lines[0].strip().strip('"') if lines else ""
    ok = candidate.endswith("?") and 0 < len(candidate) < 3 * len(question) + 40
    ok = ok and all(k.lower() in candidate.lower() for k in keep)
    return (candidate, True) if ok else (question, False)


def replace_phrase(text: str, old: str, new: str) -> str:
    """``text`` with every case-insensitive occurrence of ``old`` replaced by ``new``.

    An occurrence that starts with a capital letter (sentence start) keeps it: ``"The lamp"`` ->
    ``"The fence"`` for ``old="the lamp"``, ``new="the fence"``.
    """

    def swap(match: re.Match) -> str:
        return new[:1].upper() + new[1:] if match.group(0)[:1].isupper() else new

    return re.sub(re.escape(old), swap, text, flags=re.IGNORECASE)


def _lines(text: str) -> list[str]:
    return [re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", line).strip() for line in text.splitlines() if line.strip()]


def _choice(rng: np.random.Generator, options) -> str:
    return str(options[int(rng.integers(len(options)))])
