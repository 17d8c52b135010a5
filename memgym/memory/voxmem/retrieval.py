"""Choosing the sessions a text LM reads: BM25 over the sessions' words, order kept.

Each session is a document of its content words (tagged lines and assistant replies included, so
"hesitant" or "rain" in a question matches a session tagged with them); the question's content
words are the query. A session scores BM25 (``k1`` = 1.2, ``b`` = 0.75, idf
``log(1 + (N - n + 0.5) / (n + 0.5))`` over the history's ``N`` sessions), so a word that few
sessions hold (a subject's name) outweighs one that many hold (a topic family's slot), plus a
0.1 bonus per shared word bigram. The ``k`` best sessions are kept, ties going to the later
session, and returned in history order (order-dependent questions keep their order).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from memgym.core.words import FUNCTION_WORDS

_WORD = re.compile(r"[a-z0-9]+")
_STOP = FUNCTION_WORDS | frozenset(
    [
        "about",
        "background",
        "be",
        "been",
        "came",
        "come",
        "could",
        "each",
        "first",
        "heard",
        "last",
        "more",
        "order",
        "same",
        "second",
        "sound",
        "sounded",
        "tell",
        "than",
        "third",
        "time",
        "times",
        "told",
        "up",
        "when",
        "whether",
    ]
)  # and the words of spoken questions


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` without stop words."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def bm25_scores(question: str, sessions: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 score of each session text for ``question`` plus the bigram bonus (module docstring)."""
    asked = content_words(question)
    pairs = set(zip(asked, asked[1:]))
    documents = [content_words(text) for text in sessions]
    frequency = Counter(w for words in documents for w in set(words))
    mean_length = max(sum(len(words) for words in documents) / max(len(documents), 1), 1e-9)
    scores = []
    for words in documents:
        counts = Counter(words)
        norm = k1 * (1 - b + b * len(words) / mean_length)
        score = sum(
            math.log(1 + (len(documents) - frequency[w] + 0.5) / (frequency[w] + 0.5))
            * counts[w] * (k1 + 1) / (counts[w] + norm)
            for w in set(asked) if counts[w]
        )  # fmt: skip
        scores.append(score + 0.1 * len(pairs & set(zip(words, words[1:]))))
    return scores


def rank_sessions(question: str, sessions: Sequence[str], k: int) -> list[int]:
    """Indices of the ``k`` sessions (texts) that best match ``question``, in history order."""
    if k <= 0 or k >= len(sessions):
        return list(range(len(sessions)))
    scores = bm25_scores(question, sessions)
    best = sorted(range(len(sessions)), key=lambda i: (-scores[i], -i))[:k]
    return sorted(best)
