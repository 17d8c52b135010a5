"""Turning turn specifications into utterances.

Two realisers share one interface, ``realise(spec, speaker, context, attempt, rng) -> str``:

* :class:`TemplateRealiser` (default, offline): the grammar of
  :mod:`~memgym.datasets.dialogmem.grammar` (openers per speaking style, frames per turn type,
  discourse markers, several fact sentences per key and operation, synonyms), every choice drawn
  from a generator the episode's generator seeds (:func:`realise_dialogue
  <memgym.datasets.dialogmem.validation.realise_dialogue>`), so a regenerated turn is worded
  differently.
* :class:`LLMRealiser`: asks a reasoner backend (transformers, OpenAI-compatible endpoint) for one
  utterance, conditioned on the speaker's persona and the previous turns and constrained to the
  spec's content; the reply is cleaned (quotes, speaker prefixes, extra lines) and validated by
  :mod:`memgym.datasets.dialogmem.validation` like any other.

Neither ever sees or writes object ids; references use the category and the spec's content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.datasets.dialogmem.grammar import FRAMES, MARKERS, OPENERS, choose, fact_sentence, utterance
from memgym.datasets.dialogmem.policy import TurnSpec, describe
from memgym.datasets.dialogmem.residents import Resident

NAV_REFERENCES: dict[str, str] = {
    "color": "the {v} {c}",
    "material": "the {v} {c}",
    "size": "the {v} {c}",
    "room": "the {c} in the {v}",
    "on": "the {c} on the {v}",
    "near": "the {c} next to the {v}",
}
NAV_PATTERNS: dict[str, tuple[str, ...]] = {
    "formal": ("Would you please go to {r}?", "Kindly make your way to {r}.", "Please proceed to {r}."),
    "casual": ("Hey, go check out {r}.", "Could you head over to {r}?", "Swing by {r}, would you?"),
    "terse": ("Go to {r}.", "{R}. Go there.", "Next: {r}."),
    "cheerful": ("Ooh, let's go to {r}!", "Off you go to {r}!", "Time to visit {r}!"),
    "chatty": ("So, I was thinking, could you head over to {r}?", "Alright, next up, go find {r}."),
}


class TemplateRealiser:
    """Offline realiser: the grammar of :mod:`~memgym.datasets.dialogmem.grammar`, voiced by
    speaking style, every choice drawn from the generator it is given."""

    name = "template"

    def realise(
        self,
        spec: TurnSpec,
        speaker: Resident,
        context: Sequence[str],
        attempt: int = 0,
        rng: np.random.Generator | None = None,
    ) -> str:
        """One utterance for ``spec``; ``rng`` draws the wording (default: one seeded by the turn
        id and ``attempt``, so a regenerated turn is worded differently)."""
        rng = rng if rng is not None else np.random.default_rng([spec.turn_id, attempt])
        item = spec.content
        if spec.turn_type == "navigation":
            if item is None:
                raise ValueError(f"navigation turn {spec.turn_id} has no perceptual content")
            reference = NAV_REFERENCES[item.key].format(v=item.value, c=item.category)
            pattern = choose(NAV_PATTERNS.get(speaker.style, NAV_PATTERNS["terse"]), rng)
            return pattern.format(r=reference, R=reference[0].upper() + reference[1:])
        opener = choose(OPENERS.get(speaker.style, ("",)), rng)
        frame = choose(FRAMES[spec.turn_type], rng).format(c=item.category if item is not None else "place")
        if item is None:
            return " ".join(p for p in (opener, frame) if p)
        fact = fact_sentence(item.key, item.operation, item.category, item.value, item.previous, rng)
        return utterance((opener, frame), fact, choose(MARKERS, rng))


REALISE_PROMPT = """You write one line of dialogue spoken by {name}, the {relationship} of the household, \
whose speaking style is {style}. {name} is talking to a home robot that is walking through the house.

Recent dialogue:
{context}

Write what {name} says next. It is a {turn_kind}. It must convey exactly this and nothing else about \
any object: {content}.
Rules: one or two short sentences; mention the {category} by its name; do not mention any other \
object's properties; no names of speakers before the line, no quotes, no lists, no numbers or codes.
Reply with the line only."""
TURN_KINDS = {
    "navigation": "request that the robot go to the object",
    "commentary": "remark about an object the robot can see right now",
    "recall": "remark about an object the robot saw earlier and cannot see now",
    "post_arrival": "remark made as the robot arrives at the object it was sent to",
}


class LLMRealiser:
    """Realiser backed by a reasoner (see the module docstring).

    Args:
        reasoner: the model writing utterances.
        max_new_tokens: reply budget.
    """

    name = "llm"

    def __init__(self, reasoner: Reasoner, max_new_tokens: int = 64) -> None:
        self.reasoner = reasoner
        self.max_new_tokens = max_new_tokens

    def prompt(self, spec: TurnSpec, speaker: Resident, context: Sequence[str], attempt: int = 0) -> str:
        """The instruction sent for ``spec`` (attempts > 0 add a reminder to follow the rules)."""
        item = spec.content
        content = describe(item) if item is not None else "a friendly remark with no facts about objects"
        if spec.turn_type == "navigation" and item is not None:
            content = f"ask the robot to go to the {item.category}, identifying it only by this: {describe(item)}"
        text = REALISE_PROMPT.format(
            name=speaker.name,
            relationship=speaker.relationship,
            style=speaker.style,
            context="\n".join(context[-4:]) or "(none yet)",
            turn_kind=TURN_KINDS[spec.turn_type],
            content=content,
            category=item.category if item is not None else "object",
        )
        if attempt:
            text += "\nYour previous line broke the rules; follow them exactly this time."
        return text

    def realise(
        self,
        spec: TurnSpec,
        speaker: Resident,
        context: Sequence[str],
        attempt: int = 0,
        rng: np.random.Generator | None = None,
    ) -> str:
        """One utterance from the reasoner, cleaned to a single line (``rng`` unused: decoding is greedy)."""
        reply = self.reasoner.generate(
            [Message.text("user", self.prompt(spec, speaker, context, attempt))], max_new_tokens=self.max_new_tokens
        )
        return clean_reply(reply, speaker.name)


def clean_reply(reply: str, speaker: str) -> str:
    """First non-empty line, without surrounding quotes or a ``Speaker:`` prefix."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    text = re.sub(rf"^\s*{re.escape(speaker)}\s*:\s*", "", text)
    return text.strip().strip('"').strip("'").strip()
