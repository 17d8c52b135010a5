"""Turning turn specifications into utterances.

Two realisers share one interface, ``realise(spec, speaker, context, attempt) -> str``:

* :class:`TemplateRealiser` (default, offline): sentence patterns per content key and operation,
  voiced per speaking style (openers, politeness, enthusiasm); ``attempt`` picks another pattern,
  so a regenerated turn is worded differently.
* :class:`LLMRealiser`: asks a reasoner backend (transformers, OpenAI-compatible endpoint) for one
  utterance, conditioned on the speaker's persona and the previous turns and constrained to the
  spec's content; the reply is cleaned (quotes, speaker prefixes, extra lines) and validated by
  :mod:`memgym.datasets.dialogmem.validation` like any other.

Neither ever sees or writes object ids; references use the category and the spec's content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.datasets.dialogmem.content import MemoryItem
from memgym.datasets.dialogmem.policy import TurnSpec, describe
from memgym.datasets.dialogmem.residents import Resident

SOCIAL_PATTERNS: dict[tuple[str, str], tuple[str, ...]] = {
    ("owner", "state"): ("That {c} is {v}'s.", "The {c} belongs to {v}.", "{v} owns that {c}."),
    ("owner", "update"): ("{v} has taken over the {c} from {p}.", "The {c} is {v}'s now; it used to be {p}'s."),
    ("owner", "correction"): (
        "Sorry, I got that wrong before: the {c} is {v}'s, not {p}'s.",
        "Correction: the {c} belongs to {v}, not {p}.",
    ),
    ("usage", "state"): ("We use the {c} for {v}.", "The {c} is mostly for {v}."),
    ("usage", "update"): (
        "These days we use the {c} for {v} instead of {p}.",
        "We stopped using the {c} for {p}; now it is for {v}.",
    ),
    ("usage", "correction"): (
        "I was wrong earlier: the {c} is for {v}, not {p}.",
        "Let me correct myself, the {c} is used for {v}, not {p}.",
    ),
    ("alias", "state"): ("We call the {c} {v}.", "Around here the {c} is known as {v}."),
    ("significance", "state"): ("The {c} means a lot to us; it was {v}.", "That {c} is special: it was {v}."),
}
NAV_REFERENCES: dict[str, str] = {
    "color": "the {v} {c}",
    "material": "the {v} {c}",
    "size": "the {v} {c}",
    "room": "the {c} in the {v}",
    "on": "the {c} on the {v}",
    "near": "the {c} next to the {v}",
}
NAV_PATTERNS: dict[str, tuple[str, ...]] = {
    "formal": ("Would you please go to {r}?", "Kindly make your way to {r}."),
    "casual": ("Hey, go check out {r}.", "Could you head over to {r}?"),
    "terse": ("Go to {r}.", "{R}. Go there."),
    "cheerful": ("Ooh, let's go to {r}!", "Off you go to {r}!"),
    "chatty": ("So, I was thinking, could you head over to {r}?", "Alright, next up, go find {r}."),
}
OPENERS: dict[str, tuple[str, ...]] = {
    "formal": ("Pardon me.", "If I may add something."),
    "casual": ("Hey!", "Oh, by the way."),
    "terse": ("", "Note."),
    "cheerful": ("Oh, lovely!", "Fun fact!"),
    "chatty": ("Oh, and another thing.", "You know what?"),
}
FRAMES: dict[str, tuple[str, ...]] = {
    "commentary": ("See that {c}?", "Look at the {c} there.", ""),
    "recall": ("Remember the {c} you saw earlier?", "About that {c} from before.", "Thinking back to that {c}."),
    "post_arrival": ("Here we are.", "Great, you found it.", "That's the one."),
}


class TemplateRealiser:
    """Offline realiser: patterns per key and operation, voiced by speaking style."""

    name = "template"

    def realise(self, spec: TurnSpec, speaker: Resident, context: Sequence[str], attempt: int = 0) -> str:
        """One utterance for ``spec``; ``attempt`` > 0 gives other wording."""
        pick = spec.turn_id + attempt
        item = spec.content
        if spec.turn_type == "navigation":
            if item is None:
                raise ValueError(f"navigation turn {spec.turn_id} has no perceptual content")
            reference = NAV_REFERENCES[item.key].format(v=item.value, c=item.category)
            patterns = NAV_PATTERNS.get(speaker.style, NAV_PATTERNS["terse"])
            pattern = patterns[pick % len(patterns)]
            return pattern.format(r=reference, R=reference[0].upper() + reference[1:])
        parts = [_choose(OPENERS.get(speaker.style, ("",)), pick)]
        category = item.category if item is not None else "place"
        parts.append(_choose(FRAMES[spec.turn_type], pick // 2).format(c=category))
        if item is not None:
            parts.append(social_sentence(item, pick))
        return " ".join(p for p in parts if p)


def social_sentence(item: MemoryItem, pick: int = 0) -> str:
    """A sentence stating a social item (with its previous value for updates/corrections)."""
    patterns = SOCIAL_PATTERNS.get((item.key, item.operation)) or SOCIAL_PATTERNS[(item.key, "state")]
    text = _choose(patterns, pick).format(c=item.category, v=item.value, p=item.previous)
    return text[0].upper() + text[1:]


def _choose(options: Sequence[str], index: int) -> str:
    return options[index % len(options)]


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

    def realise(self, spec: TurnSpec, speaker: Resident, context: Sequence[str], attempt: int = 0) -> str:
        """One utterance from the reasoner, cleaned to a single line."""
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
