"""Words that carry no content: the English function words that text matching (request reading,
session retrieval) leaves out (each user adds its own domain words to :data:`FUNCTION_WORDS`),
and the answer normalisation of exact-match scoring (:func:`normalize_answer`)."""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, strip punctuation and the articles a/an/the, collapse whitespace."""
    text = str(text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "at",
        "by",
        "did",
        "do",
        "does",
        "for",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "that",
        "the",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "which",
        "who",
        "with",
        "you",
        "your",
    ]
)
"""Articles, pronouns, prepositions, auxiliaries and question words."""
