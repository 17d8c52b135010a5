"""``ObjectMemory``: the base of the memories built on object instances fused across frames.

Each formation frame's detections are lifted to 3D (:mod:`~memgym.memory.embodied.perception`)
and fused into instances (:mod:`~memgym.memory.embodied.object_map`); the memory also records
which instances each frame showed and how much of it they covered. Spatial relations and the
observable facts come from :mod:`~memgym.memory.embodied.relations`; retrieval's category
prediction from :mod:`~memgym.memory.embodied.category_retrieval`. ``conceptgraph`` and
``3dmem`` subclass it and differ in how they organise evidence.
"""

from __future__ import annotations

import collections
from typing import Any

import networkx as nx

from memgym.core.errors import ConfigError
from memgym.memory.embodied.category_retrieval import predict_categories
from memgym.memory.embodied.ground_truth import SceneTruth, main_object, map_errors
from memgym.memory.embodied.object_map import Instance, ObjectMap
from memgym.memory.embodied.relations import observable_facts, relation_graph
from memgym.memory.embodied.visual_memory import VisualMemory, pose_of


class ObjectMemory(VisualMemory):
    """Base of the memories built on fused instances (``conceptgraph``, ``3dmem``).

    Args:
        threshold: association threshold on geometric + semantic similarity.
        top_k_categories: the most categories retrieval keeps of those the reasoner names, in the
            order named (3D-Mem's prefiltering, ``top_k_categories``, 10 in its released configs).
        **options: :class:`~memgym.memory.embodied.visual_memory.VisualMemory` options.
    """

    reads = frozenset({"frames", "semantic", "reasoner"})

    def __init__(self, threshold: float = 1.1, top_k_categories: int = 10, **options: Any) -> None:
        if top_k_categories < 1:
            raise ConfigError(f"{type(self).__name__}: top_k_categories must be >= 1, got {top_k_categories}")
        self.threshold = float(threshold)
        self.top_k_categories = int(top_k_categories)
        super().__init__(**options)
        self.options["threshold"] = self.threshold  # formation options (a state must match); retrieval's are not
        if self.perception is None:
            raise ConfigError(f"{type(self).__name__} needs a detector (detector=gt or a model), got 'none'")

    @classmethod
    def option_kwargs(cls, options: Any) -> dict[str, Any]:
        visual = options.visual
        return {
            **super().option_kwargs(options),
            "threshold": visual.threshold,
            "top_k_categories": visual.top_k_categories,
        }

    def _reset_store(self) -> None:
        self.objects = ObjectMap(self.options["voxel"], self.threshold)
        self.frame_objects: dict[int, dict[str, float]] = {}
        self.provenance: dict[str, collections.Counter] = {}  # for measures only; not in the state
        self._graph: nx.DiGraph | None = None

    def _observe_frame(self, observation: Any, index: int) -> None:
        position, rotation = pose_of(observation)
        frame = {**observation, "position": position, "rotation": rotation}
        views = self.perception.views(frame, index)
        if not views:
            return
        ids = self.objects.add(views)
        seen = self.frame_objects.setdefault(index, {})
        for view, object_id in zip(views, ids):
            seen[object_id] = seen.get(object_id, 0.0) + view.coverage
            self.provenance.setdefault(object_id, collections.Counter()).update(view.sources)
        self._graph = None
        self._after_frame(observation, index, seen)

    def _after_frame(self, observation: Any, index: int, seen: dict[str, float]) -> None:
        """Hook for subclasses: ``seen`` is instance id -> coverage in frame ``index``."""

    @property
    def graph(self) -> nx.DiGraph:
        """The spatial-relation graph (rebuilt after formation changes)."""
        if self._graph is None:
            self._graph = relation_graph(self.objects.instances)
        return self._graph

    def facts(self) -> dict[str, dict[str, str]]:
        """Instance id -> observable facts (the seam a metadata probe replaces)."""
        return observable_facts(self.objects.instances, self.graph, max_gap=self.sighting_gap)

    def location_of(self, instance: Instance) -> tuple[float, float, float]:
        """The navigation destination of ``instance``'s entry: its estimated 3D location, metres
        (the seam an oracle-position probe replaces)."""
        return instance.location

    def categories(self, query: Any) -> tuple[str, ...]:
        """The first ``top_k_categories`` categories the bound reasoner names for ``query`` among the
        instances' labels."""
        request = query if isinstance(query, str) else str(getattr(query, "text", query))
        labels = {i.label for i in self.objects.instances}
        named = predict_categories(self.reasoner, request, labels, self.category_dialogue())
        return named[: self.top_k_categories]

    def contents(self) -> dict[str, Any]:
        objects = [
            {"id": i.id, "label": i.label, "location": [round(v, 3) for v in i.location], "frames": sorted(i.frames)}
            for i in self.objects.instances
        ]
        return {**super().contents(), "objects": objects}

    def measures(self, episode: Any) -> dict[str, Any]:
        """``map`` (:meth:`map_errors`) and ``entry_objects`` (:meth:`entry_objects`) against
        ``episode``'s :class:`~memgym.memory.embodied.ground_truth.SceneTruth`."""
        return self.measures_against(episode, SceneTruth.of(episode))

    def measures_against(self, episode: Any, truth: SceneTruth) -> dict[str, Any]:
        """:meth:`measures` given ``episode``'s scene truth (read once)."""
        return {"map": self.map_errors(truth), "entry_objects": self.entry_objects(truth)}

    def map_errors(self, truth: SceneTruth) -> dict[str, int] | None:
        """Merges and splits of the map (:func:`~memgym.memory.embodied.ground_truth.map_errors`);
        None without the annotated ids under the detector's masks (no provenance)."""
        return map_errors(truth, self.objects.instances, self.provenance) if self.provenance else None

    def entry_objects(self, truth: SceneTruth) -> dict[str, str | None]:
        """Entry (instance) id -> the annotated object seen in most of its views (None: no annotated
        object), for every entry with provenance."""
        return {entry: main_object(truth, self.provenance, entry) for entry in self.provenance}

    def _store_state(self) -> dict[str, Any]:
        return {
            "instances": self.objects.state(),
            "frame_objects": {int(k): dict(v) for k, v in self.frame_objects.items()},
        }

    def _load_store(self, state: dict[str, Any]) -> None:
        self.objects.load(state["instances"])
        self.frame_objects = {
            int(k): {str(i): float(c) for i, c in v.items()} for k, v in state["frame_objects"].items()
        }
        self._graph = None
