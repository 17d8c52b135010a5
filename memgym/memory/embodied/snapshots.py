"""``3dmem`` and ``3dmem+dialogue``: snapshots of co-observed objects, as 3D-Mem keeps them.

Formation fuses detections into instances exactly as ``conceptgraph`` does and keeps the image
of every frame in which it detected something. Snapshots are chosen by 3D-Mem's co-visibility
clustering (:mod:`~memgym.memory.embodied.covisibility`): object groups that one frame shows
together, split by their 3D locations until each has such a frame. Each :class:`Snapshot` holds
that frame's scene image, its objects (their crops are in the instances) and a list of linked
dialogue turns.

Retrieval follows 3D-Mem's released code (``prefiltering`` in ``src/eval_utils_gpt_goatbench.py``,
``cfg/eval_goatbench.yaml``: ``top_k_categories: 10``, ``use_full_obj_list: false``): the reasoner
names the relevant categories (at most ``top_k_categories``); the snapshots whose cluster holds an
instance of one of them are kept, and each kept snapshot offers its objects of those categories as
entries (grouped by snapshot, the location the instance's estimated 3D location); the images are
the kept snapshots' scene images. 3D-Mem keeps no relation graph: what relates an object to
others is what its snapshot's image shows, so an entry's ``on`` / ``near`` facts name only objects
detected in that image (``snapshot_relations=image``; ``graph``: ConceptGraphs' 3D relations over
every instance, as ``conceptgraph``). ``3dmem+dialogue`` appends the full transcript.

Seams for linkers and probes: :attr:`SnapshotMemory.linker` (a
:class:`~memgym.memory.embodied.linking.Linker`) fills each snapshot's ``turns`` when snapshots
are built; a kept snapshot carries only its linked turns into the evidence (each of its entries
lists them as ``said``, and the evidence's ``linked`` holds them per snapshot), unlinked turns are
dropped. ``3dmem+clip``, ``3dmem+vlm`` and ``3dmem+controlled`` are ``3dmem`` with that linker (``3dmem+linked``: the one ``link.linker`` names)
(built from the ``link`` options). A probe replaces one component by overriding one method: the facts attached to
objects (:meth:`~memgym.memory.embodied.object_memory.ObjectMemory.facts`), the entry locations
(:meth:`~memgym.memory.embodied.object_memory.ObjectMemory.location_of`) or the evidence itself
(:meth:`SnapshotMemory.retrieve`, e.g. keeping only the true target's entry).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.core.errors import ConfigError
from memgym.core.registry import LINKERS, register_memory
from memgym.memory.embodied.covisibility import Snapshot, covisibility_clusters
from memgym.memory.embodied.evidence import Entry, VisualEvidence
from memgym.memory.embodied.ground_truth import (
    LinkCounts,
    SceneTruth,
    link_counts,
    match_instances,
    snapshot_contents,
    turn_references,
)
from memgym.memory.embodied.linking import Linker, LinkInputs, build_linker
from memgym.memory.embodied.object_memory import ObjectMemory
from memgym.memory.embodied.relations import observable_facts

SNAPSHOT_RELATIONS = ("image", "graph")
"""Where a snapshot entry's ``on`` / ``near`` facts come from (module docstring)."""


