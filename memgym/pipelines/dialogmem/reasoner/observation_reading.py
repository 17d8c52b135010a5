"""Reading what residents say an object looks like and how it was come across: one sentence ->
a perceptual or episodic :class:`~memgym.pipelines.dialogmem.reasoner.dialogue_reading.Statement`.

The reading goes by what the words mean, not by sentence frames: a relation word with its
argument, or a value word of a closed class, decides the key. A question asserts only what its
noun phrase for the object presupposes (``Could you head over to the large sofa?``), and a
relation whose argument is the object itself (``make your way to the bookshelf``) states nothing
about it. Checked in this order (the first that holds wins; a sentence states one fact):

* **segment** -- a motion towards something (``on the way to``, ``heading to``, ``walking
  towards``, ``going over to``): the thing moved towards;
* **times_seen** -- a count of occasions (``once``, ``twice``, ``three times``, ``on two
  occasions``; digits and ``one time`` read in canonical forms, :mod:`~memgym.backends.word_forms`)
  in a sentence about coming across it (:data:`SEEING`: not ``it was once red``);
* **order** -- an ordinal (``second``, ``3rd``) that ranks the object rather than the seeing
  (``you first saw`` ranks the seeing);
* **near** -- ``next to``, ``beside``, ``close to``, ``near``, ``by`` + a determiner: the neighbour;
* **on** -- ``on`` / ``on top of`` / ``upon`` + a determiner: the support (``on your way``, ``on
  this walk`` and ``on purpose`` name none);
* **room** -- ``in`` / ``into`` / ``inside`` + a room word (:data:`ROOMS`);
* **material** -- ``made of`` / ``made from`` / ``built from`` / ``out of``, or a material word
  (:data:`MATERIALS`);
* **color** -- a colour word (:data:`COLORS`, the longest: ``dark brown`` before ``brown``);
* **size** -- a size word (``small``, ``medium``, ``large`` in canonical forms: ``big`` = ``large``).

A neighbour, support or destination is the known category right after the relation word (the
longest), else the words after its determiner up to a boundary (punctuation, a time word such as
``yesterday``, or another preposition).
"""

from __future__ import annotations

from collections.abc import Sequence

from memgym.backends.request_reading import find_spans
from memgym.backends.word_forms import canonical, canonical_phrase, raw_tokens

COLORS = (
    "white", "black", "gray", "beige", "brown", "dark brown", "light brown", "red", "dark red", "orange",
    "yellow", "green", "dark green", "light green", "blue", "dark blue", "light blue", "navy", "teal", "turquoise",
    "purple", "violet", "pink", "silver", "gold", "cream", "tan", "maroon", "olive", "ivory", "charcoal",
)  # fmt: skip
"""Colour words (canonical forms: ``grey`` reads as ``gray``)."""
MATERIALS = (
    "wood", "metal", "steel", "iron", "aluminium", "brass", "copper", "glass", "plastic", "fabric", "cloth",
    "cotton", "linen", "wool", "velvet", "leather", "suede", "ceramic", "porcelain", "clay", "stone", "marble",
    "granite", "brick", "concrete", "wicker", "rattan", "bamboo", "paper", "cardboard", "canvas", "wax", "rubber",
)  # fmt: skip
"""Material words (canonical forms: ``wooden`` reads as ``wood``)."""
ROOMS = (
    "living room", "kitchen", "bedroom", "bathroom", "dining room", "office", "study", "hallway", "entrance",
    "laundry room", "garage", "basement", "attic", "nursery", "guest room", "playroom", "den", "pantry",
)  # fmt: skip
"""Room words (canonical forms: ``lounge`` reads as ``living room``, ``corridor`` as ``hallway``)."""
SIZES = ("small", "medium", "large")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
COUNT_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "several", "many")

