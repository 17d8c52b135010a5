"""What an item is before its text and after it: a :class:`TaskSpec` (target, identification cues,
answer evidence) and the :class:`Draft` that passed the filters of
:mod:`~memgym.datasets.dialogmem.task_specs`; both that module and
:mod:`~memgym.datasets.dialogmem.dialogue_navigation` build on them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from memgym.datasets.dialogmem.content import MemoryItem


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """A task fixed before text: target, identification cues, answer evidence (QA only)."""

    task: str
    target: str
    category: str
    cues: tuple[MemoryItem, ...]
    answer: MemoryItem | None = None
    names_category: bool = True
    """False: a navigation item naming its target only by what residents said (no category word)."""

    @property
    def identification_types(self) -> tuple[str, ...]:
        """Sorted distinct content types of the cues."""
        return tuple(sorted({c.type for c in self.cues}))

    def signature(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(category, sorted (key, value) cues): the retrieval cue the item relies on."""
        return self.category, tuple(sorted((c.key, c.value) for c in self.cues))


def matches(cues: Sequence[MemoryItem], keys: Mapping[str, MemoryItem]) -> bool:
    """Whether an object's available content agrees with every cue."""
    return all(c.key in keys and keys[c.key].value == c.value for c in cues)


@dataclasses.dataclass(frozen=True)
class Draft:
    """An item that passed the filters, before its dialogue annotations: spec, prompt, gold answer."""

    spec: TaskSpec
    prompt: str
    answer: Any
