"""The object catalogue of generated houses: 58 categories with typical shape, size, colour,
material, placement and rooms.

Every category builds its mesh in a local frame whose origin is the centre of its footprint on
the floor (or on the supporting surface), ``+Y`` up and its front facing ``+Z``; sizes are
``(width x, height y, depth z)`` metres sampled uniformly between the category's bounds.
Placement kinds: ``wall`` (back against a wall, facing into the room), ``corner``, ``free``
(anywhere in the room), ``surface`` (on top of a supporting object whose category is in
``supports``), ``hung`` (on a wall above the floor: pictures, towels) and ``seat`` (on the seat of
a sofa, armchair or bed whose category is in ``supports``).

The tables: :mod:`.furniture` (on the floor), :mod:`.small_objects` (on surfaces, and those placed
only by real-house clutter); :mod:`.category` defines a category and the colours, :mod:`.shapes`
builds the meshes, :mod:`.rooms` says which furniture each room type gets.
"""

from __future__ import annotations

from memgym.scenes.catalog.category import COLORS, Category
from memgym.scenes.catalog.furniture import FURNITURE
from memgym.scenes.catalog.rooms import COMPANIONS, ROOM_FURNITURE, ROOM_TYPES
from memgym.scenes.catalog.shapes import SHAPES, build_mesh
from memgym.scenes.catalog.small_objects import CLUTTER_ONLY, SMALL_OBJECTS

CATEGORIES: tuple[Category, ...] = FURNITURE + SMALL_OBJECTS + CLUTTER_ONLY
"""The catalogue, in a fixed order (generation draws depend on it). The last three (``hung`` and
``seat`` placements) are placed only by real-house clutter, never by the furnishing of
:data:`ROOM_FURNITURE`, so houses without clutter are what they were before they existed."""

CATEGORY_BY_NAME: dict[str, Category] = {c.name: c for c in CATEGORIES}

__all__ = [
    "CATEGORIES",
    "CATEGORY_BY_NAME",
    "COLORS",
    "COMPANIONS",
    "ROOM_FURNITURE",
    "ROOM_TYPES",
    "SHAPES",
    "Category",
    "build_mesh",
]