DETERMINERS = frozenset(["the", "a", "an", "that", "our", "my", "his", "her", "their", "its", "some"])
"""Words that open the argument of a relation (``this`` and ``your`` do not: ``on this walk``,
``on your way``)."""
MOTION = (
    ("way", "to"), ("way", "over", "to"), ("heading", "to"), ("heading", "towards"), ("headed", "to"),
    ("heading", "for"), ("walking", "to"), ("walking", "towards"), ("walked", "to"), ("going", "to"),
    ("going", "over", "to"), ("going", "towards"), ("went", "to"), ("moving", "to"), ("moving", "towards"),
    ("on", "route", "to"), ("en", "route", "to"), ("approaching",), ("towards",), ("toward",),
)  # fmt: skip
"""Word sequences of a motion towards the argument after them (the segment's destination)."""
NEAR = (("next", "to"), ("beside",), ("besides",), ("close", "to"), ("near",), ("nearby",), ("by",), ("alongside",))
ON = (("on", "top", "of"), ("on",), ("onto",), ("upon",), ("atop",))
IN = (("in",), ("into",), ("inside",))
MADE = (("made", "of"), ("made", "from"), ("built", "from"), ("built", "of"), ("out", "of"), ("crafted", "from"))
SEEING = frozenset(
    ["saw", "seen", "see", "spotted", "noticed", "passed", "came", "met", "found", "glimpsed", "crossed", "encountered",
     "ran", "walked", "went", "looked", "count", "counted", "sighted", "caught"]
)  # fmt: skip
"""Words of coming across something: a count counts sightings only beside one (not ``was once red``)."""
SEEING_EVENT = [[w] for w in SEEING]
"""Single words right after an ordinal that make it rank the seeing (``you first saw``), not the object."""
BOUNDARY = frozenset(
    [
        "this", "yesterday", "today", "earlier", "last", "after", "before", "when", "while", "as", "since", "on",
        "in", "at", "and", "but", "so", "because", "now", "then", "again", "ago", "right", "there", "here", "with",
        "you", "we", "i", "it", "is", "was", "that", "which", "morning", "tonight", "week", "month",
    ]
)  # fmt: skip
"""Words that end a relation's argument when no known category does."""
ARGUMENT_WORDS = 3
"""The most words an argument that is no known category may have."""


def observation(sentence: str, category: str, vocabulary: Sequence[str]) -> tuple[str, str] | None:
    """``(key, value)`` of the perceptual or episodic fact ``sentence`` states about an object of
    ``category`` (see the module docstring), or None; ``vocabulary``: the known categories,
    longest first. A question (``... ?``) asserts only what its noun phrase for the object
    presupposes (``Could you head over to the large sofa?``: ``size`` ``large``; ``Was the sofa
    red?``: nothing)."""
    words = canonical(raw_tokens(sentence))
    own = find_spans(words, tokens(category))
    if not own:
        return None if sentence.rstrip().endswith("?") else _read(words, set(), vocabulary)
    start, end = own[0]
    if sentence.rstrip().endswith("?"):
        opener = [i for i in range(max(0, start - ARGUMENT_WORDS - 1), start) if words[i] in DETERMINERS]
        first = opener[-1] if opener else start
        tail = NOUN_PHRASE_TAIL if words[end : end + 1] and words[end] in PLACE_WORDS else 0
        words, start, end = words[first : end + tail], start - first, end - first
    return _read(words, set(range(start, end)), vocabulary)


NOUN_PHRASE_TAIL = 5
"""Words after the object's category a question's noun phrase may run on (``on the coffee table``)."""
PLACE_WORDS = frozenset(w for relations in (NEAR, ON, IN) for relation in relations for w in relation[:1])
"""First words of a place phrase that may follow the object's category in its noun phrase."""


