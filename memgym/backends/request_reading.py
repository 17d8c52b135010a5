"""Reading a request (question or instruction) against the values a memory holds.

The structured reasoner does not parse requests with the dataset's templates. It reads them with
three small, general pieces of linguistics:

* **value mentions** -- every value the memory holds (``"Maya"``, ``"the throne"``, ``"desk"``) is
  looked up in the request as a token sequence; overlapping mentions keep the longest (``"first"``
  inside ``"the first thing bought for this house"`` is not an ordinal);
* **relation words** -- the words just before a mention (skipping fillers such as ``the``, ``to``,
  ``of``) say which relation it fills: ``next to`` / ``beside`` / ``close to`` -> ``near``,
  ``on top of`` / ``resting on`` -> ``on``, ``on the way to`` / ``heading for`` / ``walking
  towards`` -> ``segment``, ``in`` / ``inside`` -> ``room``, and so on (:data:`RELATION_WORDS`).
  A mention whose value the memory holds under several keys (``desk`` as a neighbour and as a
  goal) is restricted to the key its relation word names; without one it may fill any of them;
* **the asked key** -- words that ask for a property (:data:`ASKING_WORDS`: ``whose``, ``colour``,
  ``nickname``, ``how often``, ``destination``, ...) found *outside* the mentions and their relation
  words (so ``used for`` inside ``the mug that is used for tea`` does not make the question ask for
  a usage); the earliest wins. Whether a request is a question at all is not read here: the env
  states each item's task (:mod:`memgym.core.task_line`).

Words are compared in the canonical forms of :mod:`~memgym.backends.word_forms` (:data:`value_tokens`).

The target's category is the first category named that is not the argument of a relation word
(``the chair you saw on the way to the sofa``: ``sofa`` follows ``way``, so the chair is meant).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from memgym.backends.word_forms import canonical_phrase, raw_tokens, stem
from memgym.core.words import FUNCTION_WORDS

STOP_WORDS = FUNCTION_WORDS | frozenset(
    ["go", "he", "her", "his", "please", "she", "their", "they", "whose", "why"]
)  # and the words of requests
"""Function words (not content a request names)."""

FILLERS = frozenset(
    ["the", "a", "an", "to", "of", "for", "from", "over", "your", "my", "our", "his", "her", "their", "as", "is"]
    + ["whose", "just", "only", "exactly", "it", "them", "very", "in", "total", "all"]
)
"""Words skipped between a relation word and the value it governs."""

CATEGORY_RELATIONS = ("near", "on", "segment", "room")
"""Relations whose value is another object's category (or a room)."""

RELATION_WORDS: dict[str, frozenset[str]] = {
    "near": frozenset(["next", "beside", "near", "nearby", "by", "close", "alongside", "adjacent", "besides"]),
    "on": frozenset(["on", "top", "atop", "upon", "onto", "resting", "sitting", "placed", "standing", "sits", "rests"]),
    "segment": frozenset(
        ["way", "heading", "headed", "towards", "toward", "walking", "going", "route", "approaching", "destination"]
    ),
    "room": frozenset(["in", "inside", "within"]),
    "owner": frozenset(["owns", "owned", "own", "belongs", "belong", "belonging", "owner"]),
    "usage": frozenset(["use", "used", "uses", "using", "meant", "purpose"]),
    "alias": frozenset(["call", "calls", "called", "nickname", "nicknamed", "known", "refer", "refers", "name"]),
    "significance": frozenset(["was", "originally", "because", "since", "special", "matters", "matter"]),
    "times_seen": frozenset(
        ["saw", "seen", "spotted", "noticed", "view", "passed", "appeared", "came", "across", "showed", "encountered"]
    ),
    "color": frozenset(["coloured", "colored", "painted", "colour", "color"]),
    "material": frozenset(["made", "built", "crafted", "material", "out"]),
    "size": frozenset(["sized", "size"]),
}
"""Relation key -> words that introduce its value (the nearest one before a mention decides)."""

