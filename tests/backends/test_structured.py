"""The deterministic structured reasoner: fact parsing, latest-state answers, ties, fallback."""

from __future__ import annotations

from memgym.backends.request_reading import asked_key as read_asked_key
from memgym.backends.request_reading import tokens
from memgym.backends.structured import Fact, format_fact, parse_facts
from memgym.core.chat import Message
from memgym.core.task_line import request_line
from memgym.pipelines.structured_reasoner import UNKNOWN, StructuredReasoner, extractive_answer

FACTS = [
    Fact("m1", "mug", "perceptual", "color", "red", 0),
    Fact("m1", "mug", "social", "owner", "Amelia", 3),
    Fact("m1", "mug", "social", "owner", "Ben", 9),  # a later update wins
    Fact("m2", "mug", "perceptual", "color", "blue", 0),
    Fact("m2", "mug", "social", "owner", "Carla", 4),
    Fact("s1", "sofa", "perceptual", "room", "living room", 0),
]


def ask(question: str, facts=FACTS, task: str = "qa") -> str:
    evidence = "\n".join(format_fact(f) for f in facts)
    line = request_line(task, question)
    return StructuredReasoner().generate([Message.text("user", f"Memory:\n{evidence}\n{line}")])


def asked_key(question: str) -> str | None:
    return read_asked_key(tokens(question))


def test_fact_lines_round_trip_and_junk_is_ignored():
    text = "\n".join([format_fact(FACTS[0]), "FACT {broken", "chatter", format_fact(FACTS[1])])
    assert parse_facts([text]) == [FACTS[0], FACTS[1]]


def test_latest_state_is_answered():
    assert ask("Who owns the red mug?") == "Ben"
    assert ask("Who owns the blue mug?") == "Carla"


def test_identification_ties_answer_unknown():
    assert ask("Who owns the mug?") == UNKNOWN
    assert ask("Who owns the green kettle?") == UNKNOWN


def test_instructions_select_an_object():
    assert ask("Go to the mug that Carla owns.", task="navigation") == "OBJECT m2"
    assert ask("Please go to the sofa in the living room.", task="navigation") == "OBJECT s1"


def test_the_stated_task_decides_between_answer_and_object_whatever_the_wording():
    # the env states each item's task; the wording never decides it (issue 37)
    assert ask("The mug that Carla owns: what colour is it?") == "blue"
    assert ask("The mug that Carla owns.", task="navigation") == "OBJECT m2"
    assert ask("Could you tell me where the mug that Carla owns is?", task="navigation") == "OBJECT m2"
    assert ask("Go to the mug that Carla owns, what colour is it?", task="qa") == "blue"


def test_question_cues():
    assert asked_key("What color is Amelia's mug?") == "color"
    assert asked_key("How many times did you see the lamp?") == "times_seen"
    assert asked_key("Go to the lamp.") is None  # no asking word


def test_extractive_fallback_without_facts():
    context = "Amelia: that red mug is mine\nBen: the sofa is comfy"
    assert extractive_answer("Who owns the red mug?", context) == "amelia mine"
    assert extractive_answer("Where is the piano?", context) == UNKNOWN


def test_earliest_cue_wins_over_cues_inside_the_reference():
    assert asked_key("What color is the mug that is used for tea?") == "color"
    assert asked_key("What is the mug that Amelia owns used for?") == "usage"


def test_category_prompt_lists_the_named_categories_in_order():
    from memgym.memory.embodied.category_retrieval import category_messages, parse_categories

    reasoner = StructuredReasoner()
    categories = ["kitchen counter", "counter", "mug", "sofa", "table"]
    reply = reasoner.generate(category_messages("Go to the mug on the kitchen counter next to the sofa.", categories))
    assert reply == "mug, kitchen counter, sofa"
    assert parse_categories(reply, categories) == ("mug", "kitchen counter", "sofa")
    assert reasoner.generate(category_messages("Go to the piano.", categories)) == "unknown"
    assert parse_categories("I think: Mug and maybe the TABLE.", categories) == ("mug", "table")


def test_facts_that_do_not_answer_a_question_fall_back_to_the_other_lines():
    reasoner = StructuredReasoner()
    facts = format_fact(Fact("obj_1", "mug", "perceptual", "detected", "mug"))
    memory = f"{facts}\nAmelia: The mug belongs to Ben."
    messages = [Message.text("user", f"Memory:\n{memory}\nWho owns the mug?")]
    assert reasoner.generate(messages) == "Ben"  # read as an ownership statement about the mug
    unread = f"{facts}\nAmelia: Ben said something about the mug."
    messages = [Message.text("user", f"Memory:\n{unread}\nWho owns the mug?")]
    assert reasoner.generate(messages) == "amelia ben said something about"  # no statement: extractive reading
    instruction = [Message.text("user", f"Memory:\n{memory}\nInstruction: Go to the mug.")]
    assert reasoner.generate(instruction) == "OBJECT obj_1"
    only_facts = [Message.text("user", f"Memory:\n{facts}\nWho owns the mug?")]
    assert reasoner.generate(only_facts) == "unknown"


def test_linked_dialogue_breaks_ties_between_entries():
    said = "Amelia: I drink my tea from that one every morning."
    facts = [
        Fact("e1", "mug", "perceptual", "detected", "mug"),
        Fact("e2", "mug", "perceptual", "detected", "mug"),
        Fact("e2", "mug", "social", "said_0", said),
        Fact("e1", "mug", "social", "said_0", "Ben: The mug is ugly."),  # only the category word is shared
    ]
    assert ask("Go to the mug Amelia drinks tea from.", facts, "navigation") == "OBJECT e2"
    assert ask("Go to the mug.", facts, "navigation") == UNKNOWN  # no content word beyond the category: a tie
    fact_match = [*facts, Fact("e1", "mug", "perceptual", "color", "red")]
    assert ask("Go to the red mug Amelia drinks tea from.", fact_match, "navigation") == "OBJECT e1"  # values first
