"""3D-Mem's co-visibility clustering: group objects so that one frame shows each group together.

Start with all objects in one cluster. If some frame sees every object of a cluster, the
cluster becomes a snapshot taken from the frame where its objects cover the most pixels (ties:
the earlier frame). Otherwise the cluster is split in two by 2-means on the objects' estimated
3D locations and each half is handled the same way. A single object is always seen together
with itself, so the recursion ends; every object lands in exactly one snapshot.

2-means is deterministic: it starts from the two objects farthest apart (the first such pair in
id order) and alternates assignment (ties to the first centre) and mean updates until the
assignment no longer changes. A :class:`Snapshot` holds what the snapshot memories keep of one
chosen cluster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np


@dataclasses.dataclass(eq=False)
class Snapshot:
    """One snapshot.

    Attributes:
        id: ``snap_<k>`` in order of selection.
        frame: formation frame index of its image.
        image: ``(H, W, 3) uint8`` scene image.
        objects: instance ids it holds.
        turns: indices into the memory's ``turns`` linked to it (empty without a linker).
    """

    id: str
    frame: int
    image: np.ndarray
    objects: tuple[str, ...]
    turns: list[int] = dataclasses.field(default_factory=list)


def covisibility_clusters(
    locations: Mapping[str, Sequence[float]], frame_objects: Mapping[int, Mapping[str, float]]
) -> list[tuple[int, list[str]]]:
    """``(frame, sorted object ids)`` per snapshot, in depth-first split order.

    Args:
        locations: object id -> ``(3,)`` metres, for the objects to cluster.
        frame_objects: frame index -> {object id: mask coverage in that frame}.
    """
    seen_by: dict[str, set[int]] = {o: set() for o in locations}
    for frame, seen in frame_objects.items():
        for object_id in seen:
            if object_id in seen_by:
                seen_by[object_id].add(frame)
    missing = sorted(o for o, frames in seen_by.items() if not frames)
    if missing:
        raise ValueError(f"objects {missing} are seen in no frame")
    out: list[tuple[int, list[str]]] = []
    pending = [sorted(locations)]
    while pending:
        cluster = pending.pop(0)
        common = set.intersection(*(seen_by[o] for o in cluster))
        if common:
            best = max(common, key=lambda f: (sum(frame_objects[f][o] for o in cluster), -f))
            out.append((best, cluster))
            continue
        first, second = two_means(np.array([locations[o] for o in cluster], float))
        pending[:0] = [[cluster[i] for i in first], [cluster[i] for i in second]]
    return out


def two_means(points: np.ndarray) -> tuple[list[int], list[int]]:
    """Deterministic 2-means split of ``(N, 3)`` points (N >= 2): the two index lists, both non-empty."""
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
    a, b = np.unravel_index(int(np.argmax(distances)), distances.shape)
    centres = points[[a, b]]
    labels = np.full(len(points), -1)
    for _ in range(100):
        new = (np.linalg.norm(points - centres[1], axis=1) < np.linalg.norm(points - centres[0], axis=1)).astype(int)
        if np.array_equal(new, labels):
            break
        labels = new
        if labels.min() == labels.max():  # all points coincide: split by order
            labels = (np.arange(len(points)) >= len(points) // 2).astype(int)
            break
        centres = np.stack([points[labels == 0].mean(0), points[labels == 1].mean(0)])
    return [int(i) for i in np.flatnonzero(labels == 0)], [int(i) for i in np.flatnonzero(labels == 1)]
