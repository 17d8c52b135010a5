"""The template realiser's grammar: many wordings of one fact, drawn from a generator.

An utterance is ``[opener] [frame] [marker] fact-sentence``:

* **openers** per speaking style (``"Oh, by the way."``, ``"Pardon me."``);
* **frames** per turn type pointing at the object (``"See that lamp?"``, ``"Remember the lamp you
  saw earlier?"``), or nothing;
* **discourse markers** before the fact (``"Just so you know, ..."``, ``"Mind you, ..."``), or
  nothing;
* **fact sentences** per content key and operation, several per key (``"The lamp is red."``,
  ``"We painted the lamp red last spring."``, ``"I put the lamp on the desk this morning."``), whose
  nouns may be swapped for synonyms (:data:`SYNONYMS`: ``"I moved"`` / ``"my partner moved"``).

Every fact sentence names the object's category and the value verbatim (the grounding rule of
:mod:`~memgym.datasets.dialogmem.validation`) and no other object property. Sentences stating
social facts keep the words the structured reasoner's dialogue reading relies on for every reader
(naming verbs, ``for <activity>``, a name with an ownership word); perceptual and episodic sentences
avoid them (no ``for``, ``called``, ``special``, capitalised words), so they are never read as social
facts. With 5 styles x 2-4 openers x 3-4 frames x 6 markers x 3-6 sentences x 2 synonyms, one fact
has several hundred realisations.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

OPENERS: dict[str, tuple[str, ...]] = {
    "formal": ("", "Pardon me.", "If I may add something.", "Allow me a remark."),
    "casual": ("", "Hey!", "Oh, by the way.", "Oh hey."),
    "terse": ("", "Note.", "Quick one."),
    "cheerful": ("", "Oh, lovely!", "Fun fact!", "Ooh!"),
    "chatty": ("", "Oh, and another thing.", "You know what?", "Funny story."),
}
FRAMES: dict[str, tuple[str, ...]] = {
    "commentary": ("", "See that {c}?", "Look at the {c} there.", "Check out the {c}."),
    "recall": ("", "Remember the {c} you saw earlier?", "About that {c} from before.", "Thinking back to that {c}."),
    "post_arrival": ("", "Here we are.", "Great, you found it.", "That's the one."),
}
MARKERS = ("", "", "Just so you know,", "Mind you,", "Incidentally,", "As it happens,")
"""Discourse markers before the fact sentence (empty twice: most sentences start plainly)."""

FACT_SENTENCES: dict[tuple[str, str], tuple[str, ...]] = {
    ("color", "state"): (
        "the {c} is {v}.",
        "that {c} is {v}, you can't miss it.",
        "{we} painted the {c} {v} last spring.",
        "the {c} has always been {v}.",
        "the {c} is a lovely {v}.",
    ),
    ("material", "state"): (
        "the {c} is made of {v}.",
        "that {c} is made from {v}.",
        "the {c} is built from {v}.",
        "{we} had the {c} made of {v}.",
    ),
    ("size", "state"): (
        "the {c} is {v} as such things go.",
        "that's a {v} {c}, as they go.",
        "the {c} is rather {v} compared with others.",
        "{we} chose a {v} {c} on purpose.",
    ),
    ("room", "state"): (
        "the {c} is in the {v}.",
        "{we} keep the {c} in the {v}.",
        "{i} moved the {c} into the {v} last month.",
        "the {c} has stood in the {v} as long as I remember.",
        "the {c} ended up in the {v} after the move.",
    ),
    ("on", "state"): (
        "the {c} sits on the {v}.",
        "{i} put the {c} on the {v} this morning.",
        "somebody left the {c} on the {v}.",
        "the {c} lives on the {v}.",
        "{i} set the {c} down on the {v} yesterday.",
    ),
    ("near", "state"): (
        "the {c} is right next to the {v}.",
        "{i} moved the {c} next to the {v}.",
        "you'll find the {c} beside the {v}.",
        "the {c} stands close to the {v}.",
        "{we} pushed the {c} over beside the {v}.",
    ),
    ("times_seen", "state"): (
        "you came across the {c} {v} on this walk.",
        "by my count you saw the {c} {v}.",
        "you've passed the {c} {v} today.",
        "the {c} crossed your path {v}.",
    ),
    ("order", "state"): (
        "that was the {v} {c} you saw.",
        "the {c} was the {v} of its kind you came across.",
        "counting each {c}, that one came {v}.",
        "of every {c} on your way, you spotted that one {v}.",
    ),
    ("segment", "state"): (
        "you spotted the {c} on your way to the {v}.",
        "you first saw the {c} while heading to the {v}.",
        "the {c} showed up when you were walking to the {v}.",
        "you passed the {c} on the way to the {v}.",
    ),
    ("owner", "state"): (
        "that {c} is {v}'s.",
        "the {c} belongs to {v}.",
        "{v} owns that {c}.",
        "the {c} is owned by {v}.",
    ),
    ("owner", "update"): (
        "{v} has taken over the {c} from {p}.",
        "the {c} is {v}'s now; it used to be {p}'s.",
        "these days the {c} belongs to {v}, not {p}.",
    ),
    ("owner", "correction"): (
        "sorry, I got that wrong before: the {c} is {v}'s, not {p}'s.",
        "quick correction: the {c} belongs to {v}, not {p}.",
        "my mistake, the {c} is owned by {v}, not {p}.",
    ),
    ("usage", "state"): (
        "{we} use the {c} for {v}.",
        "the {c} is mostly for {v}.",
        "the {c} gets used for {v}.",
    ),
    ("usage", "update"): (
        "these days {we} use the {c} for {v} instead of {p}.",
        "{we} stopped using the {c} for {p}; now it is for {v}.",
        "the {c} is for {v} now, not {p}.",
    ),
    ("usage", "correction"): (
        "I was wrong earlier: the {c} is for {v}, not {p}.",
        "let me correct myself, the {c} is used for {v}, not {p}.",
        "sorry, my mistake: the {c} is for {v}, not {p}.",
    ),
    ("alias", "state"): (
        "{we} call the {c} {v}.",
        "around here the {c} is known as {v}.",
        "in this house the {c} goes by {v}.",
        "the {c}'s nickname is {v}.",
    ),
    ("significance", "state"): (
        "the {c} means a lot to us; it was {v}.",
        "that {c} is special: it was {v}.",
        "the {c} is precious to us because it was {v}.",
    ),
}
SYNONYMS: dict[str, tuple[str, ...]] = {
    "we": ("we", "the family"),
    "i": ("I", "my partner"),
}
"""Subjects swapped in fact sentences (``{we}`` / ``{i}``)."""


def fact_sentence(key: str, operation: str, category: str, value: str, previous: str, rng: np.random.Generator) -> str:
    """One sentence stating ``key = value`` of the ``category`` (with ``previous`` for changes), as
    written mid-sentence (``"the lamp is red."``, ``"Maya owns that lamp."``); its pattern and
    subject drawn from ``rng``."""
    patterns = FACT_SENTENCES.get((key, operation)) or FACT_SENTENCES[(key, "state")]
    fill = {name: choose(options, rng) for name, options in SYNONYMS.items()}
    return choose(patterns, rng).format(c=category, v=value, p=previous, **fill)


def utterance(parts: Sequence[str], fact: str, marker: str) -> str:
    """``parts`` (opener, frame), then ``fact`` after ``marker``, or capitalised without one."""
    fact = f"{marker} {fact}" if marker else fact[0].upper() + fact[1:]
    return " ".join(p for p in [*parts, fact] if p)


def choose(options: Sequence[str], rng: np.random.Generator) -> str:
    """One of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]