ASKING_WORDS: dict[str, tuple[str, ...]] = {
    "owner": ("who owns", "whose", "belong", "belongs", "to whom", "owner", "owned by"),
    "usage": ("used for", "use it for", "purpose", "for what", "what for", "do with", "for", "use", "uses"),
    "alias": ("call", "called", "nickname", "name", "refer to", "known as", "go by", "goes by"),
    "significance": ("why", "special", "story", "matter", "matters", "significance"),
    "color": ("color", "colour", "coloured", "colored"),
    "material": ("material", "made", "built"),
    "size": ("how big", "how large", "how small", "size"),
    "on": (
        "on top of what",
        "on what",
        "resting on",
        "rest",
        "rests",
        "sit on",
        "standing on",
        "stand on",
        "stands on",
        "sits on",
        "lying on",
        "lies on",
        "placed on",
        "sitting on",
        "on top",
        "underneath",
        "beneath",
    ),
    "near": ("beside", "next to", "near", "close to"),
    "room": ("which room", "what room", "room"),
    "times_seen": ("how many times", "how often", "how many separate times", "times", "frequently"),
    "segment": (
        "heading",
        "headed",
        "destination",
        "walking towards",
        "walking to",
        "walking toward",
        "walking towards",
        "heading toward",
        "going",
        "toward",
        "towards",
        "on the way",
        "on your way",
        "where were you",
    ),  # fmt: skip
    "order": (
        "in what order",
        "order",
        "position",
        "ranking",
        "rank",
        "when did you see",
        "when did you notice",
        "which one",
        "which number",
        "what number",
        "counting",
        "sequence",
    ),  # fmt: skip
}
"""Answer key -> word sequences that ask for it (matched on whole tokens outside the mentions)."""

LEXICON = (
    STOP_WORDS
    | FILLERS
    | frozenset(w for lexicon in RELATION_WORDS.values() for w in lexicon)
    | frozenset(w for phrases in ASKING_WORDS.values() for phrase in phrases for w in raw_tokens(phrase))
)
"""The reader's own words (never re-inflected to match a memory value)."""

_TRAILING = {"usage": ("for",)}
"""Asking words that count only as the request's last word (``What is the mug for?``)."""


tokens = raw_tokens
value_tokens = canonical_phrase
"""A memory value's (or an asking phrase's) canonical tokens (:mod:`~memgym.backends.word_forms`)."""


@dataclasses.dataclass(frozen=True)
class Mention:
    """A value found in the request: tokens ``start..end`` (exclusive), the keys it may fill, and
    the span of its phrase: from its relation word (``start`` when none precedes it) to the key's
    own noun after it (``small in size``; ``end`` when none follows)."""

    value: str
    start: int
    end: int
    keys: frozenset[str]
    phrase_start: int
    phrase_end: int = -1

    @property
    def phrase(self) -> tuple[int, int]:
        """Token span of the mention with its relation words."""
        return self.phrase_start, max(self.end, self.phrase_end)


def find_spans(words: list[str], phrase: Iterable[str]) -> list[tuple[int, int]]:
    """Every ``(start, end)`` where the token sequence ``phrase`` occurs in ``words``."""
    target = list(phrase)
    n = len(target)
    if not n:
        return []
    return [(i, i + n) for i, w in enumerate(words) if w == target[0] and words[i : i + n] == target]


def relation_before(
    words: list[str], start: int, stop: int = 0, allowed: Iterable[str] | None = None
) -> tuple[str | None, int]:
    """The relation key (one of ``allowed``; any when None) named by the nearest relation word at
    most :data:`RELATION_REACH` tokens before token ``start``, and where its phrase starts. Fillers
    and relation words of other keys are skipped; any other word stops the search, as does token
    ``stop``."""
    allowed = set(RELATION_WORDS) if allowed is None else set(allowed)
    i = start - 1
    while i >= max(stop, start - RELATION_REACH):
        word = words[i]
        named = [k for k, lexicon in RELATION_WORDS.items() if word in lexicon]
        keys = [k for k in named if k in allowed]
        if keys:
            j = i
            while j - 1 >= stop and (
                any(words[j - 1] in RELATION_WORDS[k] for k in keys) or words[j - 1] in FILLERS | PHRASE_PRONOUNS
            ):
                j -= 1
            return keys[0], j
        if word not in FILLERS and not named:
            break
        i -= 1
    return None, start


