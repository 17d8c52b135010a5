"""Scoring recognised speech: number normalisation, word error rate and phrase hits."""

from __future__ import annotations

import pytest

from memgym.datasets.speech.intelligibility import (
    edit_distance,
    normalize_words,
    number_words,
    ordinal_words,
    phrase_recognised,
    word_errors,
)


@pytest.mark.parametrize(
    ("value", "words", "ordinal"),
    [
        (0, "zero", "zeroth"),
        (12, "twelve", "twelfth"),
        (22, "twenty two", "twenty second"),
        (40, "forty", "fortieth"),
        (105, "one hundred five", "one hundred fifth"),
        (5000, "five thousand", "five thousandth"),
        (2_000_031, "two million thirty one", "two million thirty first"),
    ],
)
def test_numbers_are_spelled(value, words, ordinal):
    assert number_words(value) == words and ordinal_words(value) == ordinal


def test_recogniser_spellings_match_the_spoken_words():
    assert normalize_words("I've set $5,000 for the 22nd!") == normalize_words(
        "I've set five thousand dollars for the twenty second."
    )
    assert normalize_words("At 4:30, 8:05 and 9:00 - 45% off") == (
        ["at", "four", "thirty", "eight", "oh", "five", "and", "nine", "forty", "five", "percent", "off"]
    )
    assert normalize_words("Forty-five minutes; the cat’s diet") == ["forty", "five", "minutes", "the", "cat's", "diet"]
    assert normalize_words("2.5 £20") == ["two", "point", "five", "twenty", "pounds"]


def test_word_errors_count_substitutions_insertions_and_deletions():
    assert edit_distance(list("abc"), list("abc")) == 0
    assert edit_distance(list("abc"), list("axc")) == 1
    assert edit_distance(list("abc"), list("ab")) == 1 and edit_distance([], list("ab")) == 2
    assert word_errors("The budget is five thousand dollars.", "the budget is $5000") == (0, 6)
    assert word_errors("the repair is on Friday", "the pair is Friday now") == (3, 5)


def test_phrases_must_be_heard_whole_and_in_order():
    assert phrase_recognised("seven fifteen", "We leave at 715.") and phrase_recognised("seven fifteen", "at 7:15")
    assert phrase_recognised("seven hundred fifteen", "We paid 715.")
    assert not phrase_recognised("seven fifteen", "at 7:50") and not phrase_recognised("seven fifteen", "at 1515")
    assert phrase_recognised("four sessions", "for sessions") and not phrase_recognised("three hours", "free hours")
    assert word_errors("leave at seven fifteen", "Leave at 715.") == (0, 4)
    assert phrase_recognised("twenty second", "It's due the 22nd.")
    assert phrase_recognised("the twenty eighth", "due the 28") and phrase_recognised("the third", "by the 3")
    assert not phrase_recognised("the twenty eighth", "due the 27th")
    assert phrase_recognised("forty five minutes", "bake it 45 minutes")
    assert not phrase_recognised("twelve guests", "12 guest")
    assert not phrase_recognised("three nights", "nights three")
    assert phrase_recognised("", "anything")
