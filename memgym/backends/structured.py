"""The fact lines memories write for the offline ``structured`` reasoner, and the words it reads.

Memory content reaches the reasoner (:class:`memgym.pipelines.structured_reasoner.StructuredReasoner`)
as *fact lines* inside any text part of the messages::

    FACT {"object": "obj_3", "category": "mug", "type": "social", "key": "owner", "value": "Amelia", "time": 12}

(:func:`format_fact` writes them, :func:`parse_facts` reads them, :func:`latest_facts` keeps the
latest of each object and key). Two more prompt lines memories write: ``CATEGORIES [...]``
(:data:`CATEGORIES_PREFIX`, which listed categories a request names, :func:`named_categories`) and
``LINK [...]`` (:data:`LINK_PREFIX`, which listed object a remark is about); dialogue linked to an
entry arrives as ``said_<k>`` facts (:data:`SAID_KEY`).

This module is the format both sides share, below the memories and the datasets that use it; the
reasoner that reads it lives beside the benchmarks it reads (module docstring there).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable

from memgym.backends.request_reading import LEXICON
from memgym.backends.word_forms import canonical_phrase, canonical_request

FACT_PREFIX = "FACT "
CATEGORIES_PREFIX = "CATEGORIES "
LINK_PREFIX = "LINK "
SAID_KEY = "said"

_WORD = re.compile(r"[a-z0-9]+")


@dataclasses.dataclass(frozen=True)
class Fact:
    """One symbolic memory item about one object.

    Attributes:
        object: object id.
        category: object category (``"mug"``).
        type: content type, ``"perceptual"``, ``"episodic"`` or ``"social"``.
        key: what the value is (``"owner"``, ``"color"``, ``"times_seen"``, ...).
        value: the value as words (``"Amelia"``, ``"red"``, ``"three"``).
        time: when it became true (formation step); later facts replace earlier ones.
    """

    object: str
    category: str
    type: str
    key: str
    value: str
    time: int = 0


def format_fact(fact: Fact) -> str:
    """One ``FACT {...}`` line."""
    return FACT_PREFIX + json.dumps(dataclasses.asdict(fact), sort_keys=True)


def parse_facts(texts: Iterable[str]) -> list[Fact]:
    """Every well-formed fact line in ``texts`` (other lines are ignored)."""
    facts = []
    for text in texts:
        for line in text.splitlines():
            if not line.startswith(FACT_PREFIX):
                continue
            try:
                data = json.loads(line[len(FACT_PREFIX) :])
                facts.append(Fact(**data))
            except (json.JSONDecodeError, TypeError):
                continue
    return facts


def latest_facts(facts: Iterable[Fact]) -> dict[str, dict[str, Fact]]:
    """object id -> key -> the fact with the latest time (first seen wins ties)."""
    table: dict[str, dict[str, Fact]] = {}
    for fact in facts:
        keys = table.setdefault(fact.object, {})
        if fact.key not in keys or fact.time > keys[fact.key].time:
            keys[fact.key] = fact
    return table


def words(text: str) -> list[str]:
    """Lower-case alphanumeric tokens."""
    return _WORD.findall(str(text).lower())


def named_categories(text: str, categories: Iterable[str]) -> list[str]:
    """The ``categories`` named in ``text`` (case and punctuation ignored; words in the canonical
    forms of :mod:`~memgym.backends.word_forms`, so ``bookshelves`` and ``refrigerator`` name
    ``bookshelf`` and ``fridge``), in the order first named; a name inside a longer named one
    (``counter`` in ``kitchen counter``) does not count."""
    categories = set(categories)
    vocabulary = frozenset(w for c in categories for w in canonical_phrase(c))
    padded = " " + " ".join(canonical_request(text, vocabulary, LEXICON)) + " "
    spans = []
    for category in categories:
        phrase = f" {' '.join(canonical_phrase(category))} "
        start = padded.find(phrase) if phrase.strip() else -1
        while start >= 0:
            spans.append((start, -len(phrase), category))
            start = padded.find(phrase, start + 1)
    named: list[str] = []
    covered: list[tuple[int, int]] = []
    for start, negative, category in sorted(spans):
        end = start - negative
        if any(a <= start and end <= b for a, b in covered):
            continue
        covered.append((start, end))
        if category not in named:
            named.append(category)
    return named
