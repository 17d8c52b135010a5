"""What a catalogue category is (:class:`Category`), the colour names, and the palettes and
helper the category tables (:mod:`.furniture`, :mod:`.small_objects`) are written with."""

from __future__ import annotations

import dataclasses

import numpy as np

COLORS: dict[str, tuple[float, float, float]] = {
    "white": (0.92, 0.92, 0.9),
    "black": (0.08, 0.08, 0.09),
    "gray": (0.5, 0.5, 0.52),
    "beige": (0.86, 0.8, 0.66),
    "brown": (0.45, 0.29, 0.16),
    "dark brown": (0.27, 0.17, 0.1),
    "red": (0.75, 0.12, 0.12),
    "orange": (0.92, 0.5, 0.12),
    "yellow": (0.93, 0.8, 0.2),
    "green": (0.2, 0.55, 0.25),
    "blue": (0.18, 0.32, 0.72),
    "navy": (0.1, 0.14, 0.36),
    "teal": (0.1, 0.5, 0.5),
    "purple": (0.45, 0.22, 0.55),
    "pink": (0.92, 0.55, 0.65),
    "silver": (0.75, 0.76, 0.78),
}
"""Colour name -> linear RGB albedo in ``[0, 1]``."""


@dataclasses.dataclass(frozen=True)
class Category:
    """One object category of the catalogue.

    Attributes:
        name: category label (HM3D-style, lower case).
        size_min / size_max: ``(x, y, z)`` extents bounds, metres.
        colors: colour names (keys of :data:`COLORS`) it may have.
        materials: materials it may be made of.
        shape: name of its mesh builder in :data:`SHAPES`.
        placement: ``wall``, ``corner``, ``free``, ``surface``, ``hung`` or ``seat``.
        rooms: room types it appears in (for ``surface``: ignored, follows its support).
        supports: for ``surface`` and ``seat`` objects, the categories it may stand on.
        surface: whether small objects may be put on its top.
    """

    name: str
    size_min: tuple[float, float, float]
    size_max: tuple[float, float, float]
    colors: tuple[str, ...]
    materials: tuple[str, ...]
    shape: str
    placement: str
    rooms: tuple[str, ...] = ()
    supports: tuple[str, ...] = ()
    surface: bool = False

    def sample_size(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        """A size ``(3,)`` metres and its label small/medium/large within the category's range."""
        u = float(rng.uniform())
        lo, hi = np.asarray(self.size_min), np.asarray(self.size_max)
        size = lo + u * (hi - lo)
        label = "small" if u < 1 / 3 else ("medium" if u < 2 / 3 else "large")
        return size, label


WOODS = ("brown", "dark brown", "beige", "white", "black")
FABRICS = ("gray", "beige", "blue", "navy", "green", "red", "teal", "brown", "purple")
APPLIANCE = ("white", "silver", "black")
ALL_SURFACES = (
    "dining table",
    "coffee table",
    "desk",
    "nightstand",
    "dresser",
    "cabinet",
    "kitchen counter",
    "tv stand",
)
"""Every category small objects may stand on."""


def entry(name, lo, hi, colors, materials, shape, placement, rooms=(), supports=(), surface=False) -> Category:
    """One row of a category table: :class:`Category` with its sequences as tuples."""
    return Category(
        name, lo, hi, tuple(colors), tuple(materials), shape, placement, tuple(rooms), tuple(supports), surface
    )
