"""Ground truth of a DialogMem episode as seen from a visual memory: for probes, the controlled
linker and link-quality measurement only (no memory reads it otherwise).

* :func:`turn_references` -- the object ids each of a memory's dialogue turns refers to (the
  episode's turn annotations, matched to the memory's ``(frame, line)`` turns);
* :func:`match_instances` -- memory instance id -> annotated object id: among the scene objects of
  the instance's label, the one visible (traversal annotation, >= 5% of the view) in most of the
  frames the instance was detected in, ties to the nearest centre; an instance seen with no such
  object and farther than ``max_distance`` from every one matches none;
* :func:`snapshot_contents` -- snapshot id -> annotated object ids of its matched objects;
* :func:`link_counts` -- link quality: the share of *linkable* turns (turns referring to an object
  some snapshot contains) linked to at least one snapshot containing an object they refer to;
* :func:`map_errors` -- an object map against the annotation: instance merges (an instance whose
  views show two or more annotated objects) and splits (an object that is the main source of two
  or more instances), from the annotated ids under each view's mask (``ObjectView.sources``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memgym.core.errors import MemgymError

if TYPE_CHECKING:
    from memgym.memory.embodied.object_map import Instance


def turn_references(episode: Any, turns: Sequence[tuple[int, str]]) -> list[tuple[str, ...]]:
    """Referenced object ids of each memory turn ``(frame, "Speaker: utterance")``.

    Raises:
        MemgymError: the memory's turns are not the episode's dialogue (another episode, or lines
            the env did not speak).
    """
    expected = [(t.spec.step, f"{t.spec.speaker}: {t.text}") for t in episode.dialogue]
    if [(int(f), str(line)) for f, line in turns] != expected:
        raise MemgymError(
            f"episode {episode.episode_id}: the memory heard {len(turns)} dialogue line(s) that are not the "
            f"episode's {len(expected)} turns; bind the episode that was played"
        )
    return [tuple(t.spec.referenced) for t in episode.dialogue]


@dataclasses.dataclass(frozen=True)
class SceneTruth:
    """Annotated objects and per-frame visibility of an episode.

    Attributes:
        categories: object id -> category.
        positions: object id -> ``(3,)`` annotated centre, metres.
        visible: per traversal frame, the object ids covering >= the traversal's ``min_coverage``.
        semantic: semantic instance id -> object id.
    """

    categories: dict[str, str]
    positions: dict[str, np.ndarray]
    visible: tuple[frozenset[str], ...]
    semantic: dict[int, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, episode: Any) -> SceneTruth:
        """Read from ``episode`` (its scene is loaded for the object positions)."""
        from memgym.scenes.spec import load_scene

        scene = load_scene(episode.traversal.scene)
        return cls(
            {o.object_id: o.category for o in scene.objects},
            {o.object_id: np.asarray(o.position, float) for o in scene.objects},
            tuple(frozenset(f.visible) for f in episode.traversal.frames),
            {int(o.semantic_id): o.object_id for o in scene.objects},
        )


def match_instances(truth: SceneTruth, instances: Sequence[Instance], max_distance: float = 1.5) -> dict[str, str]:
    """Instance id -> annotated object id (see the module docstring; unmatched instances are absent)."""
    matched = {}
    for instance in instances:
        location = np.asarray(instance.location, float)
        best = None
        for object_id, category in sorted(truth.categories.items()):
            if category != instance.label:
                continue
            shared = sum(1 for f in instance.frames if f < len(truth.visible) and object_id in truth.visible[f])
            distance = float(np.linalg.norm(truth.positions[object_id] - location))
            if shared == 0 and distance > max_distance:
                continue
            key = (-shared, distance, object_id)
            if best is None or key < best:
                best = key
        if best is not None:
            matched[instance.id] = best[2]
    return matched


def snapshot_contents(snapshots: Sequence[Any], matched: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """Snapshot id -> annotated object ids of its matched objects."""
    return {s.id: frozenset(matched[o] for o in s.objects if o in matched) for s in snapshots}


@dataclasses.dataclass(frozen=True)
class LinkCounts:
    """Turn counts behind a link quality (summable over episodes).

    Attributes:
        turns: dialogue turns heard.
        linkable: turns referring to an object that some snapshot contains.
        linked: turns linked to at least one snapshot.
        correct: linkable turns linked to a snapshot containing an object they refer to.
    """

    turns: int = 0
    linkable: int = 0
    linked: int = 0
    correct: int = 0

    @property
    def quality(self) -> float | None:
        """``100 * correct / linkable`` (None without linkable turns)."""
        return 100.0 * self.correct / self.linkable if self.linkable else None

    def __add__(self, other: LinkCounts) -> LinkCounts:
        return LinkCounts(*(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other))))


def correct_snapshots(references: tuple[str, ...], contents: Mapping[str, frozenset[str]]) -> list[str]:
    """Ids of the snapshots containing an object of ``references``."""
    return [s for s, objects in contents.items() if objects & set(references)]


def link_counts(
    references: Sequence[tuple[str, ...]], links: Mapping[str, Sequence[int]], contents: Mapping[str, frozenset[str]]
) -> LinkCounts:
    """Counts of one episode: ``references`` per turn, ``links`` snapshot id -> turn indices."""
    linked_to: dict[int, set[str]] = {}
    for snapshot_id, turns in links.items():
        for t in turns:
            linked_to.setdefault(int(t), set()).add(snapshot_id)
    linkable = correct = 0
    for t, refs in enumerate(references):
        good = set(correct_snapshots(refs, contents))
        if good:
            linkable += 1
            correct += bool(good & linked_to.get(t, set()))
    return LinkCounts(len(references), linkable, len(linked_to), correct)


MERGE_SHARE = 0.25
"""Share of an instance's views an annotated object must appear in to count as one of its objects."""


def map_errors(truth: SceneTruth, instances: Sequence[Instance], provenance: Mapping[str, Any]) -> dict[str, int]:
    """Instance merges and splits of an object map (module docstring).

    Args:
        truth: the episode's annotation.
        instances: the map's instances.
        provenance: instance id -> Counter of annotated semantic ids over its views.

    Returns:
        ``instances`` (with provenance), ``objects`` (annotated objects that are some instance's main
        source), ``merges``, ``splits`` and ``mislabelled`` (instances whose label is not their main
        object's category).
    """
    main: dict[str, list[str]] = {}
    merges = mislabelled = counted = 0
    for instance in instances:
        sources = _sources(truth, provenance, instance.id)
        if not sources:
            continue
        counted += 1
        views = max(sum(instance.votes.values()), 1)
        shown = [o for o, n in sources.items() if n >= MERGE_SHARE * views]
        merges += len(shown) >= 2
        best = main_object(truth, provenance, instance.id)
        main.setdefault(best, []).append(instance.id)
        mislabelled += instance.label != truth.categories[best]
    splits = sum(len(ids) - 1 for ids in main.values())
    return {"instances": counted, "objects": len(main), "merges": merges, "splits": splits, "mislabelled": mislabelled}


def main_object(truth: SceneTruth, provenance: Mapping[str, Any], instance_id: str) -> str | None:
    """The annotated object seen in most of an instance's views (None without provenance)."""
    sources = _sources(truth, provenance, instance_id)
    return min(sources, key=lambda o: (-sources[o], o)) if sources else None


def _sources(truth: SceneTruth, provenance: Mapping[str, Any], instance_id: str) -> dict[str, int]:
    """Annotated object id -> number of the instance's views that show it."""
    return {truth.semantic[s]: n for s, n in provenance.get(instance_id, {}).items() if s in truth.semantic}