RELATION_REACH = 5
"""How many tokens before a value its relation word may stand."""
PHRASE_PRONOUNS = frozenset(["it", "that", "which"])
"""Words a relation phrase extends back over (``that matters because it was ...``)."""


def find_mentions(
    words: list[str], values: Mapping[str, set[str]], outside: tuple[int, int] | None = None
) -> list[Mention]:
    """Mentions of ``values`` (value -> keys it is held under), longest first where they overlap,
    each restricted to the key its relation word names when that key is one of its keys; with
    ``outside`` (a token span, e.g. the request's head category) only mentions that do not overlap
    it, so a value that spans the head (``picture in the dining room``) does not hide the shorter
    values beside it (``dining room``)."""
    at: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        at.setdefault(word, []).append(i)
    found = []
    for value in values:
        phrase = value_tokens(value)
        for i in at.get(phrase[0], ()) if phrase else ():
            end = i + len(phrase)
            if tuple(words[i:end]) == phrase and (outside is None or end <= outside[0] or i >= outside[1]):
                found.append((i, end, value))
    spans = sorted(found, key=lambda x: (-(x[1] - x[0]), x[0], x[2]))
    taken: list[tuple[int, int, str]] = []
    for start, end, value in spans:
        if all(end <= s or start >= e for s, e, _ in taken):
            taken.append((start, end, value))
    for start, end, value in loose_mentions(words, values, taken, outside):
        if all(end <= s or start >= e for s, e, _ in taken):
            taken.append((start, end, value))
    mentions = []
    previous_end = 0
    for start, end, value in sorted(taken):
        keys = frozenset(values[value])
        relation, phrase_start = relation_before(words, start, previous_end, keys)
        if relation in keys:
            keys = frozenset([relation])
        mentions.append(Mention(value, start, end, keys, phrase_start, key_noun_after(words, end, keys)))
        previous_end = end
    return mentions


LOOSE_KEYS = frozenset(["usage", "significance", "alias"])
"""Keys of free-text values, which a request may word its own way (``where the board games are
kept`` for ``storing board games``)."""
LOOSE_REACH = 3
"""How many tokens beyond the value's own length a loose mention may spread over."""


def loose_mentions(
    words: list[str],
    values: Mapping[str, set[str]],
    taken: Iterable[tuple[int, int, str]],
    outside: tuple[int, int] | None = None,
) -> list[tuple[int, int, str]]:
    """``(start, end, value)`` of the free-text values (held only under :data:`LOOSE_KEYS`) the
    request words its own way: outside the ``taken`` spans and ``outside``, the request's words
    include (by :func:`~memgym.backends.word_forms.stem`) the value's last content word and at
    least half of its content words, within the value's length plus :data:`LOOSE_REACH` tokens."""
    blocked = {i for s, e, _ in taken for i in range(s, e)}
    blocked |= set(range(*outside)) if outside else set()
    taken_values = {v for _, _, v in taken}
    stems = [None if i in blocked else stem(w) for i, w in enumerate(words)]
    loose = [v for v in sorted(values) if v not in taken_values and values[v] <= LOOSE_KEYS]
    return [span for value in loose if (span := _loose_span(stems, value)) is not None]


