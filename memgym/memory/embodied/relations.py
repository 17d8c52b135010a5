"""Spatial relations between fused instances (a networkx graph) and the facts they support.

From the instances' outlier-filtered bounding boxes (metres, Y up):

* ``A on B`` -- A's bottom lies within ``support_gap`` of B's top and A's horizontal centre lies
  inside B's footprint;
* ``A near B`` -- not stacked, and their footprints are within ``near_gap`` of each other
  (horizontal box-to-box distance), as DialogMem's ``next_to``.

:func:`observable_facts` turns the graph and the instances' sightings into the fact words of
DialogMem's perceptual and episodic keys that a memory can know without ground truth: ``on``
and ``near`` (the category of the closest such neighbour of another category), ``color`` and
``room`` (what it looks like and the room type its surroundings make,
:mod:`~memgym.memory.embodied.appearance`), ``times_seen``
(separate sightings) and ``order`` (rank among instances of the same label by first sighting),
counted as the dataset annotation counts them (:mod:`memgym.sensors.sightings`: frames where the
instance covers >= 5% of the view, with the sighting gap the episode's annotation recorded; no
order for instances first seen together with another of their label). ``neighbours`` limits the
instances an ``on`` / ``near`` fact may name: 3D-Mem's reasoner sees an object's relations only in
its snapshot's image (:meth:`memgym.memory.embodied.snapshots.SnapshotMemory.facts`),
ConceptGraphs' reads its 3D graph.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import networkx as nx
import numpy as np

from memgym.datasets.dialogmem.content import COUNTS, ORDINALS
from memgym.memory.embodied.appearance import colour_name, room_names
from memgym.memory.embodied.object_map import Instance
from memgym.sensors.sightings import MAX_SIGHTING_GAP, sighting_ranks


def relation_graph(instances: Sequence[Instance], near_gap: float = 0.5, support_gap: float = 0.1) -> nx.DiGraph:
    """Directed graph over instance ids; edges carry ``kind`` (``on``/``near``) and ``distance`` (m)."""
    graph = nx.DiGraph()
    for instance in instances:
        graph.add_node(instance.id, label=instance.label, location=instance.location)
    if len(instances) < 2:
        return graph
    boxes = np.stack([i.box for i in instances])  # (N, 2, 3)
    low, high = boxes[:, 0], boxes[:, 1]
    centre = boxes.mean(axis=1)
    # horizontal gap between footprints (x and z), (N, N)
    gap_x = np.maximum(0.0, np.maximum(low[:, None, 0] - high[None, :, 0], low[None, :, 0] - high[:, None, 0]))
    gap_z = np.maximum(0.0, np.maximum(low[:, None, 2] - high[None, :, 2], low[None, :, 2] - high[:, None, 2]))
    gap = np.hypot(gap_x, gap_z)
    inside = (
        (centre[:, None, 0] >= low[None, :, 0])
        & (centre[:, None, 0] <= high[None, :, 0])
        & (centre[:, None, 2] >= low[None, :, 2])
        & (centre[:, None, 2] <= high[None, :, 2])
    )
    on = inside & (np.abs(low[:, None, 1] - high[None, :, 1]) <= support_gap)
    np.fill_diagonal(on, False)
    near = (gap <= near_gap) & ~on & ~on.T
    np.fill_diagonal(near, False)
    for a, b in zip(*np.nonzero(on)):
        graph.add_edge(instances[a].id, instances[b].id, kind="on", distance=float(gap[a, b]))
    for a, b in zip(*np.nonzero(near)):
        graph.add_edge(instances[a].id, instances[b].id, kind="near", distance=float(gap[a, b]))
    return graph


def observable_facts(
    instances: Sequence[Instance],
    graph: nx.DiGraph,
    neighbours: Mapping[str, Collection[str]] | None = None,
    max_gap: int = MAX_SIGHTING_GAP,
) -> dict[str, dict[str, str]]:
    """Instance id -> fact key -> value words (see the module docstring).

    Args:
        neighbours: instance id -> the instance ids its ``on`` / ``near`` facts may name (an id
            not in it: none); None: any neighbour in ``graph``.
        max_gap: most unseen frames inside one sighting (``times_seen``; the bound episode's,
            :func:`memgym.sensors.sightings.recorded_sighting_gap`).
    """
    labels = {i.id: i.label for i in instances}
    first = {i.id: frames[0] for i in instances if (frames := i.seen_frames())}
    ranks = sighting_ranks(first, labels)
    rooms = room_names(instances)
    facts: dict[str, dict[str, str]] = {}
    for instance in instances:
        own: dict[str, str] = {}
        colour = colour_name(instance.crop)
        if colour is not None:
            own["color"] = colour
        if instance.id in rooms:
            own["room"] = rooms[instance.id]
        allowed = None if neighbours is None else neighbours.get(instance.id, ())
        for kind in ("on", "near"):
            targets = sorted(
                (data["distance"], labels[t], t)
                for _, t, data in graph.out_edges(instance.id, data=True)
                if data["kind"] == kind and labels[t] != instance.label and (allowed is None or t in allowed)
            )
            if targets:
                own[kind] = targets[0][1]
        count = instance.sightings(max_gap)
        if count in COUNTS:
            own["times_seen"] = COUNTS[count]
        rank = ranks.get(instance.id, len(ORDINALS))
        if rank < len(ORDINALS):
            own["order"] = ORDINALS[rank]
        facts[instance.id] = own
    return facts
