"""What residents say an object looks like and how it was come across, read by meaning (issue 37):
lines written for this test (not by the dataset's grammar) are read as their fact, a question
asserts only what its noun phrase presupposes, and a `dialogue` memory answers perceptual and
episodic questions from what was said."""

from __future__ import annotations

import pytest

from memgym.core.chat import Message
from memgym.core.task_line import request_line
from memgym.pipelines.dialogmem.reasoner.dialogue_reading import read_statements
from memgym.pipelines.structured_reasoner import StructuredReasoner

CATEGORIES = ["sofa", "mug", "microwave", "vase", "desk", "lamp", "coffee table", "kitchen counter", "bed", "chair"]
WRITTEN = [
    ("Our sofa? It's grey, been that way forever.", ("sofa", "color", "gray")),
    ("That mug sits on top of the microwave.", ("mug", "on", "microwave")),
    ("You walked past the vase two times today.", ("vase", "times_seen", "twice")),
    ("The desk is a wooden one.", ("desk", "material", "wood")),
    ("Honestly the lamp is tiny.", ("lamp", "size", "small")),
    ("The bed has been in the bedroom since we moved in.", ("bed", "room", "bedroom")),
    ("We keep the mug right beside the kettle.", ("mug", "near", "kettle")),
    ("You noticed the chair while going over to the coffee table.", ("chair", "segment", "coffee table")),
    ("Of all the chairs you passed, that chair was the 3rd.", ("chair", "order", "third")),
    ("The vase? Pure glass, handle with care.", ("vase", "material", "glass")),
    ("I left the mug on the kitchen counter.", ("mug", "on", "kitchen counter")),
    ("You saw the lamp just once.", ("lamp", "times_seen", "once")),
    ("The sofa is huge, honestly.", ("sofa", "size", "large")),
    ("We moved the desk into the office.", ("desk", "room", "office")),
    ("Could you head over to the blue sofa?", ("sofa", "color", "blue")),
]


@pytest.mark.parametrize(("line", "fact"), WRITTEN)
def test_a_written_line_is_read_as_its_fact_and_no_other(line, fact):
    assert {(s.category, s.key, s.value) for s in read_statements([line], CATEGORIES, ["Ben"])} == {fact}


@pytest.mark.parametrize(
    "line",
    [
        "Was the sofa red?",  # a question asserts nothing it does not presuppose
        "Please make your way to the desk.",  # the object is its own destination: no segment
        "Remember the lamp you saw earlier?",
        "On purpose, the family chose the lamp.",
    ],
)
def test_lines_that_state_no_fact_are_read_as_none(line):
    assert read_statements([line], CATEGORIES, ["Ben"]) == []


def test_social_statements_still_win():
    said = read_statements(["We call the sofa the red baron."], CATEGORIES, ["Ben"])
    assert [(s.key, s.value) for s in said] == [("alias", "the red baron")]


def ask(transcript: list[str], question: str) -> str:
    lines = [*transcript, request_line("qa", question)]
    return StructuredReasoner().generate([Message.text("user", "\n".join(lines))])


def test_a_dialogue_memory_answers_what_was_said_about_looks_and_sightings():
    transcript = [
        "Ben: See that lamp? Just so you know, the lamp is a lovely teal.",
        "Ana: You came across the lamp twice on this walk.",
        "Ben: I put the lamp on the desk this morning.",
        "Ana: Incidentally, the lamp ended up in the office after the move.",
        "Ben: Sorry, I moved the lamp into the bedroom.",
    ]
    assert ask(transcript, "What colour is the lamp?") == "teal"
    assert ask(transcript, "How many times did you see the lamp?") == "twice"
    assert ask(transcript, "What is the lamp resting on?") == "desk"
    assert ask(transcript, "Which room is the lamp in?") == "bedroom"  # the latest statement wins
    assert ask(transcript[:4], "Which room is the lamp in?") == "office"  # before the move was corrected