def _loose_span(stems: list[str | None], value: str) -> tuple[int, int, str] | None:
    """``(start, end, value)`` where the request's word ``stems`` (None: blocked) word ``value``
    loosely (:func:`loose_mentions`), or None."""
    content = [stem(w) for w in value_tokens(value) if w not in STOP_WORDS]
    if not content:
        return None
    at = [i for i, s in enumerate(stems) if s in content]
    matched = {stems[i] for i in at}
    if content[-1] not in matched or 2 * len(matched) < len(set(content)):
        return None
    last = max(i for i in at if stems[i] == content[-1])
    window = [i for i in at if last - i <= len(value_tokens(value)) + LOOSE_REACH]
    return (min(window), last + 1, value) if 2 * len({stems[i] for i in window}) >= len(set(content)) else None


KEY_NOUNS: dict[str, frozenset[str]] = {
    "size": frozenset(["size", "sized"]),
    "color": frozenset(["colour", "color", "finish", "paint"]),
    "material": frozenset(["material"]),
    "room": frozenset(["room"]),
}
"""Nouns naming a key, which may follow its value (``small in size``, ``a black finish``)."""


def key_noun_after(words: list[str], end: int, keys: Iterable[str]) -> int:
    """The end of the key noun just after token ``end`` (fillers and ``in`` between), else ``end``."""
    nouns = set().union(*(KEY_NOUNS.get(k, frozenset()) for k in keys))
    for i in range(end, min(end + 3, len(words))):
        if words[i] in nouns:
            return i + 1
        if words[i] not in FILLERS and words[i] != "in":
            break
    return end


def attached(words: list[str], end: int, target: int, passable: set[str], anchors: Iterable[str]) -> bool:
    """Whether the words after token ``end`` reach token ``target`` or an anchor word within four
    tokens, passing only fillers and ``passable`` words (``the first small lamp``)."""
    for i in range(end, min(end + 4, len(words))):
        if i == target or words[i] in anchors:
            return True
        if words[i] not in FILLERS and words[i] not in passable:
            return False
    return False


def head_category(words: list[str], categories: Iterable[str]) -> tuple[str, tuple[int, int]] | None:
    """The category the request is about and its span: the first named category not governed by a
    relation word (a category inside a longer named one does not count); the first named one when
    every one is governed; None when none is named."""
    spans = sorted(
        ((s, e, c) for c in set(categories) for s, e in find_spans(words, value_tokens(c))),
        key=lambda x: (x[0], -(x[1] - x[0])),
    )
    named: list[tuple[int, int, str]] = []
    for start, end, category in spans:
        if not any(s <= start and end <= e for s, e, _ in named):
            named.append((start, end, category))
    if not named:
        return None
    free = [n for n in named if relation_before(words, n[0], allowed=CATEGORY_RELATIONS)[0] is None]
    start, end, category = (free or named)[0]
    return category, (start, end)


def asked_key(
    words: list[str],
    mentions: Iterable[Mention] = (),
    covered: Iterable[tuple[int, int]] = (),
    allowed: Iterable[str] | None = None,
) -> str | None:
    """The key the request asks for: the key (one of ``allowed``; any when None) of the earliest
    asking word sequence (:data:`ASKING_WORDS`) lying outside the ``covered`` spans and the
    mentions' phrases, except a bare mention of a value of that same key inside it (``how large``
    asks for a size though ``large`` is a size); None when no asking word is found."""
    allowed = set(ASKING_WORDS) if allowed is None else set(allowed)
    mentions = list(mentions)
    base = {i for s, e in covered for i in range(s, e)}
    bare = [m for m in mentions if m.phrase == (m.start, m.end)]
    for m in mentions:
        base.update(range(*m.phrase))
    found: list[tuple[int, int, str]] = []
    for key, phrases in ASKING_WORDS.items():
        if key not in allowed:
            continue
        spared = {i for m in bare if key in m.keys for i in range(m.start, m.end)}
        blocked = base - spared if spared else base
        for phrase in phrases:
            for start, end in find_spans(words, value_tokens(phrase)):
                if blocked.intersection(range(start, end)):
                    continue
                if phrase in _TRAILING.get(key, ()) and end != len(words):
                    continue
                found.append((start, -(end - start), key))
    return min(found)[2] if found else None
