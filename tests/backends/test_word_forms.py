"""Canonical word forms: a request's words meet the memory's values whatever their form."""

from __future__ import annotations

from memgym.backends.word_forms import canonical, canonical_phrase, canonical_request, inflections


def test_words_and_phrases_take_one_canonical_form():
    def forms(text: str) -> str:
        return " ".join(canonical(text.split(" ")))

    assert forms("the big wooden 3rd chair you saw one time") == "the large wood third chair you saw once"
    assert forms("a grey couch seen two times") == "a gray sofa seen twice"
    assert forms("the 2 lounge lamps") == "the two living room lamps"
    assert canonical_phrase("Dark Brown") == ("dark", "brown")


def test_inflections_meet_the_memory_vocabulary_and_the_readers_words_stay():
    vocabulary = frozenset(["bookshelf", "books", "lamp", "table", "phone", "calls"])
    assert canonical_request("the bookshelves by the book", vocabulary) == ["the", "bookshelf", "by", "the", "books"]
    assert canonical_request("two table lamps", vocabulary) == ["two", "table", "lamp"]
    assert canonical_request("what do they call it", vocabulary, frozenset(["call"]))[3] == "call"
    assert canonical_request("what do they call it", vocabulary)[3] == "calls"  # without keep: re-inflected
    assert inflections("shelves")[0] == "shelf" and "box" in inflections("boxes")