@register_memory("3dmem")
class SnapshotMemory(ObjectMemory):
    """3D-Mem snapshots of co-observed objects; evidence: the snapshots holding the categories the reasoner names.

    Args:
        snapshot_relations: ``image`` (default): an entry's ``on`` / ``near`` facts name only objects
            detected in its snapshot's image; ``graph``: any instance (the 3D relation graph).
        **options: :class:`~memgym.memory.embodied.object_memory.ObjectMemory` options.
    """

    def __init__(self, *, snapshot_relations: str = "image", **options: Any) -> None:
        if snapshot_relations not in SNAPSHOT_RELATIONS:
            raise ConfigError(
                f"{type(self).__name__}: snapshot_relations must be one of {SNAPSHOT_RELATIONS}, got {snapshot_relations!r}"
            )
        self.snapshot_relations = snapshot_relations
        super().__init__(**options)

    @classmethod
    def stored_options(cls, options: Any) -> Any:
        """As :meth:`VisualMemory.stored_options`, and the default ``snapshot_relations`` (``''``)
        written out as ``image``: runs made before it read the 3D relation graph."""
        options = super().stored_options(options)
        if options.visual.snapshot_relations:
            return options
        return dataclasses.replace(options, visual=dataclasses.replace(options.visual, snapshot_relations="image"))

    @classmethod
    def option_kwargs(cls, options: Any) -> dict[str, Any]:
        relations = options.visual.snapshot_relations or "image"
        return {**super().option_kwargs(options), "snapshot_relations": relations}

    def _reset_store(self) -> None:
        super()._reset_store()
        self.images: dict[int, np.ndarray] = {}
        self._linker: Linker | None = getattr(self, "_linker", None)  # kept across episodes
        self._snapshots: list[Snapshot] | None = None

    @property
    def linker(self) -> Linker | None:
        """The linker filling each snapshot's ``turns`` (None: no links); setting it re-links."""
        return self._linker

    @linker.setter
    def linker(self, linker: Linker | None) -> None:
        self._linker = linker
        self._snapshots = None

    def _after_frame(self, observation: Any, index: int, seen: dict[str, float]) -> None:
        self.images[index] = np.asarray(observation["rgb"], np.uint8).copy()
        self._snapshots = None

    def snapshots(self) -> list[Snapshot]:
        """The snapshots (selected after formation changes, then linked when a linker is set)."""
        if self._snapshots is None:
            locations = {i.id: i.location for i in self.objects.instances}
            chosen = covisibility_clusters(locations, self.frame_objects)
            self._snapshots = [
                Snapshot(f"snap_{k}", frame, self.images[frame], tuple(members))
                for k, (frame, members) in enumerate(chosen)
            ]
            if self.linker is not None:
                inputs = LinkInputs(
                    self.turns, self._snapshots, self.objects.instances, self.frame_objects, self.reasoner, self.images
                )
                links = self.linker.link(inputs)
                for snapshot in self._snapshots:
                    snapshot.turns = sorted(links.get(snapshot.id, []))
        return self._snapshots

    def contents(self) -> dict[str, Any]:
        snapshots = [
            {
                "id": s.id,
                "frame": int(s.frame),
                "objects": list(s.objects),
                "turns": [self.turns[t][1] for t in s.turns],
            }
            for s in self.snapshots()
        ]
        return {**super().contents(), "snapshots": snapshots}

    def measures_against(self, episode: Any, truth: SceneTruth) -> dict[str, Any]:
        """The object memory's measures and ``links`` (:meth:`link_counts`)."""
        return {**super().measures_against(episode, truth), "links": self.link_counts(episode, truth)}

    def link_counts(self, episode: Any, truth: SceneTruth) -> LinkCounts:
        """Link counts of the snapshots (:func:`~memgym.memory.embodied.ground_truth.link_counts`):
        the turns referring to an annotated object some snapshot contains, and those linked to one."""
        snapshots = self.snapshots()
        references = turn_references(episode, self.turns)
        contents = snapshot_contents(snapshots, match_instances(truth, self.objects.instances))
        return link_counts(references, {s.id: s.turns for s in snapshots}, contents)

    def category_dialogue(self) -> list[str]:
        """The transcript (``+dialogue``), or the lines linked to any snapshot (a linker's variants)."""
        if self.linker is None:
            return super().category_dialogue()
        linked = sorted({t for s in self.snapshots() for t in s.turns})
        return [self.turns[t][1] for t in linked]

    def facts(self) -> dict[str, dict[str, str]]:
        """Observable facts; with ``snapshot_relations=image`` an object's ``on`` / ``near`` name only
        objects detected in the frame of its snapshot's image."""
        if self.snapshot_relations == "graph":
            return super().facts()
        shown = {o: self.frame_objects[s.frame].keys() for s in self.snapshots() for o in s.objects}
        return observable_facts(self.objects.instances, self.graph, shown, self.sighting_gap)

    def retrieve(self, query: Any) -> VisualEvidence:
        categories = self.categories(query)
        facts = self.facts()
        instances = {i.id: i for i in self.objects.instances}
        offered = {
            s.id: [o for o in s.objects if instances[o].label in categories] for s in self.snapshots()
        }  # a snapshot is kept when its cluster holds a named category; it offers those objects
        kept = [s for s in self.snapshots() if offered[s.id]]
        said = {s.id: tuple(self.turns[t][1] for t in s.turns) for s in kept}
        entries = tuple(
            Entry(o, instances[o].label, self.location_of(instances[o]), facts[o], k, s.id, said[s.id])
            for k, s in enumerate(kept)
            for o in offered[s.id]
        )
        captions = tuple(f"{s.id}: " + ", ".join(f"{o} ({instances[o].label})" for o in offered[s.id]) for s in kept)
        linked = tuple((s.id, line) for s in kept for line in said[s.id])
        images = tuple(s.image for s in kept)
        return VisualEvidence(entries, images, captions, self.transcript(), categories, linked)

    def bind_episode(self, episode: Any, **context: Any) -> None:
        """As :meth:`VisualMemory.bind_episode`; a linker that reads annotations (``controlled``)
        is bound to ``episode`` too."""
        super().bind_episode(episode, **context)
        if self.linker is not None:
            self.linker.bind_episode(episode)
            self._snapshots = None

    def _store_state(self) -> dict[str, Any]:
        return {
            **super()._store_state(),
            "images": {int(f): image.copy() for f, image in self.images.items()},
        }

    def _load_store(self, state: dict[str, Any]) -> None:
        super()._load_store(state)
        self.images = {int(f): np.asarray(image, np.uint8) for f, image in state["images"].items()}
        self._snapshots = None


