"""The structured reasoner's reading of written spoken histories (backends/voxmem_reader.py)."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.core.chat import Message
from memgym.datasets.voxmem.plans import plan_item
from memgym.datasets.voxmem.taxonomy import BUILDABLE_CELLS, SUBTYPES
from memgym.memory.voxmem.history_lines import parse_history, parse_tag_line, tag_line
from memgym.pipelines.structured_reasoner import StructuredReasoner
from memgym.pipelines.voxmem.reader import REFUSAL, magnitude, parse_question, stated_value

SOUNDS = ["rain", "dog", "clock_alarm", "siren", "train", "wind"]


def test_tag_line_round_trip():
    line = tag_line("I think Monday works.", "B", "B", "hesitant", "clock_alarm")
    heard = parse_tag_line(line)
    assert (heard.words, heard.voice, heard.asker, heard.cue, heard.sound) == (
        "I think Monday works.", "B", True, "hesitant", "clock alarm",
    )  # fmt: skip
    quiet = parse_tag_line(tag_line("Hello.", "A", "B", "calm and neutral", ""))
    assert (quiet.voice, quiet.asker, quiet.sound) == ("A", False, "")
    assert not parse_tag_line("Just words, no tags.").tagged


@pytest.mark.parametrize("cell", [c for c in BUILDABLE_CELLS if c[1] != "AR"], ids=lambda c: "/".join(c))
def test_every_template_question_is_recognised(cell):
    """Every question the planner writes parses to its own cell, subtype and subjects."""
    evidence, operation = cell
    for subtype in SUBTYPES[operation]:
        for seed in range(3):
            plan = plan_item("p", evidence, operation, subtype, SOUNDS, np.random.default_rng(seed))
            question = parse_question(plan.question)
            assert question is not None, plan.question
            assert (question.evidence, question.operation, question.subtype) == (evidence, operation, subtype)
            assert question.subjects()[: len(plan.query.subjects)] == [s.lower() for s in plan.query.subjects]


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("For the sofa, the price limit is going to be ninety dollars.", "ninety dollars"),
        ("We settled on an hour as the oven time for the birthday cake.", "an hour"),
        ("Actually, the deadline for the office move is now the tenth instead.", "the tenth"),
        ("Update on the carpool, the departure time has changed to 7:45.", "7:45"),
        ("The budget for the new deck is still up in the air.", ""),
        ("I wanted to talk about the sofa for a minute.", None),
    ],
)
def test_stated_value(line, value):
    assert stated_value(line) == value


def test_magnitude_orders_values_of_different_forms():
    assert magnitude("an hour") > magnitude("forty five minutes") > magnitude("twenty minutes")
    assert magnitude("$5,000") > magnitude("two thousand dollars")
    assert magnitude("three in the afternoon") > magnitude("noon") > magnitude("eight in the morning")
    assert magnitude("seven forty five") > magnitude("six thirty")
    assert magnitude("once a week") > magnitude("twice a week") > magnitude("every two days") > magnitude("every day")
    assert magnitude("Thursday") > magnitude("Monday")
    assert magnitude("the twenty second") > magnitude("the tenth")
    assert magnitude("whenever") is None


def _history(sessions: list[list[tuple[str, str, str, str]]], asker: str, question: str) -> str:
    blocks = []
    for number, lines in enumerate(sessions, start=1):
        rows = [f"Session {number} - 2024-03-0{number} 10:00"]
        for words, voice, cue, sound in lines:
            rows += [f"User: {tag_line(words, voice, asker, cue, sound)}", "Assistant: Noted."]
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks) + f"\n\nQuestion: {question}"


def _ask(text: str) -> str:
    return StructuredReasoner().generate([Message.text("system", "history"), Message.text("user", text)])


SESSIONS = [
    [("I wanted to talk about the sofa for a minute.", "A", "hesitant", "rain"),
     ("I've decided the price limit for the sofa should be ninety dollars.", "A", "hesitant", "rain")],
    [("Can we go over the winter coat again?", "B", "calm and neutral", ""),
     ("Just so you know, the price limit for the winter coat is sixty dollars.", "B", "calm and neutral", "")],
    [("So I've been thinking about the sofa lately.", "B", "fast", "dog"),
     ("Change of plans for the sofa: the price limit is now four hundred dollars.", "B", "fast", "")],
    [("Let's sort out the details of the sofa.", "A", "surprised", "dog"),
     ("Actually, the price limit for the sofa is now two hundred dollars instead.", "A", "surprised", "dog")],
]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("In how many of our conversations was a price limit for the sofa given?", "3"),
        ("In how many of our conversations did a price limit for the sofa come up?", "3"),  # earlier builds
        ("How many different people told you a price limit for the sofa?", "2"),
        ("What is the latest price limit for the sofa?", "two hundred dollars"),
        ("What was the price limit for the sofa the second time it came up?", "four hundred dollars"),
        ("In order, what was the price limit for the sofa each time it came up?",
         "ninety dollars, then four hundred dollars, then two hundred dollars"),
        ("In order, each time the price limit for the sofa came up, was it me or someone else telling you?",
         "you, then someone else, then you"),
        ("How did I sound the last time I told you the price limit for the sofa?", "surprised"),
        ("In order, what could be heard in the background each time the price limit for the sofa came up?",
         "rain, then no background sound, then dog"),  # session 3: a tie, the stating line decides
        ("When I sounded hesitant telling you about the sofa, what price limit did I give?", "ninety dollars"),
        ("Was I the one who told you the price limit for the winter coat?", "no"),
        ("Which had the higher price limit: the sofa or the winter coat?", "the sofa"),
        ("Was the price limit for the sofa the same as the price limit for the winter coat?", "no"),
        ("What price limit did I tell you for the running shoes?", REFUSAL),
        ("What price limit was given for the winter coat?", "sixty dollars"),  # semantics IE
        ("What price limit was settled for the winter coat?", "sixty dollars"),
        ("When I sounded slow telling you about the sofa, what price limit did I give?", REFUSAL),
    ],
)  # fmt: skip
def test_structured_reads_tagged_histories(question, reply):
    assert _ask(_history(SESSIONS, "A", question)) == reply


def test_untagged_history_is_read_as_the_askers_words():
    text = _history(SESSIONS, "A", "Was I the one who told you the price limit for the winter coat?")
    untagged = "\n".join(
        line if not line.startswith("User: ") else "User: " + parse_tag_line(line[6:]).words
        for line in text.splitlines()
    )
    assert parse_history(untagged) is not None
    assert _ask(untagged) == "yes"


def test_unknown_question_falls_back_to_extractive_reading():
    text = _history(SESSIONS, "A", "Which colour is the winter coat?")
    assert _ask(text) != REFUSAL


def test_comparing_who_spoke_refuses_when_the_asker_never_spoke():
    question = "Which did I talk to you about in more of our conversations: the sofa or the winter coat?"
    assert _ask(_history(SESSIONS, "A", question)) == "the sofa"
    assert _ask(_history(SESSIONS, "C", question)) == REFUSAL


def test_a_subject_word_shared_with_the_slot_does_not_name_the_subject():
    sessions = [
        [("Change of plans for the band gig: the practice length is now fifteen minutes.", "A", "calm and neutral", "")],
        [("For the guitar practice, the practice length is going to be half an hour.", "B", "calm and neutral", "")],
    ]  # fmt: skip
    question = (
        "The first time the practice length for the guitar practice came up, was it me or someone else telling you?"
    )
    assert _ask(_history(sessions, "B", question)) == "you"


def test_a_fuzzily_heard_word_does_not_make_another_subject_count():
    """ "thinking" sounds like "training" (a recogniser's error tolerance), but a session about the
    fish tank that opens with it does not name the puppy training: counting, the latest value and
    answer refusal stay with the sessions that name the subject."""
    minutes = [
        [("For the puppy training, the daily minutes is going to be ten minutes.", "A", "calm and neutral", "")],
        [("So I've been thinking about the fish tank lately.", "B", "calm and neutral", ""),
         ("We settled on fifteen minutes as the daily minutes for the fish tank.", "B", "calm and neutral", "")],
        [("The daily minutes for the puppy training is still up in the air.", "A", "calm and neutral", "")],
    ]  # fmt: skip
    counting = "In how many of our conversations was a daily minutes for the puppy training given?"
    assert _ask(_history(minutes, "A", counting)) == "1"
    assert _ask(_history(minutes, "A", "What is the latest daily minutes for the puppy training?")) == "ten minutes"
    assert _ask(_history(minutes[1:], "A", counting)) == REFUSAL
