"""Memory content per object: perceptual, episodic and social items.

* **perceptual** -- from the scene annotations: ``color``, ``material``, ``size`` (attributes),
  ``room`` (its region), ``on`` (category of the supporting object) and ``near`` (category of an
  object next to it).
* **episodic** -- from the traversal's observation log, with the sightings of
  :mod:`memgym.sensors.sightings`: ``times_seen`` (number of separate sightings), ``order``
  (ordinal among objects of its category by first sighting; none when another object of the
  category was first seen in the same step) and
  ``segment`` (category of the navigation goal being approached when it was first seen).
* **social** -- about residents and their use of the object: ``owner``, ``usage``, ``alias``,
  ``significance``, each possibly followed by **updates** (the fact changed) and
  **corrections** (the earlier statement was wrong). The latest item of a chain is the truth.

Each item is a :class:`MemoryItem`; a chain is the items of one (object, key) in ``version``
order. ``time`` is the formation step at which an item becomes known (set when the dialogue
states it; 0 for content that never appears in dialogue).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from memgym.backends.structured import Fact
from memgym.core.records import Record, record
from memgym.datasets.dialogmem.residents import Resident
from memgym.sensors.sightings import MAX_SIGHTING_GAP, count_sightings, sighting_ranks

ContentType = Literal["perceptual", "episodic", "social"]
CONTENT_TYPES: tuple[str, ...] = ("perceptual", "episodic", "social")
PERCEPTUAL_KEYS = ("color", "material", "size", "room", "on", "near")
EPISODIC_KEYS = ("times_seen", "order", "segment")
SOCIAL_KEYS = ("owner", "usage", "alias", "significance")
KEY_TYPE: dict[str, str] = {
    **dict.fromkeys(PERCEPTUAL_KEYS, "perceptual"),
    **dict.fromkeys(EPISODIC_KEYS, "episodic"),
    **dict.fromkeys(SOCIAL_KEYS, "social"),
}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
COUNTS = {1: "once", 2: "twice", 3: "three times", 4: "four times", 5: "five times"}

USAGES: dict[str, tuple[str, ...]] = {
    "seating": ("reading the newspaper", "afternoon naps", "watching football", "phone calls with family"),
    "surface": ("doing homework", "sorting the mail", "jigsaw puzzles", "folding laundry"),
    "storage": ("keeping spare batteries", "storing board games", "keeping snacks", "storing winter scarves"),
    "other": ("drying herbs", "charging phones", "hiding birthday presents", "keeping spare keys"),
}
SEATING = {"chair", "sofa", "couch", "armchair", "stool", "bench", "bed", "ottoman"}
SURFACES = {"table", "desk", "counter", "coffee table", "dining table", "nightstand", "kitchen island"}
STORAGE = {"cabinet", "shelf", "bookshelf", "dresser", "wardrobe", "chest", "drawer", "box", "basket"}
ALIASES = (
    "the throne", "old faithful", "the mothership", "the beast", "the lighthouse", "the cloud",
    "the rocket", "the treasure chest", "the nest", "the command center", "the tank", "the island",
    "the fortress", "the cockpit", "the volcano", "the igloo", "the submarine", "the castle",
    "the hive", "the ark", "the anchor", "the bunker", "the cocoon", "the jukebox",
    "the time machine", "the spaceship", "the monolith", "the pagoda", "the beacon", "the dragon",
)  # fmt: skip
SIGNIFICANCES = (
    "a wedding gift", "a souvenir from Lisbon", "a family heirloom", "a birthday present",
    "the first thing bought for this house", "made by a neighbour", "won in a raffle", "rescued from a flea market",
    "a housewarming gift", "bought on our honeymoon", "a retirement present", "found at an estate sale",
    "inherited from an uncle", "a prize from a school fair", "brought back from Kyoto", "restored by hand",
    "the last thing grandpa built", "carried over from the old flat", "a graduation present", "a lucky find",
)  # fmt: skip


class AnnotatedObject(Protocol):
    """What the content builder reads from a scene object (``memgym.scenes.objects.SceneObject``)."""

    object_id: str
    category: str
    region: str
    attributes: Mapping[str, str]
    relations: Sequence[Any]


@record("dialogmem.memory_item")
@dataclasses.dataclass(frozen=True, kw_only=True)
class MemoryItem(Record):
    """One object-level memory content item.

    Attributes:
        object_id: the object it is about.
        category: that object's category.
        type: ``"perceptual"``, ``"episodic"`` or ``"social"``.
        key: which property (see the module docstring).
        value: the property as words (``"red"``, ``"Amelia"``, ``"twice"``).
        version: position in its (object, key) chain, 0 for the first statement.
        operation: ``"state"`` (first), ``"update"`` (changed) or ``"correction"`` (was wrong).
        previous: the value it replaces (updates and corrections).
        time: formation step at which it is stated (0 if never stated in dialogue).
        stated: whether a dialogue turn expresses it.
    """

    object_id: str
    category: str
    type: ContentType
    key: str
    value: str
    version: int = 0
    operation: Literal["state", "update", "correction"] = "state"
    previous: str = ""
    time: int = 0
    stated: bool = False

    def as_fact(self) -> Fact:
        """The symbolic fact the structured reasoner reads."""
        return Fact(self.object_id, self.category, self.type, self.key, self.value, self.time)


@record("dialogmem.segment")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Segment(Record):
    """One navigation segment of the traversal: steps ``start..end`` (inclusive) head to ``goal``."""

    goal: str
    start: int
    end: int


@record("dialogmem.observation_log")
@dataclasses.dataclass(frozen=True, kw_only=True)
class ObservationLog(Record):
    """Per-step visibility along the traversal.

    Attributes:
        visible: for each formation step, the ids of objects observed (covering at least the
            visibility threshold of the view, 5 % by default).
        segments: the navigation segments, in order, covering the steps.
    """

    visible: tuple[tuple[str, ...], ...]
    segments: tuple[Segment, ...]

    def first_seen(self) -> dict[str, int]:
        """object id -> first step it is visible."""
        first: dict[str, int] = {}
        for step, ids in enumerate(self.visible):
            for object_id in ids:
                first.setdefault(object_id, step)
        return first

    def sightings(self, max_gap: int = MAX_SIGHTING_GAP) -> dict[str, int]:
        """object id -> number of separate sightings (:func:`memgym.sensors.sightings.count_sightings`
        of the steps it is visible in, with at most ``max_gap`` unseen steps inside one)."""
        steps: dict[str, list[int]] = {}
        for step, ids in enumerate(self.visible):
            for object_id in ids:
                steps.setdefault(object_id, []).append(step)
        return {object_id: count_sightings(s, max_gap) for object_id, s in steps.items()}

    def segment_at(self, step: int) -> Segment | None:
        """The segment containing ``step``."""
        return next((s for s in self.segments if s.start <= step <= s.end), None)


def perceptual_content(obj: AnnotatedObject, categories: Mapping[str, str]) -> list[MemoryItem]:
    """Perceptual items of ``obj``; ``categories`` maps object ids to categories (for relations).

    Attributes and relations come from the annotations; what they lack is parsed from the
    object's ``lang_desc`` (GOAT-Bench descriptions) by :func:`parse_description`. Unnamed
    regions (HM3D's ``"region 3"``) are not a room.
    """
    items = []
    parsed = parse_description(getattr(obj, "lang_desc", "") or "", obj.category)

    def add(key: str, value: str) -> None:
        if value:
            items.append(
                MemoryItem(object_id=obj.object_id, category=obj.category, type="perceptual", key=key, value=value)
            )

    for key in ("color", "material", "size"):
        add(key, str(obj.attributes.get(key, "") or parsed.get(key, "")))
    if obj.region and not _UNNAMED_REGION.match(obj.region):
        add("room", obj.region)
    for kind, key in (("on", "on"), ("next_to", "near")):
        targets = sorted(categories[r.target] for r in obj.relations if r.kind == kind and r.target in categories)
        targets = [t for t in targets if t != obj.category]
        add(key, targets[0] if targets else parsed.get(key, ""))
    return items


_UNNAMED_REGION = re.compile(r"^region \d+$")
DESCRIPTION_COLORS = (
    "white", "black", "gray", "grey", "beige", "brown", "red", "orange", "yellow", "green", "blue",
    "navy", "teal", "purple", "pink", "silver", "gold", "cream", "dark brown", "light brown",
)  # fmt: skip
DESCRIPTION_MATERIALS = (
    "wood",
    "wooden",
    "metal",
    "glass",
    "ceramic",
    "fabric",
    "leather",
    "plastic",
    "marble",
    "stone",
)
_RELATION_PATTERNS = {
    "near": re.compile(r"\b(?:next to|beside|near) (?:a|an|the) ([a-z ]+?)(?=[,.;]| and | with |$)"),
    "on": re.compile(
        r"\b(?:on top of|sitting on|placed on|on) (?:a|an|the) ([a-z ]+?)(?=[,.;]| and | with | next | near |$)"
    ),
}


def parse_description(text: str, category: str) -> dict[str, str]:
    """Attributes and relation categories named in a description.

    ``"A small white ceramic mug on the kitchen counter, next to the sink."`` gives
    ``{"color": "white", "material": "ceramic", "size": "small", "on": "kitchen counter",
    "near": "sink"}``. Only words before the first relation describe the object itself.
    """
    text = " ".join(text.lower().split())
    starts = [m.start() for p in _RELATION_PATTERNS.values() if (m := p.search(text))]
    head = f" {text[: min(starts)] if starts else text} "
    found: dict[str, str] = {}
    for key, vocabulary in (("color", DESCRIPTION_COLORS), ("material", DESCRIPTION_MATERIALS)):
        hits = [w for w in vocabulary if f" {w} " in head]
        if hits:
            found[key] = max(hits, key=len)
    size = re.search(r"\b(small|medium|large|big|tiny)\b", head)
    if size:
        found["size"] = {"big": "large", "tiny": "small"}.get(size.group(1), size.group(1))
    for key, pattern in _RELATION_PATTERNS.items():
        match = pattern.search(text)
        if match and match.group(1).strip() != category:
            found[key] = match.group(1).strip()
    return found


def episodic_content(
    log: ObservationLog, categories: Mapping[str, str], max_gap: int = MAX_SIGHTING_GAP
) -> list[MemoryItem]:
    """Episodic items of every observed object (see the module docstring); ``times_seen`` counts
    sightings with at most ``max_gap`` unseen steps inside one (``construction.max_sighting_gap``)."""
    first = log.first_seen()
    sightings = log.sightings(max_gap)
    ranks = sighting_ranks(first, categories)
    items = []
    for object_id in sorted(first, key=lambda o: (first[o], o)):
        category = categories[object_id]

        def add(key: str, value: str, object_id: str = object_id, category: str = category) -> None:
            items.append(MemoryItem(object_id=object_id, category=category, type="episodic", key=key, value=value))

        count = sightings[object_id]
        if count in COUNTS:
            add("times_seen", COUNTS[count])
        rank = ranks.get(object_id, len(ORDINALS))
        if rank < len(ORDINALS):
            add("order", ORDINALS[rank])
        segment = log.segment_at(first[object_id])
        if segment is not None and segment.goal != object_id and segment.goal in categories:
            goal_category = categories[segment.goal]
            if goal_category != category:
                add("segment", goal_category)
    return items


def usage_pool(category: str) -> tuple[str, ...]:
    """Usage phrases plausible for a category."""
    if category in SEATING:
        return USAGES["seating"]
    if category in SURFACES:
        return USAGES["surface"]
    if category in STORAGE:
        return USAGES["storage"]
    return USAGES["other"]


def social_content(
    rng: np.random.Generator,
    obj: AnnotatedObject,
    residents: Sequence[Resident],
    *,
    keys_per_object: int = 2,
    change_probability: float = 0.3,
    correction_share: float = 0.5,
    taken: dict[str, set[str]] | None = None,
) -> list[MemoryItem]:
    """Social chains for ``obj``: ``keys_per_object`` keys, each a state plus maybe a change.

    Args:
        rng: the episode generator.
        residents: possible owners.
        change_probability: chance that a chain gets a second item (update or correction).
        correction_share: share of changes that are corrections rather than updates.
        taken: key -> values already used in the scene for ``alias``/``significance`` (kept
            distinct so they identify one object); updated in place.
    """
    taken = taken if taken is not None else {}
    keys = [SOCIAL_KEYS[int(i)] for i in sorted(rng.choice(len(SOCIAL_KEYS), size=keys_per_object, replace=False))]
    items: list[MemoryItem] = []
    for key in keys:
        pool = _social_pool(key, obj.category, residents)
        free = [v for v in pool if v not in taken.get(key, set())] if key in ("alias", "significance") else list(pool)
        if not free:
            continue
        values = [free[int(i)] for i in rng.permutation(len(free))[:2]]
        chain = [MemoryItem(object_id=obj.object_id, category=obj.category, type="social", key=key, value=values[0])]
        if len(values) > 1 and key in ("owner", "usage") and rng.uniform() < change_probability:
            operation = "correction" if rng.uniform() < correction_share else "update"
            chain.append(
                dataclasses.replace(chain[0], value=values[1], version=1, operation=operation, previous=values[0])
            )
        for item in chain:
            taken.setdefault(key, set()).add(item.value)
        items += chain
    return items


def _social_pool(key: str, category: str, residents: Sequence[Resident]) -> tuple[str, ...]:
    if key == "owner":
        return tuple(r.name for r in residents)
    if key == "usage":
        return usage_pool(category)
    return ALIASES if key == "alias" else SIGNIFICANCES


def latest(items: Iterable[MemoryItem], *, stated_only: bool = False) -> dict[tuple[str, str], MemoryItem]:
    """(object id, key) -> the last item of its chain (highest version), optionally among stated items."""
    table: dict[tuple[str, str], MemoryItem] = {}
    for item in items:
        if stated_only and not item.stated:
            continue
        slot = (item.object_id, item.key)
        if slot not in table or item.version > table[slot].version:
            table[slot] = item
    return table
