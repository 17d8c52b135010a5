"""Sightings: when an object counts as seen in a view, and how views add up to sightings.

One definition, used by the dataset annotation (the traversal's per-frame visibility and
DialogMem's episodic content, :mod:`memgym.datasets.traversal`,
:mod:`memgym.datasets.dialogmem.content`) and by the visual memories that count what they saw
(:mod:`memgym.memory.embodied.object_map`, :mod:`memgym.memory.embodied.relations`):

* an object is **seen in a view** when its mask covers at least :data:`MIN_SIGHTING_COVERAGE`
  (5%) of the view, as DialogMem (seed 003) defines "observed";
* a **sighting** is one look at it, as a person (or a tracker that keeps a lost track for a few
  frames) counts looks: frames in which it is seen belong to one sighting while each is at most
  :data:`MAX_SIGHTING_GAP` unseen frames after the previous one, so a glance away or a frame where
  its coverage dips under 5% does not start a new sighting; ``times_seen`` is the number of
  sightings. The gap is part of the data: a DialogMem dataset records the one its annotation
  counted with in each episode's annotations (:data:`SIGHTING_GAP_KEY`, from
  ``construction.max_sighting_gap``), and a memory bound to the episode counts with it
  (:func:`recorded_sighting_gap`; an episode built before the gap was recorded counts maximal runs
  of consecutive frames, ``max_gap=0``, as its annotation did);
* its **order** is its rank among the objects of its category by the frame of its first sighting
  (0 = first): the number of objects of the category first seen strictly earlier. Objects first
  seen in the same frame as another object of their category have no order (neither "the first
  chair you saw" nor "the second" would single one out).

A memory sees the same frames at its own camera resolution; coverage fractions at another
resolution than the annotation's visibility render (``traversal.visibility_width``) can fall on
the other side of the threshold for objects near it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

from memgym.core.errors import RecordError

MIN_SIGHTING_COVERAGE = 0.05
"""Smallest fraction of a view an object's mask must cover for the object to be seen in it."""

MAX_SIGHTING_GAP = 6
"""Most consecutive frames without an object inside one sighting of it. A formation frame is one
action (0.25 m forward or a 30 degree turn by default), so 6 frames is 1.5 m of walking or half a
turn: it bridges coverage hovering around the threshold and a detector's missed frames (the
annotation's gaps inside a look are mostly 1-2 frames), while a look-around's return to the
object after a full turn (gaps of 8-9 frames) and a later pass stay separate sightings.
Measured choice: docs/dialogmem.md, "Sightings under the default simulated perception". The default
of ``construction.max_sighting_gap``; a memory bound to no episode counts with it."""

SIGHTING_GAP_KEY = "max_sighting_gap"
"""Episode annotation: the ``max_gap`` the episode's ``times_seen`` annotation counted sightings with."""

K = TypeVar("K", bound=Hashable)


def seen_in_view(pixels: float, view_pixels: float, min_coverage: float = MIN_SIGHTING_COVERAGE) -> bool:
    """Whether a mask of ``pixels`` (or a coverage fraction, with ``view_pixels=1``) is seen."""
    return pixels >= min_coverage * view_pixels


def seen_frames(coverage: Mapping[int, float], min_coverage: float = MIN_SIGHTING_COVERAGE) -> list[int]:
    """Ascending frame indices whose coverage fraction (``{frame: fraction}``) reaches ``min_coverage``."""
    return sorted(f for f, c in coverage.items() if seen_in_view(c, 1.0, min_coverage))


def count_sightings(frames: Iterable[int], max_gap: int = MAX_SIGHTING_GAP) -> int:
    """Number of sightings in the frame indices ``frames`` an object is seen in: a frame more than
    ``max_gap`` unseen frames after the previous seen one starts a new sighting (``max_gap=0``:
    maximal runs of consecutive frames)."""
    ordered = sorted(set(frames))
    return sum(1 for k, f in enumerate(ordered) if k == 0 or f - ordered[k - 1] > max_gap + 1)


def recorded_sighting_gap(episode: Any) -> int:
    """The ``max_gap`` ``episode``'s annotation counted sightings with: its annotations'
    :data:`SIGHTING_GAP_KEY`, or 0 (maximal runs of consecutive frames) for an episode without one,
    built before the gap was recorded.

    Raises:
        RecordError: the recorded value is not an integer >= 0.
    """
    annotations = getattr(episode, "annotations", None) or {}
    gap = annotations.get(SIGHTING_GAP_KEY, 0)
    if isinstance(gap, bool) or not isinstance(gap, int) or gap < 0:
        where = getattr(episode, "episode_id", "?")
        raise RecordError(f"episode {where}: annotation '{SIGHTING_GAP_KEY}' must be an integer >= 0, got {gap!r}")
    return gap


def sighting_ranks(first: Mapping[K, int], groups: Mapping[K, str]) -> dict[K, int]:
    """Key -> order within its group (category) by first-sighting frame ``first[key]``; keys
    sharing their first frame with another key of the group are left out (module docstring)."""
    by_group: dict[str, list[int]] = {}
    for key, frame in first.items():
        by_group.setdefault(groups[key], []).append(frame)
    ranks = {}
    for key, frame in first.items():
        frames = by_group[groups[key]]
        if frames.count(frame) == 1:
            ranks[key] = sum(1 for f in frames if f < frame)
    return ranks
