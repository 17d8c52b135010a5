"""Task specs and filters: same-type exclusion, uniqueness, ambiguous groups, answer leakage,
latest-state gold answers, verbalised flags, and the structured reasoner as an upper bound."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from dialogmem_fixtures import OBJECTS, TRAVERSAL

from memgym.backends.structured import format_fact
from memgym.core.chat import Message
from memgym.core.task_line import request_line
from memgym.datasets.dialogmem.content import MemoryItem
from memgym.datasets.dialogmem.episode import ConstructionConfig, build_episode, observation_log
from memgym.datasets.dialogmem.task_specs import (
    TaskSpec,
    available_content,
    build_items,
    is_same_type,
    is_unique,
    referring_expression,
    reveals_answer,
)
from memgym.pipelines.structured_reasoner import StructuredReasoner


def item(object_id, key, value, type_="perceptual", category="mug", **kw):
    return MemoryItem(object_id=object_id, category=category, type=type_, key=key, value=value, **kw)


RED, BLUE = item("m1", "color", "red"), item("m2", "color", "blue")
KITCHEN1, KITCHEN2 = item("m1", "room", "kitchen"), item("m2", "room", "kitchen")
OWNER1 = item("m1", "owner", "Amelia", "social", stated=True, time=3)
OWNER1_NEW = item("m1", "owner", "Ben", "social", version=1, operation="correction", previous="Amelia", stated=True)
OWNER2 = item("m2", "owner", "Carla", "social", stated=True)
CONTENT = {
    "m1": {"color": RED, "room": KITCHEN1, "owner": OWNER1_NEW},
    "m2": {"color": BLUE, "room": KITCHEN2, "owner": OWNER2},
}
GOAL = {"m1": {"position": [0, 0, 0], "view_points": []}, "m2": {"position": [1, 0, 0], "view_points": []}}


def test_same_type_qa_is_excluded():
    assert is_same_type(TaskSpec("qa", "m1", "mug", (RED,), KITCHEN1))
    assert not is_same_type(TaskSpec("qa", "m1", "mug", (RED, OWNER1_NEW), KITCHEN1))
    assert not is_same_type(TaskSpec("qa", "m1", "mug", (OWNER1_NEW,), KITCHEN1))
    assert not is_same_type(TaskSpec("navigation", "m1", "mug", (RED,)))


def test_uniqueness_of_cues_among_observed_objects():
    assert is_unique(TaskSpec("navigation", "m1", "mug", (RED,)), CONTENT)
    assert not is_unique(TaskSpec("navigation", "m1", "mug", (KITCHEN1,)), CONTENT)
    other_category = {**CONTENT, "s": {"room": item("s", "room", "kitchen", category="sofa")}}
    assert is_unique(TaskSpec("navigation", "m1", "mug", (RED, KITCHEN1)), other_category)


def test_filters_drop_ambiguous_revealing_and_duplicate_items():
    rng = np.random.default_rng(0)
    specs = [
        TaskSpec("qa", "m1", "mug", (RED,), OWNER1_NEW),  # kept
        TaskSpec("qa", "m1", "mug", (KITCHEN1,), OWNER1_NEW),  # not unique: both mugs are in the kitchen
        TaskSpec("qa", "m1", "mug", (RED,), KITCHEN1),  # same type
        TaskSpec("qa", "m2", "mug", (BLUE,), item("m2", "alias", "blue mug", "social", stated=True)),  # reveals
        TaskSpec("qa", "m1", "mug", (RED,), OWNER1_NEW),  # duplicate prompt
    ]
    items, dropped = build_items(rng, specs, CONTENT, GOAL, {("m1", "owner", 1): 4}, episode_id="e")
    assert [i.prompt for i in items] == ["Who owns the red mug?"]
    assert items[0].annotations["evidence_turns"] == [4]
    assert items[0].answer == "Ben"  # the correction is the gold answer
    assert items[0].annotations["updated"] is True and items[0].annotations["verbalised"] is True
    assert dropped == Counter({"not_unique": 1, "same_type": 1, "reveals_answer": 1, "duplicate": 1})


def test_prompts_leaking_metadata_are_dropped():
    odd = item("k1", "color", "red", category="kitchen_cabinet_3")
    items, dropped = build_items(
        np.random.default_rng(0),
        [TaskSpec("navigation", "k1", "kitchen_cabinet_3", (odd,))],
        {"k1": {"color": odd}},
        {"k1": {"position": [0, 0, 0], "view_points": []}},
        {},
        episode_id="e",
    )
    assert items == [] and dropped["invalid_text"] == 1


def test_groups_spanning_two_objects_are_dropped_whole():
    # Same category and cue for two different targets: neither can be told apart by the cue.
    content = {"m1": {"owner": OWNER1}, "m2": {"owner": dataclasses.replace(OWNER1, object_id="m2")}}
    specs = [TaskSpec("navigation", "m1", "mug", (OWNER1,)), TaskSpec("navigation", "m2", "mug", (OWNER1,))]
    items, dropped = build_items(np.random.default_rng(0), specs, {}, GOAL, {}, episode_id="e")
    assert items == [] and dropped["ambiguous_group"] == 2
    items, dropped = build_items(np.random.default_rng(0), specs, content, GOAL, {}, episode_id="e")
    assert items == [] and dropped["not_unique"] == 2


def test_available_content_uses_the_latest_stated_social_version():
    unstated_update = dataclasses.replace(OWNER1_NEW, stated=False)
    table = available_content([RED, OWNER1, unstated_update, item("x", "color", "red")], observed={"m1"})
    assert table["m1"]["owner"].value == "Amelia"
    assert "x" not in table
    table = available_content([RED, OWNER1, OWNER1_NEW], observed={"m1"})
    assert table["m1"]["owner"].value == "Ben"


def test_referring_expressions_and_answer_revealing():
    seen = item("m1", "times_seen", "twice", "episodic")
    first = item("m1", "order", "first", "episodic")
    assert referring_expression("mug", (RED, OWNER1)) == "Amelia's red mug"
    assert referring_expression("mug", (KITCHEN1, seen)) == "the mug in the kitchen that you saw twice"
    assert referring_expression("mug", (first, OWNER1)) == "the first mug you saw that belongs to Amelia"
    assert reveals_answer("Who owns the mug Amelia uses?", "Amelia")
    assert not reveals_answer("Who owns the red mug?", "the Amelia")


@pytest.fixture(scope="module")
def episode():
    return build_episode(
        episode_id="e0",
        objects=OBJECTS,
        traversal=TRAVERSAL,
        rng=np.random.default_rng(7),
        config=ConstructionConfig(qa_per_object=4, navigation_per_object=2),
    )


def test_items_follow_the_annotation_contract(episode):
    assert {i.task for i in episode.items} == {"qa", "navigation"}
    stated = {(m.object_id, m.key, m.version) for m in episode.memory if m.stated}
    for task_item in episode.items:
        notes = task_item.annotations
        if task_item.task == "navigation":
            assert task_item.answer["object_id"] == notes["object_id"]
            assert task_item.answer["view_points"]
            if not notes["names_category"]:  # named only by what residents said
                assert notes["content_type"] == "social" and notes["evidence_turns"]
                assert notes["category"] not in task_item.prompt.lower()
            continue
        assert not reveals_answer(task_item.prompt, task_item.answer)
        assert notes["identification_types"] != [notes["content_type"]]
        said = any(
            m.stated and m.value == task_item.answer
            for m in episode.memory
            if (m.object_id, m.key) == (notes["object_id"], notes["answer_key"])
        )
        assert notes["verbalised"] is said
        if notes["content_type"] == "social":
            assert notes["verbalised"] is True
            latest = max(
                (m for m in episode.memory if m.object_id == notes["object_id"] and m.key == notes["answer_key"]),
                key=lambda m: (m.stated, m.version),
            )
            assert (latest.object_id, latest.key, latest.version) in stated
            assert task_item.answer == latest.value


def test_structured_reasoner_with_oracle_facts_answers_every_item(episode):
    observed = set(observation_log(episode.traversal).first_seen())
    content = available_content(episode.memory, observed)
    facts = "\n".join(format_fact(m.as_fact()) for keys in content.values() for m in keys.values())
    reasoner = StructuredReasoner()
    for task_item in episode.items:
        line = request_line(task_item.task, task_item.prompt)  # the env states the task
        reply = reasoner.generate([Message.text("user", f"{facts}\n{line}")])
        if task_item.task == "qa":
            assert reply == task_item.answer, task_item.prompt
        else:
            assert reply == f"OBJECT {task_item.answer['object_id']}", task_item.prompt
