"""Ground-truth probes of 3D-Mem: the ``3dmem+dialogue`` pipeline with one component replaced.

Each reads the bound episode's annotations (:meth:`GroundTruthSnapshots.bind_episode`, which the
evaluation loop calls before formation) through :mod:`memgym.memory.embodied.ground_truth`; an
annotated object's *entry* is the memory instance matched to it that was detected in most frames
(ties to the lower id). The probes are cumulative, as DialogMem's decomposition:

* ``3dmem+gt_metadata`` -- each object's ground-truth metadata (perceptual, episodic -- never said
  in dialogue -- and the latest stated social facts) replaces the observable facts of its entry,
  so the snapshots containing it carry them; retrieval and selection are 3D-Mem's;
* ``3dmem+oracle_selection`` -- as ``gt_metadata``, but the evidence for an item is its
  ground-truth object's entry alone (its snapshot's image, 3D-Mem's estimated location), plus the
  transcript; an object with no entry in memory gets no entry;
* ``3dmem+oracle_position`` -- as ``oracle_selection`` with the annotated object centre as the
  entry's location.

Success is not granted: the reasoner still has to confirm the supplied entry by naming it
(``OBJECT <id>``); a reply of ``unknown`` (or another id) localises nothing and fails.
"""

from __future__ import annotations

from typing import Any

from memgym.core.registry import register_memory
from memgym.memory.embodied.evidence import Entry, VisualEvidence
from memgym.memory.embodied.ground_truth import SceneTruth, match_instances
from memgym.memory.embodied.object_map import Instance
from memgym.memory.embodied.snapshots import SnapshotDialogueMemory


class GroundTruthSnapshots(SnapshotDialogueMemory):
    """Base of the probes: the bound episode's metadata, targets and instance matching."""

    reads = SnapshotDialogueMemory.reads | {"truth"}

    def bind_episode(self, episode: Any, **context: Any) -> None:
        """Read ``episode``'s annotations (and give the ``gt`` detector its labels)."""
        from memgym.datasets.dialogmem.episode import observation_log
        from memgym.datasets.dialogmem.task_specs import available_content

        super().bind_episode(episode, **context)
        observed = set(observation_log(episode.traversal).first_seen())
        content = available_content(episode.memory, observed)
        self.metadata = {o: {key: item.value for key, item in keys.items()} for o, keys in content.items()}
        self.targets = {item.prompt: item.annotations["object_id"] for item in episode.items}
        self.truth = SceneTruth.of(episode)

    def entries_of_objects(self) -> tuple[dict[str, str], dict[str, str]]:
        """(instance id -> annotated object id, annotated object id -> its entry's instance id)."""
        instances = self.objects.instances
        matched = match_instances(self.truth, instances)
        frames = {i.id: len(i.frames) for i in instances}
        entry: dict[str, str] = {}
        for instance_id in sorted(matched, key=lambda i: (-frames[i], int(i.split("_")[1]))):
            entry.setdefault(matched[instance_id], instance_id)
        return matched, entry

    def facts(self) -> dict[str, dict[str, str]]:
        """Observable facts, with each object's entry carrying its ground-truth metadata instead."""
        facts = super().facts()
        _, entry = self.entries_of_objects()
        for object_id, instance_id in entry.items():
            facts[instance_id] = dict(self.metadata.get(object_id, {}))
        return facts


@register_memory("3dmem+gt_metadata")
class MetadataProbe(GroundTruthSnapshots):
    """Ground-truth metadata attached to the snapshots containing each object."""


@register_memory("3dmem+oracle_selection")
class OracleSelectionProbe(GroundTruthSnapshots):
    """The item's ground-truth object's entry is the evidence, at 3D-Mem's estimated location."""

    def retrieve(self, query: Any) -> VisualEvidence:
        request = query if isinstance(query, str) else str(getattr(query, "text", query))
        _, entry = self.entries_of_objects()
        instance_id = entry.get(self.targets.get(request, ""))
        if instance_id is None:
            return VisualEvidence(dialogue=self.transcript())
        instance = next(i for i in self.objects.instances if i.id == instance_id)
        snapshot = next(s for s in self.snapshots() if instance_id in s.objects)
        said = tuple(self.turns[t][1] for t in snapshot.turns)
        chosen = Entry(
            instance_id, instance.label, self.location_of(instance), self.facts()[instance_id], 0, snapshot.id, said
        )
        caption = f"{snapshot.id}: {instance_id} ({instance.label})"
        linked = tuple((snapshot.id, line) for line in said)
        return VisualEvidence((chosen,), (snapshot.image,), (caption,), self.transcript(), (instance.label,), linked)


@register_memory("3dmem+oracle_position")
class OraclePositionProbe(OracleSelectionProbe):
    """Oracle selection with the annotated object centre as the entry's location."""

    def location_of(self, instance: Instance) -> tuple[float, float, float]:
        matched, _ = self.entries_of_objects()
        object_id = matched.get(instance.id)
        if object_id is None:
            return instance.location
        return tuple(float(v) for v in self.truth.positions[object_id])
