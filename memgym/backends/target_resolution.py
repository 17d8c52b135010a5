"""Resolving a request against object facts and dialogue: the structured reasoner's core.

Input: ``objects`` (object id -> key -> value words, the latest fact of each key), ``labels``
(object id -> category), ``linked`` (object id -> dialogue lines linked to it) and ``heard`` (the
transcript's ``(speaker, utterance)`` lines). Linked lines become social facts of their object
(keys it does not already hold); transcript lines become facts about a *category*
(:mod:`~memgym.backends.dialogue_reading`). The request is read with
:mod:`~memgym.backends.request_reading`; :func:`resolve` returns the target object (or None) and
the asked key, :func:`reply` the reasoner's answer.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence

from memgym.backends.dialogue_reading import Statement, fold_chains, read_statements
from memgym.backends.request_reading import (
    STOP_WORDS,
    Mention,
    asked_key,
    attached,
    find_mentions,
    find_spans,
    head_category,
    tokens,
    value_tokens,
)

UNKNOWN = "unknown"
NOT_VALUES = frozenset(["detected"])
"""Keys whose values are not properties a request names (an entry's own label)."""
DETERMINERS = frozenset(["the", "that", "this", "a", "an", "our", "my", "your"])
QUESTION_WORDS = frozenset(["what", "which", "who", "whom", "whose", "where", "when", "why", "how"])
"""Words that make a request a question when one comes before the object it names."""


@dataclasses.dataclass(frozen=True)
class Resolution:
    """What a request asks: the target category, the chosen object (None: none or a tie), the asked
    key (None: an instruction) and the latest transcript statements (one per chain)."""

    category: str | None
    target: str | None
    key: str | None
    heard: tuple[Statement, ...]


def latest_statements(chains: Iterable[list[Statement]]) -> list[Statement]:
    """The last statement of each chain."""
    return [chain[-1] for chain in chains]


@functools.lru_cache(maxsize=256)
def heard_facts(
    utterances: tuple[str, ...], vocabulary: frozenset[str], names: frozenset[str], default: str = ""
) -> tuple[Statement, ...]:
    """The latest statement of each chain of ``utterances`` (cached: every request of an episode
    reads the same transcript)."""
    return tuple(latest_statements(fold_chains(read_statements(utterances, vocabulary, names, default))))


def linked_facts(
    objects: Mapping[str, Mapping[str, str]],
    labels: Mapping[str, str],
    linked: Mapping[str, Sequence[tuple[str, str]]],
) -> dict[str, dict[str, str]]:
    """``objects`` plus the social facts read from each object's linked lines (keys it lacks)."""
    merged = {o: dict(keys) for o, keys in objects.items()}
    for object_id, lines in linked.items():
        names = frozenset(speaker for speaker, _ in lines)
        label = labels[object_id]
        for statement in heard_facts(tuple(u for _, u in lines), frozenset([label]), names, label):
            merged[object_id].setdefault(statement.key, statement.value)
    return merged


def request_phrases(words: list[str], heard_text: Sequence[str]) -> set[str]:
    """Category candidates when no object is known: the request's one- and two-word phrases of
    content words that the transcript uses after a determiner (``that mug``)."""
    spoken = [tokens(u) for u in heard_text]
    phrases = set()
    for n in (1, 2):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if any(w in STOP_WORDS for w in gram):
                continue
            if any(s[j - 1] in DETERMINERS and s[j : j + n] == gram for s in spoken for j in range(1, len(s))):
                phrases.add(" ".join(gram))
    return phrases


def resolve(
    request: str,
    objects: Mapping[str, Mapping[str, str]],
    labels: Mapping[str, str],
    heard: Sequence[tuple[str, str]] = (),
    *,
    instruction: bool = False,
) -> Resolution:
    """Read ``request`` (see the module docstring); ``instruction`` forces no asked key, as does a
    request that names its object before any question word (:data:`QUESTION_WORDS`) or asking word
    and does not end in a question word (``Could you walk to the bed?``; not ``Whose is the bed?``,
    ``Tell me the colour of the bed.``, ``The mug is on top of what?``)."""
    words = tokens(request)
    utterances = [u for _, u in heard]
    vocabulary = set(labels.values()) or request_phrases(words, utterances)
    statements = heard_facts(tuple(utterances), frozenset(vocabulary), frozenset(s for s, _ in heard))
    values: dict[str, set[str]] = {}
    for keys in objects.values():
        for key, value in keys.items():
            if key not in NOT_VALUES and value_tokens(value):
                values.setdefault(value, set()).add(key)
    for statement in statements:
        values.setdefault(statement.value, set()).add(statement.key)
    mentions = find_mentions(words, values)
    head = head_category(words, vocabulary)
    if head is None:
        said_about = {s.category for m in mentions for s in statements if tokens(s.value) == tokens(m.value)}
        category, span = (said_about.pop(), (0, 0)) if len(said_about) == 1 else (None, (0, 0))
    else:
        category, span = head
        mentions = find_mentions(words, values, outside=span)
    mentions = [m for m in mentions if m.keys != {"order"} or _ordinal_attached(words, m, mentions, span)]
    # a count (``once``) counts sightings only after a seeing word (``you saw once``, not ``was once``)
    mentions = [m for m in mentions if m.keys != {"times_seen"} or m.phrase_start < m.start]
    before = words[: span[0]]
    instruction = instruction or (
        head is not None
        and not QUESTION_WORDS.intersection(before)
        and not asked_key(before)
        and words[-1] not in QUESTION_WORDS  # ``The mug is on top of what?`` asks
    )
    key = None if instruction else asked_key(words, mentions, [span])
    if not labels and category is not None:
        category = first_said_about(words, vocabulary, statements, key) or category
    target = select(objects, labels, category, mentions, key, words) if category else None
    if category is None and key is None and mentions:
        target = select_any(objects, mentions)
    return Resolution(category, target, key, tuple(statements))


def select_any(objects: Mapping[str, Mapping[str, str]], mentions: Sequence[Mention]) -> str | None:
    """An instruction naming no category and no category said about its cues (``Take me to the
    lighthouse.`` with no transcript naming the lighthouse's category): the entry, of any category,
    whose facts explain the most mentions, when exactly one does and it explains one at least
    (issue 37's dialogue-only instructions; None otherwise)."""
    scores = {
        object_id: sum(1 for m in mentions if any(k in keys and tokens(keys[k]) == tokens(m.value) for k in m.keys))
        for object_id, keys in objects.items()
    }
    best = max(scores.values(), default=0)
    winners = [o for o, score in scores.items() if score == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


ORDINAL_ANCHORS = ("among", "of", "one")
"""Words after an ordinal that make it a rank among objects (``second among its kind``)."""


def _ordinal_attached(words: list[str], mention: Mention, mentions: Sequence[Mention], span: tuple[int, int]) -> bool:
    """Whether an ordinal ranks the object (``the first small lamp``, ``second of its kind``)
    rather than an event (``when you first saw``)."""
    passable = {w for m in mentions for w in words[m.start : m.end]}
    return attached(words, mention.end, span[0], passable, ORDINAL_ANCHORS)


def first_said_about(
    words: list[str], vocabulary: Iterable[str], statements: Sequence[Statement], key: str | None
) -> str | None:
    """The first phrase of the request that the transcript says something (of ``key``) about."""
    about = {s.category for s in statements if key is None or s.key == key}
    named = [
        (spans[0][0], -len(tokens(c)), c) for c in about & set(vocabulary) if (spans := find_spans(words, tokens(c)))
    ]
    return min(named)[2] if named else None


def select(
    objects: Mapping[str, Mapping[str, str]],
    labels: Mapping[str, str],
    category: str,
    mentions: Sequence[Mention],
    key: str | None,
    words: list[str],
) -> str | None:
    """The object of ``category`` whose facts explain the most mentions (then: whose linked
    ``said`` words share the most request words); None for none or a tie."""
    content = {w for w in words if w not in STOP_WORDS} - set(tokens(category))
    scores: dict[str, tuple[int, int]] = {}
    for object_id, keys in objects.items():
        if labels[object_id] != category:
            continue
        explained = sum(
            1 for m in mentions if any(k != key and k in keys and tokens(keys[k]) == tokens(m.value) for k in m.keys)
        )
        said = {w for k, v in keys.items() if k.startswith("said") for w in tokens(v)}
        scores[object_id] = (explained, len(content & said))
    if not scores:
        return None
    best = max(scores.values())
    winners = sorted(o for o, s in scores.items() if s == best)
    return winners[0] if len(winners) == 1 else None


def reply(resolution: Resolution, objects: Mapping[str, Mapping[str, str]]) -> str:
    """``OBJECT <id>`` for an instruction, the asked value for a question; a question the objects
    cannot answer gets the latest value the transcript gives for the category and key."""
    if resolution.key is None:
        return f"OBJECT {resolution.target}" if resolution.target else UNKNOWN
    if resolution.target is not None and resolution.key in objects[resolution.target]:
        return objects[resolution.target][resolution.key]
    said = [s for s in resolution.heard if s.category == resolution.category and s.key == resolution.key]
    return max(said, key=lambda s: s.index).value if said else UNKNOWN
