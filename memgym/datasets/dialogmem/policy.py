"""The information-selection policy for dialogue turns, and the spec-level rule checks.

Turn types and the content a turn of each type may express (at most one object-level item):

==============  ===================================  ==============================================
turn type       content allowed                      visibility of the referenced object
==============  ===================================  ==============================================
navigation      perceptual (of the goal)             any (the goal need not be in view yet)
commentary      social, perceptual, episodic         visible at the turn's step
recall          social, perceptual, episodic         *not* visible now, observed at an earlier step
post_arrival    social, perceptual, episodic (goal)  the goal is visible at the turn's step
==============  ===================================  ==============================================

The paper's policy states perceptual content only in navigation turns and episodic content never;
memgym's residents also say what an object looks like, where it was put and how the robot came
across it (issue 37), so that the share of QA answers stated in the dialogue can be set
(``construction.verbalised_share``, :mod:`~memgym.datasets.dialogmem.statements`). An episodic
item is stated only once its value is settled (:func:`episodic_violations`): its ``order`` and
``segment`` from its first sighting on, its ``times_seen`` after its last sighting has ended.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.core.records import Record, record
from memgym.datasets.dialogmem.content import MemoryItem, ObservationLog

TurnType = Literal["navigation", "commentary", "recall", "post_arrival"]
ALLOWED_CONTENT: dict[str, tuple[str, ...]] = {
    "navigation": ("perceptual",),
    "commentary": ("social", "perceptual", "episodic"),
    "recall": ("social", "perceptual", "episodic"),
    "post_arrival": ("social", "perceptual", "episodic"),
}


@record("dialogmem.turn_spec")
@dataclasses.dataclass(frozen=True, kw_only=True)
class TurnSpec(Record):
    """What one dialogue turn says, fixed before any words are written.

    Attributes:
        turn_id: index in the dialogue.
        step: formation step (waypoint index) at which it is spoken.
        speaker: resident name.
        turn_type: one of :data:`TurnType`.
        visible: object ids visible at ``step``.
        referenced: object ids the turn refers to.
        content: the single object-level item it expresses (None for none).
        goal: the navigation goal's object id (navigation and post-arrival turns).
    """

    turn_id: int
    step: int
    speaker: str
    turn_type: TurnType
    visible: tuple[str, ...] = ()
    referenced: tuple[str, ...] = ()
    content: MemoryItem | None = None
    goal: str = ""


def policy_violations(spec: TurnSpec) -> list[str]:
    """Reasons ``spec`` breaks the information-selection policy (empty when it complies)."""
    problems = []
    if spec.turn_type not in ALLOWED_CONTENT:
        return [f"unknown turn type {spec.turn_type!r}"]
    item = spec.content
    if item is not None:
        if item.type not in ALLOWED_CONTENT[spec.turn_type]:
            problems.append(f"{item.type} content is not allowed in a {spec.turn_type} turn")
        if item.object_id not in spec.referenced:
            problems.append(f"content is about {item.object_id}, which the turn does not reference")
    if spec.turn_type in ("navigation", "post_arrival"):
        if not spec.goal:
            problems.append(f"a {spec.turn_type} turn needs a goal")
        elif item is not None and item.object_id != spec.goal:
            problems.append(f"a {spec.turn_type} turn may only describe its goal")
    if spec.turn_type == "navigation" and item is None:
        problems.append("a navigation turn must identify its goal with one perceptual item")
    return problems


def visibility_violations(spec: TurnSpec, log: ObservationLog) -> list[str]:
    """Reasons the turn's references do not fit what is visible at its step."""
    if not 0 <= spec.step < len(log.visible):
        return [f"step {spec.step} is outside the traversal (0..{len(log.visible) - 1})"]
    visible = set(log.visible[spec.step])
    if set(spec.visible) != visible:
        return ["the spec's visible objects differ from the observation log"]
    first = log.first_seen()
    problems = []
    for object_id in spec.referenced:
        if spec.turn_type in ("commentary", "post_arrival") and object_id not in visible:
            problems.append(f"{spec.turn_type} refers to {object_id}, which is not visible at step {spec.step}")
        if spec.turn_type == "recall":
            if object_id in visible:
                problems.append(f"recall refers to {object_id}, which is visible now")
            elif first.get(object_id, spec.step) >= spec.step:
                problems.append(f"recall refers to {object_id}, which was not observed before step {spec.step}")
    return problems


def episodic_violations(spec: TurnSpec, log: ObservationLog) -> list[str]:
    """Reasons an episodic item is stated before its value is settled at the turn's step: ``order``
    and ``segment`` before the object's first sighting, ``times_seen`` before its last one ended."""
    item = spec.content
    if item is None or item.type != "episodic":
        return []
    steps = [s for s, ids in enumerate(log.visible) if item.object_id in ids]
    if not steps or spec.step < steps[0]:
        return [f"{item.key} of {item.object_id} is stated before it was first seen"]
    if item.key == "times_seen" and spec.step <= steps[-1]:
        return [f"times_seen of {item.object_id} is stated before its last sighting ended (step {steps[-1]})"]
    return []


def chain_order_violations(specs: list[TurnSpec]) -> list[str]:
    """Updates/corrections stated before (or with) the state they change."""
    stated: dict[tuple[str, str], tuple[int, int]] = {}
    problems = []
    for spec in sorted(specs, key=lambda s: (s.step, s.turn_id)):
        item = spec.content
        if item is None or item.type != "social":
            continue
        slot = (item.object_id, item.key)
        if item.version > 0:
            prior = stated.get(slot)
            if prior is None or prior[0] != item.version - 1 or prior[1] >= spec.step:
                problems.append(f"turn {spec.turn_id}: {item.operation} of {slot} before its earlier version")
        stated[slot] = (item.version, spec.step)
    return problems


def describe(item: MemoryItem) -> str:
    """Plain words for an item (used in LLM prompts; never ids or key names)."""
    subject = f"the {item.category}"
    phrases = {
        "times_seen": f"the robot came across {subject} {item.value} on its walk",
        "order": f"{subject} was the {item.value} of its kind the robot saw",
        "segment": f"the robot first saw {subject} while heading to the {item.value}",
        "color": f"{subject} is {item.value}",
        "material": f"{subject} is made of {item.value}",
        "size": f"{subject} is {item.value} for its kind",
        "room": f"{subject} is in the {item.value}",
        "on": f"{subject} stands on the {item.value}",
        "near": f"{subject} is next to the {item.value}",
        "owner": f"{subject} belongs to {item.value}",
        "usage": f"{subject} is used for {item.value}",
        "alias": f"the residents call {subject} '{item.value}'",
        "significance": f"{subject} is special because it was {item.value}",
    }
    text = phrases.get(item.key, f"{subject}: {item.value}")
    if item.operation == "update":
        text += f" (this changed: before, it was {item.previous})"
    elif item.operation == "correction":
        text += f" (a correction: the speaker said {item.previous} earlier, which was wrong)"
    return text
