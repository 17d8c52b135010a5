"""Defaults of generated DialogMem episodes, shared by ``memgym generate dialogmem`` and the
episodes ``memgym/DialogMem-v0`` generates itself (so an agent stepping the env meets the houses and
items the benchmark's datasets hold)."""

from __future__ import annotations

from memgym.datasets.dialogmem.episode import ConstructionConfig
from memgym.scenes.procedural import HouseConfig

DEFAULT_CLUTTER = "hm3d_v2"
"""``house.clutter`` of generated DialogMem houses unless set: repeats of common categories after
HM3D-Semantics (:mod:`memgym.scenes.clutter`; ``hm3d_v2`` is denser than the first default,
``hm3d``, which the scene specs of datasets built with it still name), with ``construction.unique_cues=true`` (items drawn
among the cues that single their target out of its repeated category). Both are added fields: at
these defaults the config keeps the hash it had before they existed; ``house.clutter=none
construction.unique_cues=false`` rebuilds the datasets made before."""
DEFAULT_ROOMS = (6, 9)
"""``house.min_rooms`` / ``house.max_rooms`` of generated DialogMem houses unless set. Real
annotated houses have many rooms (HM3D-Semantics: 3,100 rooms in 216 spaces, 14.4 per space), so
bedrooms, offices and hallways repeat and so do their beds, wardrobes, desks and lamps; with
:class:`~memgym.scenes.procedural.HouseConfig`'s 4-7 rooms, the rooms were full before the clutter
file's repeats were placed (64% of them placed) and 30.3-31.5% of navigation targets on the default
datasets of seeds 0-4 were the only observed object of their category; with 6-9 rooms 24.4-26.8%
(docs/dialogmem.md). This default changed the config hash; ``house.min_rooms=4 house.max_rooms=7``
gives the earlier default's hash and rebuilds its datasets exactly."""


def default_house() -> HouseConfig:
    """The :class:`HouseConfig` of generated DialogMem houses: :data:`DEFAULT_ROOMS` rooms with
    :data:`DEFAULT_CLUTTER` clutter."""
    return HouseConfig(clutter=DEFAULT_CLUTTER, min_rooms=DEFAULT_ROOMS[0], max_rooms=DEFAULT_ROOMS[1])


def default_construction() -> ConstructionConfig:
    """The :class:`ConstructionConfig` of generated DialogMem episodes: items drawn among the cues
    that single their target out of its observed category (``unique_cues``)."""
    return ConstructionConfig(unique_cues=True)
