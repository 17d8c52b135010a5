"""What a visual memory perceives beyond labels: an instance's colour from its pixels and its room
from the categories around it (issue 37, item 2)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memgym.memory.embodied.appearance import colour_name, room_names
from memgym.scenes.catalog.category import COLORS


def crop_of(albedo, light: float, background=(0.5, 0.5, 0.5)) -> np.ndarray:
    """A 20x16 crop: the object, lit by ``light``, fills the middle; background at the border."""
    crop = np.tile(np.asarray(background, float), (20, 16, 1))
    crop[4:16, 3:13] = np.clip(np.asarray(albedo) * light, 0, 1)
    return (crop * 255).round().astype(np.uint8)


@pytest.mark.parametrize("name", sorted(COLORS))
@pytest.mark.parametrize("light", [0.7, 1.0, 1.3])
def test_every_palette_colour_is_named_under_lighting_changes(name, light):
    if light > 1.0 and max(COLORS[name]) * light > 1.0:
        pytest.skip("a saturated albedo clips: its hue is no longer the palette's")
    assert colour_name(crop_of(COLORS[name], light)) == name


def test_an_empty_crop_has_no_colour():
    assert colour_name(np.zeros((0, 4, 3), np.uint8)) is None


@dataclasses.dataclass
class Seen:
    id: str
    label: str
    location: tuple[float, float, float]


def test_rooms_come_from_the_categories_around_an_instance():
    instances = [
        Seen("bed", "bed", (0.0, 0.5, 0.0)),
        Seen("stand", "nightstand", (1.0, 0.3, 0.0)),
        Seen("chair", "armchair", (1.5, 0.4, 1.0)),  # living room, bedroom or office: the bed decides
        Seen("stove", "stove", (9.0, 0.5, 0.0)),
        Seen("fridge", "fridge", (10.0, 0.9, 0.0)),
        Seen("alone", "no such label", (30.0, 0.0, 0.0)),
    ]
    rooms = room_names(instances)
    assert rooms["bed"] == rooms["stand"] == rooms["chair"] == "bedroom"
    assert rooms["stove"] == rooms["fridge"] == "kitchen"
    assert "alone" not in rooms  # nothing around it votes
