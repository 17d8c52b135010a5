"""The information-selection policy, visibility alignment and the turn planner's compliance."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dialogmem_fixtures import CATEGORIES, LOG, OBJECTS

from memgym.datasets.dialogmem.content import MemoryItem, episodic_content, perceptual_content, social_content
from memgym.datasets.dialogmem.policy import (
    TurnSpec,
    chain_order_violations,
    episodic_violations,
    policy_violations,
    visibility_violations,
)
from memgym.datasets.dialogmem.residents import Resident
from memgym.datasets.dialogmem.turns import TurnPlanConfig, plan_turns

RED = MemoryItem(object_id="mug_2", category="mug", type="perceptual", key="color", value="red")
OWNER = MemoryItem(object_id="mug_2", category="mug", type="social", key="owner", value="Ben")
SEEN = MemoryItem(object_id="mug_2", category="mug", type="episodic", key="times_seen", value="twice")


def spec(turn_type, content, step=2, referenced=("mug_2",), goal=""):
    return TurnSpec(
        turn_id=0,
        step=step,
        speaker="Ben",
        turn_type=turn_type,
        visible=LOG.visible[step],
        referenced=referenced,
        content=content,
        goal=goal,
    )


@pytest.mark.parametrize(
    ("turn_type", "content", "goal", "ok"),
    [
        ("navigation", RED, "mug_2", True),
        ("navigation", OWNER, "mug_2", False),  # social content in a navigation turn
        ("navigation", None, "mug_2", False),  # a navigation turn must identify its goal
        ("commentary", OWNER, "", True),
        ("commentary", RED, "", True),  # residents say what objects look like (issue 37)
        ("recall", OWNER, "", True),
        ("post_arrival", OWNER, "mug_2", True),
        ("post_arrival", OWNER, "", False),
        ("commentary", SEEN, "", True),  # ... and how the robot came across them (when settled: below)
        ("navigation", SEEN, "mug_2", False),
        ("navigation", OWNER, "mug_2", False),
    ],
)
def test_content_type_policy(turn_type, content, goal, ok):
    assert (policy_violations(spec(turn_type, content, goal=goal)) == []) is ok


def test_content_must_be_about_a_referenced_object():
    assert "does not reference" in policy_violations(spec("commentary", OWNER, referenced=("mug_3",)))[0]


def test_visibility_alignment():
    assert visibility_violations(spec("commentary", OWNER, step=2), LOG) == []
    assert "not visible" in visibility_violations(spec("commentary", OWNER, step=4), LOG)[0]
    assert visibility_violations(spec("recall", OWNER, step=4), LOG) == []  # seen at 1-3, not at 4
    assert "visible now" in visibility_violations(spec("recall", OWNER, step=2), LOG)[0]
    assert "not observed before" in visibility_violations(spec("recall", OWNER, step=0), LOG)[0]
    far = dataclasses.replace(spec("commentary", OWNER), step=99)
    assert "outside" in visibility_violations(far, LOG)[0]


def test_episodic_items_are_stated_only_once_settled():
    # mug_2 is seen at steps 1-3 and 6-7: its count is settled from step 8, its order from step 1
    assert "last sighting" in episodic_violations(spec("commentary", SEEN, step=2), LOG)[0]
    assert "last sighting" in episodic_violations(spec("recall", SEEN, step=7), LOG)[0]
    assert episodic_violations(spec("recall", SEEN, step=8), LOG) == []
    first = dataclasses.replace(SEEN, key="order", value="first")
    assert "before it was first seen" in episodic_violations(spec("recall", first, step=0), LOG)[0]
    assert episodic_violations(spec("commentary", first, step=1), LOG) == []
    assert episodic_violations(spec("commentary", RED, step=0), LOG) == []  # not episodic


def test_chain_order():
    update = dataclasses.replace(OWNER, value="Amelia", version=1, operation="update", previous="Ben")
    good = [spec("commentary", OWNER, step=2), dataclasses.replace(spec("recall", update, step=4), turn_id=1)]
    assert chain_order_violations(good) == []
    assert chain_order_violations([good[1]])  # an update with no prior statement


@pytest.mark.parametrize("seed", range(5))
def test_planner_output_complies(seed):
    rng = np.random.default_rng(seed)
    residents = (Resident(name="Amelia", relationship="mother", style="formal"),)
    items = [i for o in OBJECTS for i in perceptual_content(o, CATEGORIES)] + episodic_content(LOG, CATEGORIES)
    observed = set(LOG.first_seen())
    for o in OBJECTS:
        if o.object_id in observed:
            items += social_content(rng, o, residents, keys_per_object=3, change_probability=0.8)
    specs, stated = plan_turns(rng, LOG, items, residents, TurnPlanConfig(commentary_every=2, recall_probability=1))
    assert {s.turn_type for s in specs} >= {"navigation", "commentary", "post_arrival"}
    for s in specs:
        assert policy_violations(s) == [], s
        assert visibility_violations(s, LOG) == [], s
    assert chain_order_violations(specs) == []
    assert [s.turn_id for s in specs] == list(range(len(specs)))
    said = {(s.content.object_id, s.content.key, s.content.version) for s in specs if s.content}
    for item in stated:
        assert item.stated == ((item.object_id, item.key, item.version) in said)
        assert not (item.type == "episodic" and item.stated)
