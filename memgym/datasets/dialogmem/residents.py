"""Resident profiles: the people who live in a scene and speak in its dialogue.

Each scene gets 2-4 residents with a name, a relationship to the household and a speaking style.
The default writer samples them from fixed pools with the episode's generator (deterministic);
``profiles_from_reasoner`` asks an LLM for scene-specific profiles in a strict JSON format and
falls back to the pools when the reply does not parse.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import numpy as np

from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.core.records import Record, record

NAMES = (
    "Amelia", "Ben", "Carla", "Daniel", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Keiko", "Liam", "Maya", "Noah", "Olga", "Pedro", "Quinn", "Rosa", "Samir", "Tara",
)  # fmt: skip
RELATIONSHIPS = ("mother", "father", "partner", "daughter", "son", "grandmother", "grandfather", "roommate", "aunt")
STYLES = ("formal", "casual", "terse", "cheerful", "chatty")
"""Speaking styles the template realiser knows how to voice."""


@record("dialogmem.resident")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Resident(Record):
    """A person living in the scene.

    Attributes:
        name: first name, unique in the scene.
        relationship: role in the household (``"mother"``, ``"roommate"``).
        style: speaking style, one of :data:`STYLES`.
    """

    name: str
    relationship: str
    style: str


def sample_residents(rng: np.random.Generator, count: int) -> tuple[Resident, ...]:
    """``count`` residents with distinct names, drawn from the pools."""
    names = rng.choice(len(NAMES), size=count, replace=False)
    return tuple(
        Resident(
            name=NAMES[int(i)],
            relationship=RELATIONSHIPS[int(rng.integers(len(RELATIONSHIPS)))],
            style=STYLES[int(rng.integers(len(STYLES)))],
        )
        for i in names
    )


PROFILE_PROMPT = """Invent {count} people who live together in a house with these rooms: {rooms}.
Reply with JSON only: a list of objects with keys "name" (a first name), "relationship" (their role in \
the household, one word) and "style" (one of {styles})."""


def profiles_from_reasoner(
    reasoner: Reasoner, rooms: Sequence[str], count: int, rng: np.random.Generator
) -> tuple[Resident, ...]:
    """Scene-specific profiles from an LLM; the pools answer when its reply is unusable."""
    prompt = PROFILE_PROMPT.format(count=count, rooms=", ".join(sorted(set(rooms))), styles=", ".join(STYLES))
    fallback = sample_residents(rng, count)
    try:
        data = json.loads(reasoner.generate([Message.text("user", prompt)], max_new_tokens=256))
        residents = tuple(
            Resident(name=str(d["name"]).strip(), relationship=str(d["relationship"]).strip(), style=str(d["style"]))
            for d in data
        )
    except (json.JSONDecodeError, KeyError, TypeError):
        return fallback
    names = [r.name for r in residents]
    valid = (
        len(residents) == count
        and len(set(names)) == count
        and all(r.style in STYLES and r.name.isalpha() and r.relationship for r in residents)
    )
    return residents if valid else fallback
