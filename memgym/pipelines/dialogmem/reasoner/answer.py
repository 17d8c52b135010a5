"""DialogMem's reading for the ``structured`` reasoner: a request answered from fact lines and
dialogue (:func:`answer_from_facts`), the category-prediction prompt of 3D-Mem's retrieval
(:func:`select_categories`) and the VLM linker's prompt (:func:`select_linked_object`); see
:mod:`memgym.pipelines.structured_reasoner` for the steps."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memgym.backends.request_reading import LEXICON, find_spans
from memgym.backends.structured import SAID_KEY, Fact, latest_facts, named_categories
from memgym.backends.word_forms import canonical_phrase, canonical_request
from memgym.pipelines.dialogmem.reasoner.dialogue_reading import SOCIAL_KEYS, transcript
from memgym.pipelines.dialogmem.reasoner.target_resolution import UNKNOWN, heard_facts, linked_facts, resolve
from memgym.pipelines.dialogmem.reasoner.target_resolution import reply as reply_to


def answer_from_facts(
    question: str, facts: Sequence[Fact], heard: Sequence[tuple[str, str]] = (), *, task: str | None = None
) -> str:
    """Reply to ``question`` (an item of ``task``: ``navigation`` is an instruction, anything
    else a question) from ``facts`` and the transcript ``heard`` (``(speaker, utterance)``
    lines; the steps are in :mod:`memgym.pipelines.structured_reasoner`'s docstring)."""
    table = latest_facts(facts)
    labels = {o: next(iter(keys.values())).category for o, keys in table.items()}
    values = {o: {k: f.value for k, f in keys.items()} for o, keys in table.items()}
    said = {o: [(k, f.value) for k, f in keys.items() if k.startswith(SAID_KEY)] for o, keys in table.items()}
    linked = {
        o: transcript(v for _, v in sorted(ls, key=lambda kv: _said_order(kv[0]))) for o, ls in said.items() if ls
    }
    objects = linked_facts(values, labels, linked)
    resolution = resolve(question, objects, labels, heard, instruction=task == "navigation")
    return reply_to(resolution, objects)


def _said_order(key: str) -> int:
    """Position of a ``said_<k>`` key (linked lines in the order heard)."""
    suffix = key.rsplit("_", 1)[-1]
    return int(suffix) if suffix.isdigit() else -1


def select_categories(request: str, listed: str, heard: Sequence[tuple[str, str]] = ()) -> str:
    """The categories of the JSON list ``listed`` named in ``request`` (:func:`named_categories`),
    comma-separated; when it names none, those the dialogue ``heard`` says something about that the
    request mentions (:func:`categories_said_about`); :data:`UNKNOWN` when there are none."""
    try:
        categories = [str(c) for c in json.loads(listed)]
    except (json.JSONDecodeError, TypeError):
        return UNKNOWN
    named = named_categories(request, categories) or categories_said_about(request, heard, categories)
    return ", ".join(named) or UNKNOWN


def categories_said_about(request: str, heard: Sequence[tuple[str, str]], categories: Sequence[str]) -> list[str]:
    """The ``categories`` of which ``heard`` (``(speaker, utterance)`` lines) states a social value
    the request mentions (``Take me to the lighthouse.`` after ``We call the bed the lighthouse.``:
    ``bed``), in the order of the mentions, words in canonical forms as in :func:`named_categories`
    (issue 37's dialogue-only instructions)."""
    if not heard:
        return []
    statements = [
        s
        for s in heard_facts(tuple(u for _, u in heard), frozenset(categories), frozenset(s for s, _ in heard))
        if s.key in SOCIAL_KEYS
    ]
    known = frozenset(w for phrase in [*categories, *(s.value for s in statements)] for w in canonical_phrase(phrase))
    request_words = canonical_request(request, known, LEXICON)
    found = sorted(
        (spans[0][0], statement.category)
        for statement in statements
        if (spans := find_spans(request_words, canonical_phrase(statement.value)))
    )
    return list(dict.fromkeys(category for _, category in found))


def select_linked_object(remark: str, listed: str) -> str:
    """The id of the first object of the JSON list ``listed`` (``{"id", "label"}`` rows) whose label
    is the first of their labels named in ``remark``; :data:`UNKNOWN` when none is named."""
    try:
        rows = [(str(r["id"]), str(r["label"])) for r in json.loads(listed)]
    except (json.JSONDecodeError, TypeError, KeyError):
        return UNKNOWN
    named = named_categories(remark, {label for _, label in rows})
    return next((i for i, label in rows if label == named[0]), UNKNOWN) if named else UNKNOWN
