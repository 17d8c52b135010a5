"""Rooms of generated houses and the furniture each is furnished with."""

from __future__ import annotations

ROOM_TYPES = ("living room", "kitchen", "bedroom", "bathroom", "dining room", "office", "hallway")
"""Region labels of generated houses."""

ROOM_FURNITURE: dict[str, tuple[tuple[str, float], ...]] = {
    "living room": (
        ("sofa", 1.0),
        ("coffee table", 0.9),
        ("tv stand", 0.9),
        ("armchair", 0.7),
        ("bookshelf", 0.5),
        ("potted plant", 0.7),
        ("floor lamp", 0.6),
        ("piano", 0.25),
        ("fireplace", 0.3),
        ("ottoman", 0.3),
        ("cabinet", 0.3),
        ("fan", 0.2),
    ),
    "kitchen": (
        ("fridge", 1.0),
        ("kitchen counter", 1.0),
        ("stove", 0.9),
        ("dishwasher", 0.5),
        ("trash can", 0.8),
        ("dining table", 0.3),
        ("stool", 0.4),
        ("cabinet", 0.3),
    ),
    "bedroom": (
        ("bed", 1.0),
        ("nightstand", 0.9),
        ("wardrobe", 0.8),
        ("dresser", 0.6),
        ("desk", 0.3),
        ("mirror", 0.3),
        ("laundry basket", 0.4),
        ("floor lamp", 0.3),
        ("armchair", 0.2),
        ("suitcase", 0.3),
        ("potted plant", 0.3),
        ("storage box", 0.2),
        ("nightstand", 0.5),
    ),
    "bathroom": (
        ("toilet", 1.0),
        ("bathroom sink", 1.0),
        ("bathtub", 0.7),
        ("washing machine", 0.3),
        ("laundry basket", 0.3),
        ("trash can", 0.4),
        ("mirror", 0.2),
    ),
    "dining room": (("dining table", 1.0), ("cabinet", 0.6), ("potted plant", 0.5), ("bench", 0.3)),
    "office": (
        ("desk", 1.0),
        ("bookshelf", 0.8),
        ("armchair", 0.3),
        ("trash can", 0.6),
        ("potted plant", 0.4),
        ("treadmill", 0.2),
        ("storage box", 0.4),
        ("floor lamp", 0.3),
        ("cabinet", 0.4),
    ),
    "hallway": (
        ("shoe rack", 0.8),
        ("coat rack", 0.6),
        ("bench", 0.4),
        ("mirror", 0.4),
        ("potted plant", 0.4),
        ("cabinet", 0.3),
        ("washing machine", 0.2),
        ("storage box", 0.2),
    ),
}
"""Room type -> furniture (category, probability of trying to place it), in placement order."""

COMPANIONS: dict[str, tuple[str, int, int]] = {"dining table": ("chair", 2, 4), "desk": ("chair", 1, 1)}
"""Furniture that brings chairs: category -> (companion category, min count, max count)."""
