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

from memgym.datasets.dialogmem.content import MemoryItem, ObservationLog, Segment
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
    planner = _TurnPlanner(rng, log, items, residents)
    first = log.first_seen()
    for segment in log.segments:
        planner.plan_segment(segment, first, config)
    specs = sorted(planner.specs, key=lambda s: (s.step, s.turn_id))
    specs = [dataclasses.replace(s, turn_id=i) for i, s in enumerate(specs)]
    return specs, [planner.stated.get(id(item), item) for item in items]


class _TurnPlanner:
    """One dialogue plan in the making (:func:`plan_turns`): the items not stated yet, the step each
    (object, key) slot was last stated at, the stated copies and the turns so far. Draws from
    ``rng`` in the order of the module docstring, segment by segment."""

    def __init__(
        self,
        rng: np.random.Generator,
        log: ObservationLog,
        items: Sequence[MemoryItem],
        residents: Sequence[Resident],
    ) -> None:
        self.rng, self.log, self.residents = rng, log, residents
        self.perceptual: dict[str, list[MemoryItem]] = {}
        self.pending: dict[str, list[MemoryItem]] = {}
        for item in items:
            if item.type == "perceptual":
                self.perceptual.setdefault(item.object_id, []).append(item)
            elif item.type == "social":
                self.pending.setdefault(item.object_id, []).append(item)
        for chain in self.pending.values():
            chain.sort(key=lambda i: (i.key, i.version))
        self.last_step: dict[tuple[str, str], int] = {}
        self.stated: dict[int, MemoryItem] = {}  # id(original item) -> stated copy
        self.specs: list[TurnSpec] = []

    def next_item(self, object_id: str, step: int, prefer_change: bool = False) -> MemoryItem | None:
        """The social item of ``object_id`` that a turn at ``step`` may state next (updates and
        corrections first with ``prefer_change``), or None."""
        candidates = []
        for item in self.pending.get(object_id, []):
            slot = (item.object_id, item.key)
            if item.version == 0 or (slot in self.last_step and self.last_step[slot] < step):
                candidates.append(item)
        if not candidates:
            return None
        if prefer_change and any(i.version > 0 for i in candidates):
            candidates = [i for i in candidates if i.version > 0]
        return candidates[0]

    def emit(self, step: int, turn_type: str, referenced: str, item: MemoryItem | None, goal: str = "") -> None:
        """Add a turn at ``step`` stating ``item`` (a random resident speaks)."""
        speaker = self.residents[int(self.rng.integers(len(self.residents)))].name
        if item is not None:
            if item.type == "social":
                self.pending[item.object_id].remove(item)
            self.last_step[(item.object_id, item.key)] = step
            if id(item) not in self.stated:  # a perceptual item may be used again; its time is the first
                self.stated[id(item)] = dataclasses.replace(item, stated=True, time=step)
            item = dataclasses.replace(item, stated=True, time=step)
        self.specs.append(
            TurnSpec(
                turn_id=len(self.specs),
                step=step,
                speaker=speaker,
                turn_type=turn_type,  # type: ignore[arg-type]
                visible=tuple(self.log.visible[step]),
                referenced=(referenced,),
                content=item,
                goal=goal,
            )
        )

    def plan_segment(self, segment: Segment, first: dict[str, int], config: TurnPlanConfig) -> None:
        """The turns of one navigation segment: navigation, commentary, recall, post-arrival."""
        log, rng, next_item = self.log, self.rng, self.next_item
        goal = segment.goal
        options = self.perceptual.get(goal, [])
        if options:
            self.emit(segment.start, "navigation", goal, options[int(rng.integers(len(options)))], goal)
        slots = self._commentary_slots(segment, config)
        recall_slot = None
        if segment.end - segment.start > 1 and rng.uniform() < config.recall_probability:
            recall_slot = int(rng.integers(segment.start + 1, segment.end))
        for step in slots:
            visible = [o for o in log.visible[step] if next_item(o, step) is not None]
            if visible:
                target = visible[int(rng.integers(len(visible)))]
                self.emit(step, "commentary", target, next_item(target, step))
        if recall_slot is not None:
            self._recall(recall_slot, first)
        if goal in log.visible[segment.end]:
            item = next_item(goal, segment.end)
            if item is not None and segment.end > segment.start:
                self.emit(segment.end, "post_arrival", goal, item, goal)

    def _commentary_slots(self, segment: Segment, config: TurnPlanConfig) -> list[int]:
        """The steps inside ``segment`` that get a commentary turn: about one per
        ``config.commentary_every`` steps, drawn among those where something sayable is visible."""
        inner = [
            step
            for step in range(segment.start + 1, segment.end)
            if any(self.next_item(o, step) is not None for o in self.log.visible[step])
        ]
        count = max(1, (segment.end - segment.start) // max(1, config.commentary_every))
        return sorted(self.rng.permutation(inner)[:count].tolist()) if inner else []

    def _recall(self, step: int, first: dict[str, int]) -> None:
        """A recall turn at ``step`` about an object seen earlier and not visible now (one whose
        content changed preferred), drawn at random; none when there is no such object."""
        now = set(self.log.visible[step])
        earlier = [o for o, s in first.items() if s < step and o not in now and self.next_item(o, step)]
        if earlier:
            changes = [o for o in earlier if (i := self.next_item(o, step, True)) is not None and i.version > 0]
            pool = sorted(changes or earlier)
            target = pool[int(self.rng.integers(len(pool)))]
            self.emit(step, "recall", target, self.next_item(target, step, True))
