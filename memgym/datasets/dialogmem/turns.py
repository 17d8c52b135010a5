"""Dialogue turn specifications: who says what, where, about which object (no words yet).

:func:`plan_turns` walks the traversal's navigation segments in time order and emits

* a **navigation** turn at each segment's first step, naming the goal with one perceptual item;
* ``max(1, segment length // commentary_every)`` **commentary** turn slots at later steps of the
  segment, each
  stating the next social item of an object visible there;
* with probability ``recall_probability`` a **recall** turn about an object seen earlier and not
  visible now (updates and corrections are preferred here);
* a **post-arrival** turn at the segment's last step when the goal is visible, with the next
  social item of the goal.

Social chains are stated in version order, each version at a later step than the one it
changes. Items that a turn states come back with ``stated=True`` and ``time`` = the turn's step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from memgym.datasets.dialogmem.content import MemoryItem, ObservationLog
from memgym.datasets.dialogmem.policy import TurnSpec
from memgym.datasets.dialogmem.residents import Resident


@dataclasses.dataclass(frozen=True)
class TurnPlanConfig:
    """How much dialogue a traversal gets."""

    commentary_every: int = 25
    """Frames per commentary slot (a segment of 100 frames gets 4 slots)."""
    recall_probability: float = 0.5


def plan_turns(
    rng: np.random.Generator,
    log: ObservationLog,
    items: Sequence[MemoryItem],
    residents: Sequence[Resident],
    config: TurnPlanConfig = TurnPlanConfig(),
) -> tuple[list[TurnSpec], list[MemoryItem]]:
    """Plan the dialogue; returns (turn specs, all items with ``stated``/``time`` filled in)."""
    perceptual: dict[str, list[MemoryItem]] = {}
    pending: dict[str, list[MemoryItem]] = {}
    for item in items:
        if item.type == "perceptual":
            perceptual.setdefault(item.object_id, []).append(item)
        elif item.type == "social":
            pending.setdefault(item.object_id, []).append(item)
    for chain in pending.values():
        chain.sort(key=lambda i: (i.key, i.version))
    first = log.first_seen()
    last_step: dict[tuple[str, str], int] = {}
    stated: dict[int, MemoryItem] = {}  # id(original item) -> stated copy
    specs: list[TurnSpec] = []

    def next_item(object_id: str, step: int, prefer_change: bool = False) -> MemoryItem | None:
        candidates = []
        for item in pending.get(object_id, []):
            slot = (item.object_id, item.key)
            if item.version == 0 or (slot in last_step and last_step[slot] < step):
                candidates.append(item)
        if not candidates:
            return None
        if prefer_change and any(i.version > 0 for i in candidates):
            candidates = [i for i in candidates if i.version > 0]
        return candidates[0]

    def emit(step: int, turn_type: str, referenced: str, item: MemoryItem | None, goal: str = "") -> None:
        speaker = residents[int(rng.integers(len(residents)))].name
        if item is not None:
            if item.type == "social":
                pending[item.object_id].remove(item)
            last_step[(item.object_id, item.key)] = step
            if id(item) not in stated:  # a perceptual item may be used again; its time is the first
                stated[id(item)] = dataclasses.replace(item, stated=True, time=step)
            item = dataclasses.replace(item, stated=True, time=step)
        specs.append(
            TurnSpec(
                turn_id=len(specs),
                step=step,
                speaker=speaker,
                turn_type=turn_type,  # type: ignore[arg-type]
                visible=tuple(log.visible[step]),
                referenced=(referenced,),
                content=item,
                goal=goal,
            )
        )

    for segment in log.segments:
        goal = segment.goal
        options = perceptual.get(goal, [])
        if options:
            emit(segment.start, "navigation", goal, options[int(rng.integers(len(options)))], goal)
        inner = [
            step
            for step in range(segment.start + 1, segment.end)
            if any(next_item(o, step) is not None for o in log.visible[step])
        ]
        count = max(1, (segment.end - segment.start) // max(1, config.commentary_every))
        slots = sorted(rng.permutation(inner)[:count].tolist()) if inner else []
        recall_slot = None
        if segment.end - segment.start > 1 and rng.uniform() < config.recall_probability:
            recall_slot = int(rng.integers(segment.start + 1, segment.end))
        for step in slots:
            visible = [o for o in log.visible[step] if next_item(o, step) is not None]
            if visible:
                target = visible[int(rng.integers(len(visible)))]
                emit(step, "commentary", target, next_item(target, step))
        if recall_slot is not None:
            now = set(log.visible[recall_slot])
            earlier = [o for o, s in first.items() if s < recall_slot and o not in now and next_item(o, recall_slot)]
            if earlier:
                changes = [o for o in earlier if (i := next_item(o, recall_slot, True)) is not None and i.version > 0]
                pool = sorted(changes or earlier)
                target = pool[int(rng.integers(len(pool)))]
                emit(recall_slot, "recall", target, next_item(target, recall_slot, True))
        if goal in log.visible[segment.end]:
            item = next_item(goal, segment.end)
            if item is not None and segment.end > segment.start:
                emit(segment.end, "post_arrival", goal, item, goal)
    specs.sort(key=lambda s: (s.step, s.turn_id))
    specs = [dataclasses.replace(s, turn_id=i) for i, s in enumerate(specs)]
    return specs, [stated.get(id(item), item) for item in items]