def _read(words: list[str], skip: set[int], vocabulary: Sequence[str]) -> tuple[str, str] | None:
    """The fact ``words`` state (the module docstring's order); ``skip``: the object's own words."""
    destination = _argument(words, MOTION, vocabulary, skip)
    if destination:
        return "segment", destination
    count = _count(words) if SEEING.intersection(words) else ""
    if count:
        return "times_seen", count
    ordinal = next((w for i, w in enumerate(words) if w in ORDINALS and words[i + 1 : i + 2] not in SEEING_EVENT), "")
    if ordinal:
        return "order", ordinal
    for key, relations in (("near", NEAR), ("on", ON)):
        value = _argument(words, relations, vocabulary, skip)
        if value:
            return key, value
    room = _after_relation(words, IN, ROOMS)
    if room:
        return "room", room
    material = _after_relation(words, MADE, MATERIALS) or _word(words, MATERIALS, skip)
    if material:
        return "material", material
    for key, lexicon in (("color", COLORS), ("size", SIZES)):
        value = _word(words, lexicon, skip)
        if value:
            return key, value
    return None


def tokens(phrase: str) -> list[str]:
    """A phrase's canonical tokens, as a list (compared with slices of a sentence's words)."""
    return list(canonical_phrase(phrase))


def _count(words: list[str]) -> str:
    """The count of occasions the words state (``once``, ``twice``, ``three times``), or ""."""
    for i, word in enumerate(words):
        if word in ("once", "twice"):
            return word
        if word in COUNT_WORDS and words[i + 1 : i + 2] in (["times"], ["occasions"]):
            return f"{word} times"
    return ""


def _word(words: list[str], lexicon: Sequence[str], skip: set[int]) -> str:
    """The longest phrase of ``lexicon`` among ``words`` outside the positions ``skip``, first
    found; ""."""
    found = [
        (start, -(end - start), phrase)
        for phrase in lexicon
        for start, end in find_spans(words, tokens(phrase))
        if not skip.intersection(range(start, end))
    ]
    return min(found)[2] if found else ""


def _after_relation(words: list[str], relations: Sequence[tuple[str, ...]], lexicon: Sequence[str]) -> str:
    """The phrase of ``lexicon`` right after a relation (a determiner between allowed), or ""."""
    for start in _relation_ends(words, relations):
        rest = words[start + 1 :] if words[start : start + 1] and words[start] in DETERMINERS else words[start:]
        match = max((p for p in lexicon if rest[: len(tokens(p))] == tokens(p)), key=len, default="")
        if match:
            return match
    return ""


def _argument(words: list[str], relations: Sequence[tuple[str, ...]], vocabulary: Sequence[str], skip: set[int]) -> str:
    """The argument after a relation of ``relations``: a known category (the longest) after its
    determiner, else up to :data:`ARGUMENT_WORDS` words before a :data:`BOUNDARY` word, with the
    room that tells it apart when one follows (``the cabinet in the kitchen``); "" when no relation
    is followed by a determiner (``on your way``) or the argument is the object itself (``make your
    way to the bookshelf``: an instruction, no fact)."""
    for start in _relation_ends(words, relations):
        if words[start : start + 1] == [] or words[start] not in DETERMINERS:
            continue
        if skip.intersection(range(start + 1, start + 2 + ARGUMENT_WORDS)):
            continue  # the object itself (``the wood cabinet``)
        rest = words[start + 1 :]
        known = [c for c in vocabulary if tokens(c) and rest[: len(tokens(c))] == tokens(c)]
        if known:
            phrase = tokens(max(known, key=lambda c: len(tokens(c))))
        else:
            phrase = []
            for word in rest[:ARGUMENT_WORDS]:
                if word in BOUNDARY or word in DETERMINERS:
                    break
                phrase.append(word)
        if phrase:
            room = _after_relation(rest[len(phrase) : len(phrase) + 4], IN, ROOMS)
            return " ".join(phrase) + (f" in the {room}" if room else "")
    return ""


def _relation_ends(words: list[str], relations: Sequence[tuple[str, ...]]) -> list[int]:
    """Positions right after each occurrence of a relation (the longest at a position), in order."""
    ends = {}
    for relation in relations:
        for start, end in find_spans(words, list(relation)):
            ends[start] = max(ends.get(start, 0), end)
    return [ends[s] for s in sorted(ends)]
