"""Measures of a formed DialogMem memory taken outside it, from the episode's annotations
(:mod:`memgym.memory.embodied.ground_truth`): where a navigation answer lands
(:class:`Localisation`), the link counts of a snapshot memory (:class:`LinkLog`, ``links.json``)
and the instance merges and splits of an object memory's map (``map.json``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.episode import TaskItem
from memgym.core.outputs import write_text_atomic
from memgym.datasets.dialogmem.episode import DialogMemEpisode
from memgym.memory.embodied.ground_truth import LinkCounts


class Localisation:
    """How far a navigation answer lands from the target: ``location_error`` (m, 3D distance of the
    answered position to the target's annotated centre; absent when the answer localises nothing)
    and, for a memory of fused instances, ``picked_target`` (whether the entry it picked shows the
    target in most of its views: the location error of those items is the error of the memory's
    3D estimate, not of its choice)."""

    def __init__(self, episode: DialogMemEpisode, memory: Any) -> None:
        from memgym.memory.embodied.ground_truth import SceneTruth

        self.truth = SceneTruth.of(episode)
        self.provenance = getattr(memory, "provenance", None)

    def of(self, item: TaskItem, action: dict[str, Any]) -> dict[str, Any]:
        """The columns of ``item``'s row for the answer ``action``."""
        from memgym.memory.embodied.ground_truth import main_object

        target = item.answer.get("object_id")
        position = np.asarray(action["position"], float)
        if target not in self.truth.positions or not np.all(np.isfinite(position)):
            return {}
        out: dict[str, Any] = {
            "location_error": round(float(np.linalg.norm(position - self.truth.positions[target])), 4)
        }
        if self.provenance:
            entry = str(action.get("text", "")).strip().removeprefix("OBJECT").strip()
            if entry in self.provenance:
                out["picked_target"] = main_object(self.truth, self.provenance, entry) == target
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
    """Per-episode link counts of a snapshot memory (``links.json`` in its store), measured outside
    the memory from the episode's annotations (:mod:`memgym.memory.embodied.ground_truth`)."""

    def record(self, episode: DialogMemEpisode, memory: Any) -> LinkCounts:
        """Measure ``memory``'s links after ``episode``'s formation and store them."""
        counts = measure_links(episode, memory)
        self.save(episode.episode_id, counts)
        return counts

    def total(self, episodes: set[str] | None = None) -> LinkCounts:
        """Counts summed over the recorded episodes (those in ``episodes`` when given)."""
        counts = [LinkCounts(**c) for e, c in self.load().items() if episodes is None or e in episodes]
        return sum(counts, LinkCounts())


MAP_FILE = "map.json"
"""Per-episode instance merges and splits of an object memory's map, in its store."""


def measure_map(episode: DialogMemEpisode, memory: Any) -> dict[str, int] | None:
    """Merges and splits of an object ``memory``'s map after ``episode``'s formation
    (:func:`~memgym.memory.embodied.ground_truth.map_errors`); None for other memories or without
    the annotated ids under its masks."""
    from memgym.memory.embodied.ground_truth import SceneTruth, map_errors

    if not getattr(memory, "provenance", None):
        return None
    return map_errors(SceneTruth.of(episode), memory.objects.instances, memory.provenance)


def measure_links(episode: DialogMemEpisode, memory: Any) -> LinkCounts:
    """Link counts of a snapshot ``memory`` after ``episode``'s formation."""
    from memgym.memory.embodied.ground_truth import (
        SceneTruth,
        link_counts,
        match_instances,
        snapshot_contents,
        turn_references,
    )

    snapshots = memory.snapshots()
    references = turn_references(episode, memory.turns)
    contents = snapshot_contents(snapshots, match_instances(SceneTruth.of(episode), memory.objects.instances))
    return link_counts(references, {s.id: s.turns for s in snapshots}, contents)
