"""Where DialogMem keeps the measures of its formed memories (each memory takes its own,
:meth:`~memgym.core.protocols.Memory.measures`, from the episode's annotations): where a navigation
answer lands (:class:`Localisation`), the link counts of a snapshot memory (:class:`LinkLog`,
``links.json``) and the instance merges and splits of an object memory's map (``map.json``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.episode import TaskItem
from memgym.core.outputs import write_text_atomic
from memgym.datasets.dialogmem.episode import DialogMemEpisode
from memgym.memory.embodied.ground_truth import LinkCounts, SceneTruth


class Localisation:
    """How far a navigation answer lands from the target: ``location_error`` (m, 3D distance of the
    answered position to the target's annotated centre; absent when the answer localises nothing)
    and, for a memory of fused instances, ``picked_target`` (whether the entry it picked shows the
    target in most of its views: the location error of those items is the error of the memory's
    3D estimate, not of its choice).

    Args:
        entry_objects: the memory's ``entry_objects`` measure (:meth:`~memgym.core.protocols.Memory.measures`:
            entry id -> the annotated object most of its views show); empty for other memories.
        truth: ``episode``'s scene truth when already read (None: read here).
    """

    def __init__(
        self, episode: DialogMemEpisode, entry_objects: Mapping[str, str | None], truth: SceneTruth | None = None
    ) -> None:
        self.truth = SceneTruth.of(episode) if truth is None else truth
        self.entry_objects = entry_objects

    def of(self, item: TaskItem, action: dict[str, Any]) -> dict[str, Any]:
        """The columns of ``item``'s row for the answer ``action``."""
        target = item.answer.get("object_id")
        position = np.asarray(action["position"], float)
        if target not in self.truth.positions or not np.all(np.isfinite(position)):
            return {}
        out: dict[str, Any] = {
            "location_error": round(float(np.linalg.norm(position - self.truth.positions[target])), 4)
        }
        entry = str(action.get("text", "")).strip().removeprefix("OBJECT").strip()
        if entry in self.entry_objects:
            out["picked_target"] = self.entry_objects[entry] == target
        return out


class EpisodeTable:
    """A JSON file of one record (a mapping) per episode id, replaced when saved again."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, dict[str, int]]:
        """Episode id -> its record."""
        return json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}

    def save(self, episode_id: str, record: Any) -> None:
        """Store one episode's record (a mapping or a dataclass), replacing an earlier one."""
        table = self.load()
        table[episode_id] = dataclasses.asdict(record) if dataclasses.is_dataclass(record) else dict(record)
        write_text_atomic(self.path, json.dumps(table, indent=1, sort_keys=True))


class LinkLog(EpisodeTable):
    """Per-episode link counts of a snapshot memory (``links.json`` in its store: its ``links``
    measure, :meth:`~memgym.memory.embodied.snapshots.SnapshotMemory.link_counts`)."""

    def total(self, episodes: set[str] | None = None) -> LinkCounts:
        """Counts summed over the recorded episodes (those in ``episodes`` when given)."""
        counts = [LinkCounts(**c) for e, c in self.load().items() if episodes is None or e in episodes]
        return sum(counts, LinkCounts())


MAP_FILE = "map.json"
"""Per-episode instance merges and splits of an object memory's map, in its store."""
