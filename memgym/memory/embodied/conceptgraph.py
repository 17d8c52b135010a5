"""``conceptgraph`` and ``conceptgraph+dialogue``: an object-centric graph as ConceptGraphs builds it.

Formation: each frame's detections are lifted to 3D (:mod:`~memgym.memory.embodied.perception`)
and fused into object instances by geometric overlap plus semantic similarity
(:mod:`~memgym.memory.embodied.object_map`). Each instance keeps its best crop, its label
votes, its fused point cloud and the frames it was seen in; spatial relations (``on``,
``near``) form a networkx graph (:mod:`~memgym.memory.embodied.relations`).

Retrieval (3D-Mem's setting): the reasoner predicts the categories relevant to the request;
only instances with those labels are evidence, each with its crop as an image, its estimated
3D location (the navigation destination when chosen) and its observable facts, whose ``on`` /
``near`` come from the relation graph over every instance (``3dmem`` names only what a snapshot
image shows). ``conceptgraph+dialogue`` appends the full transcript.
"""

from __future__ import annotations

from typing import Any

from memgym.core.registry import register_memory
from memgym.memory.embodied.evidence import Entry, VisualEvidence
from memgym.memory.embodied.object_memory import ObjectMemory


@register_memory("conceptgraph")
class ConceptGraphMemory(ObjectMemory):
    """ConceptGraphs object instances; evidence: the instances of the categories the reasoner names."""

    def retrieve(self, query: Any) -> VisualEvidence:
        categories = self.categories(query)
        facts = self.facts()
        chosen = [i for i in self.objects.instances if i.label in categories]
        entries = tuple(Entry(i.id, i.label, self.location_of(i), facts[i.id], image=k) for k, i in enumerate(chosen))
        return VisualEvidence(
            entries=entries,
            images=tuple(i.crop for i in chosen),
            captions=tuple(f"crop of {i.id} ({i.label})" for i in chosen),
            dialogue=self.transcript(),
            categories=categories,
        )


@register_memory("conceptgraph+dialogue")
class ConceptGraphDialogueMemory(ConceptGraphMemory):
    """``conceptgraph`` plus the full transcript."""

    with_dialogue = True
    reads = ConceptGraphMemory.reads | {"dialogue"}
