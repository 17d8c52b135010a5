"""Real-house clutter (memgym.scenes.clutter): repeats of common categories, placed sensibly, from a
statistics file that is checked before any house is built."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from memgym.core.errors import ConfigError
from memgym.scenes.clutter import CLUTTER_DIR, load_clutter
from memgym.scenes.procedural import HouseConfig, generate_house

SMALL = {"min_rooms": 4, "max_rooms": 5}


@pytest.fixture(scope="module")
def houses():
    """The house of seed 3 without and with the shipped hm3d clutter."""
    return generate_house(3, HouseConfig(**SMALL)), generate_house(3, HouseConfig(**SMALL, clutter="hm3d"))


def test_clutter_repeats_categories_on_the_same_furniture(houses):
    plain, cluttered = houses
    assert plain.floor_plan == cluttered.floor_plan
    # the furniture of the seed stays (clutter is drawn after it); objects are only added
    furniture = Counter(o.category for o in plain.objects if not o.related("on"))
    assert Counter(o.category for o in cluttered.objects if not o.related("on")) - furniture
    assert not furniture - Counter(o.category for o in cluttered.objects)
    assert len(cluttered.objects) >= 1.4 * len(plain.objects)
    repeated = [c for c, n in Counter(o.category for o in cluttered.objects).items() if n >= 2]
    assert len(repeated) > len([c for c, n in Counter(o.category for o in plain.objects).items() if n >= 2])


def test_hung_and_seat_objects_are_where_they_belong(houses):
    _, house = houses
    by_id = {o.object_id: o for o in house.objects}
    hung = [o for o in house.objects if o.category in ("picture", "towel")]
    cushions = [o for o in house.objects if o.category == "cushion"]
    assert hung and cushions
    for obj in hung:  # on a wall of its room, at eye level, facing into the room
        x0, z0, x1, z1 = house.regions[obj.region_id].bounds
        assert 0.8 <= obj.position[1] <= 1.7 and min(obj.size[0], obj.size[2]) <= 0.07
        assert (
            min(
                abs(obj.position[0] - x0),
                abs(obj.position[0] - x1),
                abs(obj.position[2] - z0),
                abs(obj.position[2] - z1),
            )
            < 0.05
        )
    for obj in cushions:  # on the seat of a sofa, armchair or bed of its room
        (seat,) = obj.related("on")
        assert by_id[seat].category in ("sofa", "armchair", "bed") and by_id[seat].region_id == obj.region_id
        assert 0.44 <= obj.position[1] - obj.size[1] / 2 <= 0.56


def test_clutter_statistics_files_are_checked(tmp_path):
    assert load_clutter("none") is None and load_clutter("hm3d").rooms["bathroom"]["towel"] == (2, 5)
    with pytest.raises(ConfigError, match=r"missing\.yaml: cannot read"):
        HouseConfig(clutter=str(tmp_path / "missing.yaml"))
    bad = tmp_path / "bad.yaml"
    for text, message in (
        ("rooms: [1, 2]", "expected a mapping with 'rooms"),
        ("rooms:\n  garage: {}", "rooms.garage: expected one of"),
        ("rooms:\n  kitchen: {spaceship: [0, 1]}", "rooms.kitchen.spaceship: unknown category"),
        ("rooms:\n  kitchen: {mug: [3, 1]}", r"rooms.kitchen.mug: expected \[min, max\]"),
        ("rooms: {kitchen: {mug: [1, 2]}", "not a YAML clutter statistics file"),
    ):
        bad.write_text(text)
        load_clutter.cache_clear()
        with pytest.raises(ConfigError, match=message):
            load_clutter(str(bad))
    bad.write_bytes(b"rooms:\n  kitchen: {mug: [1, 2]} \xff\n")
    load_clutter.cache_clear()
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_clutter(str(bad))


def test_cli_names_an_unreadable_clutter_file(tmp_path, capsys):
    from memgym.cli import main

    missing = tmp_path / "houses.yaml"
    assert main(["generate", "dialogmem", f"house.clutter={missing}", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error:") and str(missing) in err[0]


def test_the_denser_default_only_adds_repeats_and_the_first_file_stays_as_built():
    first, dense = load_clutter("hm3d"), load_clutter("hm3d_v2")
    assert dense.name == "hm3d_v2" and set(first.rooms) == set(dense.rooms)
    for room, counts in first.rooms.items():
        for category, (low, high) in counts.items():
            assert dense.rooms[room][category][0] >= low and dense.rooms[room][category][1] >= high
    assert sum(h for c in dense.rooms.values() for _, h in c.values()) > sum(
        h for c in first.rooms.values() for _, h in c.values()
    )
    # datasets built with house.clutter=hm3d rebuild their houses from this file: it must not change
    digest = hashlib.sha256((CLUTTER_DIR / "clutter_hm3d.yaml").read_bytes()).hexdigest()
    assert digest == "731a94580849765f51fa85e75c135f657e719184ffa1b1c3504ecba519afc3a7"
    # ... and so do the datasets of the default (house.clutter=hm3d_v2)
    digest = hashlib.sha256((CLUTTER_DIR / "clutter_hm3d_v2.yaml").read_bytes()).hexdigest()
    assert digest == "02d77223b8ee5dee2bdad8c7699875da550553e7d7be98a975a3e5880b97b0bc"