@register_memory("3dmem+dialogue")
class SnapshotDialogueMemory(SnapshotMemory):
    """``3dmem`` plus the full transcript."""

    with_dialogue = True
    reads = SnapshotMemory.reads | {"dialogue"}


class LinkedSnapshotMemory(SnapshotMemory):
    """``3dmem`` whose snapshots carry the turns its :attr:`linker_name` linker links to them.

    Args:
        link: the linker's options (``clip_model``, ``top_k``; ``quality``, ``mode``, ``seed``).
        **options: :class:`SnapshotMemory` options.
    """

    linker_name = ""
    reads = SnapshotMemory.reads | {"dialogue", "linker"}

    def __init__(self, *, link: Mapping[str, Any] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.options["link"] = dict(link or {})
        self.linker = build_linker(self.linker_name, self.options["link"], options.get("device", "cpu"))

    @classmethod
    def option_kwargs(cls, options: Any) -> dict[str, Any]:
        return {**super().option_kwargs(options), "link": dataclasses.asdict(options.link)}


@register_memory("3dmem+clip")
class ClipLinkedMemory(LinkedSnapshotMemory):
    """``3dmem`` with dialogue linked by the CLIP linker."""

    linker_name = "clip"


@register_memory("3dmem+vlm")
class VLMLinkedMemory(LinkedSnapshotMemory):
    """``3dmem`` with dialogue linked by the VLM (reasoner) linker."""

    linker_name = "vlm"


@register_memory("3dmem+controlled")
class ControlledLinkedMemory(LinkedSnapshotMemory):
    """``3dmem`` with dialogue linked by the ground-truth ``controlled`` linker (an intervention)."""

    linker_name = "controlled"
    reads = LinkedSnapshotMemory.reads | {"truth"}


@register_memory("3dmem+linked")
class AnyLinkedMemory(LinkedSnapshotMemory):
    """``3dmem`` with dialogue linked by the registered linker named in ``link.linker`` (a plugin's too)."""

    def __init__(self, *, link: Mapping[str, Any] | None = None, **options: Any) -> None:
        self.linker_name = str((link or {}).get("linker") or "")
        if not self.linker_name:
            raise ConfigError(f"3dmem+linked needs link.linker=<one of: {', '.join(LINKERS.names())}>")
        super().__init__(link=link, **options)
