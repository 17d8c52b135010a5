"""Resolving a request against object facts and dialogue: the structured reasoner's core.

Input: ``objects`` (object id -> key -> value words, the latest fact of each key), ``labels``
(object id -> category), ``linked`` (object id -> dialogue lines linked to it) and ``heard`` (the
transcript's ``(speaker, utterance)`` lines). Linked lines become facts of their object
(keys it does not already hold); transcript lines become facts about a *category*
(:mod:`~memgym.pipelines.dialogmem.reasoner.dialogue_reading`). The request is read with
:mod:`~memgym.backends.request_reading`; :func:`resolve` returns the target object (or None) and
the asked key, :func:`reply` the reasoner's answer.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence

from memgym.backends.request_reading import (
    FILLERS,
    LEXICON,
    RELATION_WORDS,
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
from memgym.backends.word_forms import canonical_request
from memgym.pipelines.dialogmem.reasoner.dialogue_reading import Statement, fold_chains, read_statements
from memgym.pipelines.dialogmem.reasoner.key_similarity import KEY_DESCRIPTIONS, closest_key

UNKNOWN = "unknown"
NOT_VALUES = frozenset(["detected"])
"""Keys whose values are not properties a request names (an entry's own label)."""
DETERMINERS = frozenset(["the", "that", "this", "a", "an", "our", "my", "your"])


@dataclasses.dataclass(frozen=True)
class Resolution:
    """What a request asks: the target category, the chosen object (None: none or a tie), the asked
    key (None: an instruction) and the latest transcript statements (one per chain)."""

    category: str | None
    target: str | None
    key: str | None
    heard: tuple[Statement, ...]
    instruction: bool = False


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
    """``objects`` plus the facts read from each object's linked lines (keys it lacks)."""
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
    """Read ``request`` (see the module docstring): an instruction when ``instruction`` (the task
    the env stated), else a question, whatever its wording. The words are read in the canonical
    forms of :mod:`~memgym.backends.word_forms`, against the memory's own vocabulary."""
    utterances = [u for _, u in heard]
    vocabulary = set(labels.values()) or request_phrases(tokens(request), utterances)
    statements = heard_facts(tuple(utterances), frozenset(vocabulary), frozenset(s for s, _ in heard))
    values = _request_values(objects, statements)
    known = frozenset(w for phrase in [*values, *vocabulary] for w in value_tokens(phrase))
    words = canonical_request(request, known, LEXICON)
    category, span, mentions = _category_and_mentions(words, values, vocabulary, statements)
    if not labels and category is not None:
        key = None if instruction else asked_key(words, mentions, [span])
        category = first_said_about(words, vocabulary, statements, key) or category
    key, target = _key_and_target(objects, labels, category, mentions, words, span, instruction=instruction)
    return Resolution(category, target, key, tuple(statements), instruction)


def _request_values(objects: Mapping[str, Mapping[str, str]], statements: Sequence[Statement]) -> dict[str, set[str]]:
    """Each value a request may mention -> the keys it is a value of, in the entries (keys that
    hold values, :data:`NOT_VALUES` aside) and in the ``statements`` heard."""
    values: dict[str, set[str]] = {}
    for keys in objects.values():
        for key, value in keys.items():
            if key not in NOT_VALUES and value_tokens(value):
                values.setdefault(value, set()).add(key)
    for statement in statements:
        values.setdefault(statement.value, set()).add(statement.key)
    return values


def _category_and_mentions(
    words: list[str], values: Mapping[str, set[str]], vocabulary: set[str], statements: Sequence[Statement]
) -> tuple[str | None, tuple[int, int], list[Mention]]:
    """The category the request names (its head; when it names none, the one category the
    dialogue said a mentioned value about), the span naming it and the value mentions outside
    that span that are cues (an ordinal attached to its noun, a count after a seeing word)."""
    mentions = find_mentions(words, values)
    head = head_category(words, vocabulary)
    if head is None:
        said_about = {s.category for m in mentions for s in statements if tokens(s.value) == tokens(m.value)}
        category, span = (said_about.pop() if len(said_about) == 1 else None), (0, 0)
    else:
        category, span = head
        mentions = find_mentions(words, values, outside=span)
    mentions = [m for m in mentions if m.keys != {"order"} or _ordinal_attached(words, m, mentions, category)]
    # a count (``once``) counts sightings only after a seeing word (``you saw it once``, not ``was once``)
    mentions = [m for m in mentions if m.keys != {"times_seen"} or _after_seeing(words, m)]
    return category, span, mentions


def _key_and_target(
    objects: Mapping[str, Mapping[str, str]],
    labels: Mapping[str, str],
    category: str | None,
    mentions: list[Mention],
    words: list[str],
    span: tuple[int, int],
    *,
    instruction: bool,
) -> tuple[str | None, str | None]:
    """``(asked key, target)``: the key a question asks for (None for an instruction) and the one
    object the cues select (:func:`select`; a mention of the asked key's own value is no cue), or
    the first of several that agree on the answer; None when they tie."""
    winners = select(objects, labels, category, mentions, words)
    key = None if instruction else question_key(words, mentions, span, [objects[o] for o in winners])
    if key is not None:  # a mention of the asked key's own value is no cue (``how large``)
        winners = select(objects, labels, category, [m for m in mentions if m.keys != {key}], words)
    target = winners[0] if len(winners) == 1 else None
    if key is not None and len(winners) > 1 and len({objects[o].get(key) for o in winners}) == 1:
        target = winners[0]  # the candidates left agree on the answer
    return key, target


def question_key(
    words: list[str], mentions: Sequence[Mention], span: tuple[int, int], candidates: Sequence[Mapping[str, str]]
) -> str | None:
    """The key a question asks for. A choice it offers decides (:func:`choice_key`), then its asking words
    (:func:`~memgym.backends.request_reading.asked_key`), first among the keys the candidate
    targets hold whose values the request does not already name (a question never states its
    answer), then among any keys; when none names a key, the key whose description is nearest in
    meaning to the question's words outside its cues and category
    (:func:`~memgym.pipelines.dialogmem.reasoner.key_similarity.closest_key`; None without the encoder), held by the
    target or not (a key it lacks is answered ``unknown``, not replaced by one it holds)."""
    offered = choice_key(words, mentions)
    if offered is not None:
        return offered
    named = {w for m in mentions for w in value_tokens(m.value)}
    held = {k for keys in candidates for k in keys if k not in NOT_VALUES and not k.startswith("said")}
    open_keys = {k for keys in candidates for k in held & set(keys) if not set(value_tokens(keys[k])) <= named}
    key = (asked_key(words, mentions, [span], open_keys) if open_keys else None) or asked_key(words, mentions, [span])
    if key is not None:
        return key
    cues = {i for m in mentions for i in range(*m.phrase)} | set(range(*span))
    return closest_key(" ".join(w for i, w in enumerate(words) if i not in cues), KEY_DESCRIPTIONS)


def choice_key(words: list[str], mentions: Sequence[Mention]) -> str | None:
    """The key of a choice the question offers: two values of one key joined by ``or`` (``is it
    large or small``, ``first, second or third``); None when it offers none."""
    ordered = sorted(mentions, key=lambda m: m.start)
    for first, second in zip(ordered, ordered[1:]):
        shared = first.keys & second.keys
        between = [w for w in words[first.end : second.start] if w not in FILLERS]
        if between == ["or"] and len(shared) == 1:
            return next(iter(shared))
    return None


ORDINAL_ANCHORS = ("among", "of", "one")
"""Words after an ordinal that make it a rank among objects (``second among its kind``)."""


def _ordinal_attached(words: list[str], mention: Mention, mentions: Sequence[Mention], category: str | None) -> bool:
    """Whether an ordinal ranks an object (``the first small lamp``, ``the fourth chair you saw``,
    ``second of its kind``, ``the chair you spotted eighth``) rather than an event (``when you
    first saw``): the words after it reach a word of the category or an anchor, or a seeing word
    comes just before it."""
    passable = {w for m in mentions for w in words[m.start : m.end]}
    anchors = set(ORDINAL_ANCHORS) | set(value_tokens(category or ""))
    before = [w for w in words[: mention.start] if w not in FILLERS]
    after_seeing = bool(before) and before[-1] in RELATION_WORDS["times_seen"]  # ``the chair you saw first``
    return after_seeing or attached(words, mention.end, -1, passable, anchors)


SEEING_REACH = 6
"""How many tokens before a count its seeing word may stand (``you saw the white cabinet twice``)."""


def _after_seeing(words: list[str], mention: Mention) -> bool:
    """Whether a seeing word (the ``times_seen`` relation words) stands shortly before a count."""
    before = words[max(0, mention.start - SEEING_REACH) : mention.start]
    return mention.phrase_start < mention.start or bool(RELATION_WORDS["times_seen"].intersection(before))


def first_said_about(
    words: list[str], vocabulary: Iterable[str], statements: Sequence[Statement], key: str | None
) -> str | None:
    """The first phrase of the request that the transcript says something (of ``key``) about."""
    about = {s.category for s in statements if key is None or s.key == key}
    named = [
        (spans[0][0], -len(tokens(c)), c)
        for c in about & set(vocabulary)
        if (spans := find_spans(words, value_tokens(c)))
    ]
    return min(named)[2] if named else None


def select(
    objects: Mapping[str, Mapping[str, str]],
    labels: Mapping[str, str],
    category: str | None,
    mentions: Sequence[Mention],
    words: list[str],
) -> list[str]:
    """The objects of ``category`` whose facts explain the most mentions (then: the most mentions
    worded as the value itself rather than loosely, ``Find the cockpit`` naming ``the cockpit``
    exactly and ``a lucky find`` only by a stem; then: whose linked ``said`` words share the most
    request words), sorted; empty when it has none. With no category named (``Take me to the
    lighthouse``), every object is a candidate and only those explaining at least one mention can
    win."""
    content = {w for w in words if w not in STOP_WORDS} - set(value_tokens(category or ""))
    scores = {
        object_id: _score(keys, mentions, words, content)
        for object_id, keys in objects.items()
        if category is None or labels[object_id] == category
    }
    if not scores or (category is None and max(scores.values()) <= (0, 0, 0)):
        return []
    best = max(scores.values())
    return sorted(o for o, s in scores.items() if s == best)


def _score(
    keys: Mapping[str, str], mentions: Sequence[Mention], words: list[str], content: set[str]
) -> tuple[int, int, int]:
    """How well an object with facts ``keys`` fits the request: (mentions its facts explain, of
    those the ones worded as the value itself, request ``content`` words its linked lines say)."""
    explained = [
        m for m in mentions if any(k in keys and value_tokens(keys[k]) == value_tokens(m.value) for k in m.keys)
    ]
    exact = sum(1 for m in explained if tuple(words[m.start : m.end]) == value_tokens(m.value))
    said = {w for k, v in keys.items() if k.startswith("said") for w in tokens(v)}
    return len(explained), exact, len(content & said)


def reply(resolution: Resolution, objects: Mapping[str, Mapping[str, str]]) -> str:
    """``OBJECT <id>`` for an instruction, the asked value for a question; a question the objects
    cannot answer gets the latest value the transcript gives for the category and key."""
    if resolution.key is None:  # an instruction, or a question whose key could not be read
        return f"OBJECT {resolution.target}" if resolution.target and resolution.instruction else UNKNOWN
    if resolution.target is not None and resolution.key in objects[resolution.target]:
        return objects[resolution.target][resolution.key]
    said = [s for s in resolution.heard if s.category == resolution.category and s.key == resolution.key]
    return max(said, key=lambda s: s.index).value if said else UNKNOWN
