"""Memory content per object: perceptual from annotations, episodic from the log, social chains."""

from __future__ import annotations

import numpy as np
from dialogmem_fixtures import CATEGORIES, LOG, OBJECTS

from memgym.datasets.dialogmem.content import (
    ALIASES,
    MemoryItem,
    ObservationLog,
    Segment,
    episodic_content,
    latest,
    perceptual_content,
    social_content,
)
from memgym.datasets.dialogmem.residents import Resident, sample_residents

RESIDENTS = (
    Resident(name="Amelia", relationship="mother", style="formal"),
    Resident(name="Ben", relationship="son", style="casual"),
)


def as_table(items):
    return {(i.object_id, i.key): i.value for i in items}


def test_perceptual_content_from_annotations_and_relations():
    by_id = {o.object_id: o for o in OBJECTS}
    table = as_table(perceptual_content(by_id["mug_2"], CATEGORIES) + perceptual_content(by_id["lamp_5"], CATEGORIES))
    assert table[("mug_2", "color")] == "red"
    assert table[("mug_2", "material")] == "ceramic"
    assert table[("mug_2", "room")] == "kitchen"
    assert table[("mug_2", "on")] == "table"  # the supporting object's category, never its id
    assert table[("lamp_5", "near")] == "sofa"
    assert all(i.type == "perceptual" for i in perceptual_content(by_id["mug_2"], CATEGORIES))


def test_episodic_content_counts_separate_sightings_order_and_segments():
    table = as_table(episodic_content(LOG, CATEGORIES))
    # gaps of up to 6 unseen steps stay inside one sighting (memgym.sensors.sightings)
    assert table[("mug_2", "times_seen")] == "once"  # steps 1-3 and 6-7
    assert table[("lamp_5", "times_seen")] == "once"  # steps 9-10 and 13-14
    assert table[("bed_8", "times_seen")] == "once"  # steps 17, 19 and 22-23
    steps = {0: ("mug_2",), 1: ("mug_2",), 8: ("mug_2", "lamp_5"), 16: ("mug_2",), 17: ("lamp_5",), 30: ("lamp_5",)}
    log = ObservationLog(
        visible=tuple(steps.get(s, ()) for s in range(31)), segments=(Segment(goal="table_1", start=0, end=30),)
    )
    separate = as_table(episodic_content(log, CATEGORIES))
    # mug: 0-1 and 8 (6 unseen steps) are one sighting, 16 (7 unseen) another; lamp: 8, 17, 30
    assert separate[("mug_2", "times_seen")] == "twice" and separate[("lamp_5", "times_seen")] == "three times"
    assert table[("mug_2", "order")] == "first" and table[("mug_3", "order")] == "second"
    assert table[("lamp_5", "segment")] == "sofa"
    assert ("sofa_4", "segment") not in table  # the goal itself is not "seen on the way to" itself
    assert ("chair_7", "order") not in table  # never observed


def test_social_chains_have_latest_state_and_distinct_aliases():
    rng = np.random.default_rng(0)
    by_id = {o.object_id: o for o in OBJECTS}
    taken: dict[str, set[str]] = {}
    items: list[MemoryItem] = []
    for object_id in sorted(by_id):
        items += social_content(
            rng, by_id[object_id], RESIDENTS, keys_per_object=4, change_probability=1.0, taken=taken
        )
    changes = [i for i in items if i.version > 0]
    assert changes, "change_probability=1 must create updates or corrections"
    for change in changes:
        first = next(i for i in items if (i.object_id, i.key, i.version) == (change.object_id, change.key, 0))
        assert change.previous == first.value and change.value != first.value
        assert change.operation in ("update", "correction") and change.key in ("owner", "usage")
        assert latest(items)[(change.object_id, change.key)] == change
    aliases = [i.value for i in items if i.key == "alias"]
    assert len(aliases) == len(set(aliases)) and set(aliases) <= set(ALIASES)
    owners = {i.value for i in items if i.key == "owner"}
    assert owners <= {"Amelia", "Ben"}


def test_latest_can_ignore_unstated_versions():
    state = MemoryItem(object_id="m", category="mug", type="social", key="owner", value="Amelia", stated=True)
    update = MemoryItem(
        object_id="m", category="mug", type="social", key="owner", value="Ben", version=1, operation="update"
    )
    assert latest([state, update])[("m", "owner")].value == "Ben"
    assert latest([state, update], stated_only=True)[("m", "owner")].value == "Amelia"


def test_residents_are_distinct_and_deterministic():
    a = sample_residents(np.random.default_rng(3), 4)
    assert a == sample_residents(np.random.default_rng(3), 4)
    assert len({r.name for r in a}) == 4


def test_goat_style_descriptions_fill_missing_attributes_and_relations():
    from memgym.datasets.dialogmem.content import parse_description

    parsed = parse_description("A small white ceramic mug on the kitchen counter, next to the sink.", "mug")
    assert parsed == {"color": "white", "material": "ceramic", "size": "small", "on": "kitchen counter", "near": "sink"}
    assert parse_description("The dark brown chair beside a black table", "chair")["color"] == "dark brown"
    assert parse_description("a sofa", "sofa") == {}
    bare = OBJECTS[0].__class__(
        object_id="mug_9",
        semantic_id=9,
        category="mug",
        position=(0.0, 0.0, 0.0),
        size=(0.1, 0.1, 0.1),
        region="region 3",
        lang_desc="A red mug next to the sink.",
    )
    table = as_table(perceptual_content(bare, {}))
    assert table == {("mug_9", "color"): "red", ("mug_9", "near"): "sink"}  # no unnamed "region 3" room


class _Replies:
    def __init__(self, reply):
        self.reply = reply

    def generate(self, messages, *, max_new_tokens=256):
        return self.reply


def test_llm_resident_profiles_are_validated_with_pool_fallback():
    from memgym.datasets.dialogmem.residents import profiles_from_reasoner

    good = '[{"name": "Ada", "relationship": "aunt", "style": "terse"}, {"name": "Bo", "relationship": "son", "style": "chatty"}]'
    residents = profiles_from_reasoner(_Replies(good), ["kitchen"], 2, np.random.default_rng(0))
    assert [(r.name, r.style) for r in residents] == [("Ada", "terse"), ("Bo", "chatty")]
    fallback = sample_residents(np.random.default_rng(0), 2)
    for bad in ("not json", good.replace("terse", "shouty"), good.replace('"Bo"', '"Ada"'), "[]"):
        assert profiles_from_reasoner(_Replies(bad), ["kitchen"], 2, np.random.default_rng(0)) == fallback
