"""Choosing the sessions a text LM reads: lexical overlap with the question, order kept.

A session's score is the number of distinct content words it shares with the question (its
tagged lines and assistant replies included, so "hesitant" or "rain" in a question matches a
session tagged with them), plus a 0.1 bonus per shared word bigram. The ``k`` best sessions are
kept, ties going to the later session, and returned in history order (order-dependent questions
keep their order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "was",
        "were",
        "are",
        "be",
        "been",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "by",
        "with",
        "and",
        "or",
        "it",
        "its",
        "this",
        "that",
        "you",
        "your",
        "i",
        "me",
        "my",
        "we",
        "our",
        "what",
        "which",
        "who",
        "how",
        "did",
        "do",
        "does",
        "when",
        "time",
        "times",
        "each",
        "came",
        "come",
        "up",
        "tell",
        "told",
        "tell",
        "about",
        "could",
        "heard",
        "background",
        "sound",
        "sounded",
        "same",
        "did",
        "in",
        "order",
        "last",
        "first",
        "second",
        "third",
        "whether",
        "than",
        "more",
    ]
)


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` without stop words."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def rank_sessions(question: str, sessions: Sequence[str], k: int) -> list[int]:
    """Indices of the ``k`` sessions (texts) that best match ``question``, in history order."""
    if k <= 0 or k >= len(sessions):
        return list(range(len(sessions)))
    asked = content_words(question)
    words, pairs = set(asked), set(zip(asked, asked[1:]))
    scores = []
    for index, text in enumerate(sessions):
        mine = content_words(text)
        score = len(words & set(mine)) + 0.1 * len(pairs & set(zip(mine, mine[1:])))
        scores.append((score, index))
    best = sorted(scores, key=lambda s: (-s[0], -s[1]))[:k]
    return sorted(index for _, index in best)
