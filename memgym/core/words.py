"""Words that carry no content: the English function words that text matching (request reading,
session retrieval) leaves out. Each user adds its own domain words to :data:`FUNCTION_WORDS`."""

from __future__ import annotations

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
