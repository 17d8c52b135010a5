"""Residents' statements of perceptual and episodic facts, planned to a verbalised share of QA.

After the QA items are drafted, the share of their answers that the dialogue states (social answers
always are: a social item is available only once stated) is raised to
``construction.verbalised_share`` (the paper: 60.5%) by adding turns that state the answers of other
items: an object's colour, material, size, room, support or neighbour, or how the robot came across
it (how often, in what order among its kind, on the way to which goal). :func:`plan_statements`
visits the not yet stated answers in an order drawn from the episode's generator and takes each
that brings the count of verbalised items closer to ``round(share * items)``, so the share of one
episode is the target up to the weight of its last answer (one answer can serve several items).

Each added turn is spoken at a step drawn among those where the fact is settled and the object has
been seen (:func:`statement_steps`): a *commentary* turn when the object is in view then, else a
*recall* turn; ``times_seen`` only after its last sighting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from memgym.datasets.dialogmem.content import MemoryItem, ObservationLog
from memgym.datasets.dialogmem.policy import TurnSpec
from memgym.datasets.dialogmem.residents import Resident

Slot = tuple[str, str, int]
"""``(object id, key, version)`` of a memory item."""


def slot(item: MemoryItem) -> Slot:
    """The item's ``(object id, key, version)``."""
    return item.object_id, item.key, item.version


def statement_steps(item: MemoryItem, log: ObservationLog) -> list[int]:
    """Steps at which a resident may state ``item``: from the object's first sighting on
    (``times_seen``: after its last sighting); empty for an object never seen."""
    seen = [s for s, ids in enumerate(log.visible) if item.object_id in ids]
    if not seen:
        return []
    start = seen[-1] + 1 if item.key == "times_seen" else seen[0]
    return list(range(start, len(log.visible)))


def plan_statements(
    rng: np.random.Generator,
    answers: Sequence[MemoryItem],
    stated: Mapping[Slot, int],
    log: ObservationLog,
    residents: Sequence[Resident],
    share: float,
    first_turn_id: int,
) -> list[TurnSpec]:
    """Turn specs stating answers of ``answers`` (one per QA item) until ``share`` of the items
    are verbalised (module docstring); ``stated``: the slots the dialogue states already."""
    if not answers or share <= 0:
        return []
    weights = Counter(slot(a) for a in answers)
    by_slot = {slot(a): a for a in answers}
    target = round(share * len(answers))
    verbalised = sum(n for s, n in weights.items() if s in stated)
    candidates = sorted(s for s in weights if s not in stated and by_slot[s].type != "social")
    specs: list[TurnSpec] = []
    for index in rng.permutation(len(candidates)):
        if verbalised >= target:
            break
        item = by_slot[candidates[int(index)]]
        weight = weights[slot(item)]
        steps = statement_steps(item, log)
        if not steps or verbalised + weight - target > target - verbalised:
            continue
        step = steps[int(rng.integers(len(steps)))]
        visible = log.visible[step]
        specs.append(
            TurnSpec(
                turn_id=first_turn_id + len(specs),
                step=step,
                speaker=residents[int(rng.integers(len(residents)))].name,
                turn_type="commentary" if item.object_id in visible else "recall",
                visible=tuple(visible),
                referenced=(item.object_id,),
                content=item,
            )
        )
        verbalised += weight
    return specs
