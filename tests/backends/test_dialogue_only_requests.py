"""Instructions that name their target only by what residents said (issue 37): the category comes
from the dialogue a memory holds, the instance only from facts of an entry (oracle or linked)."""

from __future__ import annotations

from memgym.backends.structured import Fact, format_fact
from memgym.core.chat import Message
from memgym.core.task_line import request_line
from memgym.memory.embodied.category_retrieval import predict_categories
from memgym.pipelines.dialogmem.reasoner.answer import select_categories
from memgym.pipelines.structured_reasoner import StructuredReasoner

SAID = [("Ben", "We call the bed the lighthouse."), ("Ana", "The lamp belongs to Ana.")]
REQUEST = "Take me to the lighthouse."


def ask(facts: list[Fact], transcript: list[tuple[str, str]] = ()) -> str:
    lines = [format_fact(f) for f in facts] + [f"{s}: {u}" for s, u in transcript]
    line = request_line("navigation", REQUEST)  # the env states the task
    return StructuredReasoner().generate([Message.text("user", "\n".join([*lines, line]))])


def test_category_prediction_reads_the_dialogue_the_memory_holds():
    assert select_categories(REQUEST, '["bed", "lamp"]') == "unknown"
    assert select_categories(REQUEST, '["bed", "lamp"]', SAID) == "bed"
    assert predict_categories(StructuredReasoner(), REQUEST, ["bed", "lamp"], [f"{s}: {u}" for s, u in SAID]) == (
        "bed",
    )
    assert predict_categories(StructuredReasoner(), REQUEST, ["bed", "lamp"]) == ()


def test_appended_dialogue_resolves_the_category_not_the_instance():
    beds = [Fact("bed_1", "bed", "perceptual", "color", "red"), Fact("bed_2", "bed", "perceptual", "color", "blue")]
    assert ask(beds, SAID) == "unknown"  # two beds, the transcript says only that *a* bed is the lighthouse
    assert ask(beds[:1], SAID) == "OBJECT bed_1"  # one bed entry: the category decides
    assert ask(beds) == "unknown"  # no dialogue: nothing names the lighthouse


def test_a_fact_of_one_entry_picks_it_among_every_category():
    facts = [
        Fact("bed_1", "bed", "perceptual", "color", "red"),
        Fact("bed_2", "bed", "social", "alias", "the lighthouse"),
        Fact("lamp_3", "lamp", "social", "alias", "the cloud"),
    ]
    assert ask(facts) == "OBJECT bed_2"  # the oracle's facts, no category named or said
    twice = [*facts, Fact("lamp_4", "lamp", "social", "alias", "the lighthouse")]
    assert ask(twice) == "unknown"  # two entries hold the cue: a tie


def test_a_cue_worded_exactly_outranks_a_loose_one():
    facts = [
        Fact("sink_1", "bathroom sink", "social", "alias", "the cockpit"),
        Fact("picture_2", "picture", "social", "significance", "a lucky find"),
    ]
    line = request_line("navigation", "Find the cockpit.")  # ``find`` words ``a lucky find`` loosely
    assert StructuredReasoner().generate([Message.text("user", "\n".join([*map(format_fact, facts), line]))]) == (
        "OBJECT sink_1"
    )
