"""Object instances fused across frames, as ConceptGraphs builds them.

Each new :class:`~memgym.memory.embodied.perception.ObjectView` is compared with every existing
:class:`Instance` whose bounding box it touches:

* geometric similarity -- the fraction of the view's voxels whose cell of a grid twice as coarse
  also holds instance points (ConceptGraphs' nearest-neighbour overlap ratio, on a grid), or,
  when larger, the fraction inside the instance's bounding box grown by one voxel (a new face of
  a large object seen for the first time lies on its box, not on its points);
* semantic similarity -- the cosine of the crop embeddings when both have one, else 1 for the
  same label and 0 for different labels.

The view merges into the most similar instance when ``geometric + semantic > threshold`` (and
the geometric part is positive); otherwise it starts a new instance. Merging adds the view's
voxels the instance does not have yet (a voxel keeps its first centroid), adds a vote for the
label, keeps the largest crop and averages the embeddings.
An instance's location is the centre of the bounding box of its fused cloud after statistical
outlier removal (open3d), computed when asked and cached until the instance changes.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

import numpy as np

from memgym.memory.embodied.backproject import remove_outliers, voxel_downsample, voxel_keys
from memgym.memory.embodied.perception import ObjectView
from memgym.sensors.sightings import count_sightings, seen_frames


@dataclasses.dataclass(eq=False)
class Instance:
    """One fused object.

    Attributes:
        id: ``obj_<n>`` in order of creation.
        points: ``(M, 3)`` voxel centroids of the fused cloud, metres, sorted by voxel key.
        keys: ``(M,)`` their sorted voxel keys.
        cells: sorted unique keys of the coarse association grid (``2 * voxel``) it occupies.
        votes: label -> number of views with that label.
        crop: the crop of its largest view.
        crop_coverage: that view's frame coverage.
        frames: ``{frame index: coverage}`` of the frames it was detected in.
        embedding: mean unit crop embedding, or None.
    """

    id: str
    points: np.ndarray
    keys: np.ndarray
    cells: np.ndarray
    votes: collections.Counter
    crop: np.ndarray
    crop_coverage: float
    frames: dict[int, float]
    embedding: np.ndarray | None = None
    _box: np.ndarray | None = None

    @property
    def label(self) -> str:
        """The most voted label (alphabetical among ties)."""
        best = max(self.votes.values())
        return min(label for label, n in self.votes.items() if n == best)

    @property
    def box(self) -> np.ndarray:
        """``(2, 3)`` min/max corner of the outlier-filtered cloud, metres."""
        if self._box is None:
            inliers = remove_outliers(self.points)
            self._box = np.stack([inliers.min(0), inliers.max(0)])
        return self._box

    @property
    def location(self) -> tuple[float, float, float]:
        """Centre of :attr:`box`, metres."""
        centre = self.box.mean(axis=0)
        return (float(centre[0]), float(centre[1]), float(centre[2]))

    def seen_frames(self) -> list[int]:
        """Frames in which it was seen (:mod:`memgym.sensors.sightings`: its detections there cover
        at least 5% of the frame), ascending."""
        return seen_frames(self.frames)

    def sightings(self) -> int:
        """Separate sightings: runs of consecutive frames in which it was seen (:meth:`seen_frames`)."""
        return count_sightings(self.seen_frames())

    def state(self) -> dict[str, Any]:
        """Plain-data form (see :meth:`from_state`)."""
        return {
            "id": self.id,
            "points": self.points.copy(),
            "votes": dict(self.votes),
            "crop": self.crop.copy(),
            "crop_coverage": self.crop_coverage,
            "frames": dict(self.frames),
            "embedding": None if self.embedding is None else self.embedding.copy(),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], voxel: float) -> Instance:
        points = np.asarray(state["points"], float).reshape(-1, 3)
        return cls(
            id=str(state["id"]),
            points=points,
            keys=voxel_keys(points, voxel),
            cells=np.unique(voxel_keys(points, 2 * voxel)),
            votes=collections.Counter({str(k): int(v) for k, v in state["votes"].items()}),
            crop=np.asarray(state["crop"], np.uint8),
            crop_coverage=float(state["crop_coverage"]),
            frames={int(k): float(v) for k, v in state["frames"].items()},
            embedding=None if state["embedding"] is None else np.asarray(state["embedding"], np.float32),
        )


class ObjectMap:
    """Instances and the association rule of the module docstring.

    Args:
        voxel: voxel size of the fused clouds, metres (must match the views').
        threshold: merge when geometric + semantic similarity exceeds it.
    """

    def __init__(self, voxel: float = 0.05, threshold: float = 1.1) -> None:
        self.voxel = float(voxel)
        self.threshold = float(threshold)
        self.instances: list[Instance] = []
        self._boxes = np.zeros((0, 2, 3))

    def add(self, views: list[ObjectView]) -> list[str]:
        """Associate the views of one frame (larger views first); returns the instance id each view
        went to, in the order of ``views``."""
        ids = [""] * len(views)
        for index in sorted(range(len(views)), key=lambda k: -len(views[k].points)):
            view = views[index]
            low, high = view.points.min(0), view.points.max(0)
            best = self._best_match(view, low, high)
            if best < 0:
                self._create(view)
                self._boxes = np.concatenate([self._boxes, [[low, high]]])
                best = len(self.instances) - 1
            else:
                keys, cells = voxel_keys(view.points, self.voxel), voxel_keys(view.points, 2 * self.voxel)
                self._merge(self.instances[best], view, keys, cells)
                np.minimum(self._boxes[best, 0], low, out=self._boxes[best, 0])
                np.maximum(self._boxes[best, 1], high, out=self._boxes[best, 1])
            ids[index] = self.instances[best].id
        return ids

    def _best_match(self, view: ObjectView, low: np.ndarray, high: np.ndarray) -> int:
        """Index of the instance ``view`` merges into (the first of the most similar ones above the
        threshold), or -1. Geometric similarity is at most 1, so a candidate whose semantic
        similarity + 1 does not beat the best so far cannot win and is skipped unmeasured; the
        grid overlap is measured only where the box share is below 1."""
        candidates = self._candidates(low, high)
        semantic = [self.semantic(view, self.instances[k]) for k in candidates]
        hopeful = [k for k, s in zip(candidates, semantic) if not 1.0 + s <= self.threshold]
        inside = dict(zip(hopeful, self._inside(view.points, np.array(hopeful, int))))
        cells = None
        best, best_sim = -1, self.threshold
        for k, s in zip(candidates, semantic):
            if 1.0 + s <= best_sim:
                continue
            geometric = inside[k]
            if geometric < 1.0:
                if cells is None:
                    cells = voxel_keys(view.points, 2 * self.voxel)
                geometric = max(self.overlap(cells, self.instances[k].cells), geometric)
            if geometric <= 0:
                continue
            sim = geometric + s
            if sim > best_sim:
                best, best_sim = int(k), sim
        return best

    @staticmethod
    def overlap(cells: np.ndarray, instance_cells: np.ndarray) -> float:
        """Fraction of ``cells`` (one per view voxel) present in the sorted ``instance_cells``."""
        at = np.minimum(np.searchsorted(instance_cells, cells), len(instance_cells) - 1)
        return int(np.count_nonzero(instance_cells[at] == cells)) / len(cells)

    def _inside(self, points: np.ndarray, which: np.ndarray) -> np.ndarray:
        """``(K,)`` fraction of ``points`` inside each instance ``which`` ``(K,)``'s bounding box
        grown by one voxel."""
        if not len(which):
            return np.zeros(0)
        low, high = self._boxes[which, 0] - self.voxel, self._boxes[which, 1] + self.voxel
        inside = np.all((points[None] >= low[:, None]) & (points[None] <= high[:, None]), axis=2)
        return np.count_nonzero(inside, axis=1) / len(points)

    @staticmethod
    def semantic(view: ObjectView, instance: Instance) -> float:
        """Cosine of the embeddings when both exist, else label equality (1 or 0)."""
        if view.embedding is not None and instance.embedding is not None:
            norm = float(np.linalg.norm(instance.embedding)) or 1.0
            return float(view.embedding @ instance.embedding) / norm
        return 1.0 if view.label in instance.votes else 0.0

    def _candidates(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Instances whose bounding box touches ``[low, high]`` grown by one coarse cell."""
        if not len(self.instances):
            return np.zeros(0, int)
        margin = 2 * self.voxel
        touching = np.all((self._boxes[:, 0] <= high + margin) & (self._boxes[:, 1] >= low - margin), axis=1)
        return np.flatnonzero(touching)

    def _create(self, view: ObjectView) -> None:
        points = voxel_downsample(view.points, self.voxel)
        self.instances.append(
            Instance(
                id=f"obj_{len(self.instances)}",
                points=points,
                keys=voxel_keys(points, self.voxel),
                cells=np.unique(voxel_keys(points, 2 * self.voxel)),
                votes=collections.Counter({view.label: 1}),
                crop=view.crop,
                crop_coverage=view.coverage,
                frames={view.frame: view.coverage},
                embedding=view.embedding,
            )
        )

    def _merge(self, instance: Instance, view: ObjectView, keys: np.ndarray, cells: np.ndarray) -> None:
        """Add the view's voxels the instance lacks (``keys``/``cells``: the view points' fine and
        coarse keys), its label vote, sighting, crop and embedding."""
        self._add_voxels(instance, view.points, keys, cells)
        instance.votes[view.label] += 1
        instance.frames[view.frame] = max(instance.frames.get(view.frame, 0.0), view.coverage)
        if view.coverage > instance.crop_coverage:
            instance.crop, instance.crop_coverage = view.crop, view.coverage
        if view.embedding is not None:
            n = sum(instance.votes.values()) - 1
            base = instance.embedding if instance.embedding is not None else view.embedding
            instance.embedding = ((base * n + view.embedding) / (n + 1)).astype(np.float32)

    @staticmethod
    def _add_voxels(instance: Instance, points: np.ndarray, keys: np.ndarray, cells: np.ndarray) -> None:
        """Add the ``(N, 3)`` ``points`` whose fine ``keys`` the instance lacks, and their coarse
        ``cells``; its points stay sorted by key (new equal keys in the order given: a stable sort of
        old + new)."""
        at = np.minimum(np.searchsorted(instance.keys, keys), len(instance.keys) - 1)
        new = instance.keys[at] != keys
        if new.any():
            order = np.argsort(keys[new], kind="stable")
            fresh = insertion_slots(instance.keys, keys[new][order])
            instance.keys = spliced(instance.keys, keys[new][order], fresh)
            instance.points = spliced(instance.points, points[new][order], fresh)
            instance.cells = sorted_union(instance.cells, cells[new])
            instance._box = None

    def state(self) -> list[dict[str, Any]]:
        """Plain-data form of the instances, each with the ``bounds`` of every point it was shown."""
        return [{**i.state(), "bounds": self._boxes[k].copy()} for k, i in enumerate(self.instances)]

    def load(self, states: list[dict[str, Any]]) -> None:
        """Restore :meth:`state` output."""
        self.instances = [Instance.from_state(s, self.voxel) for s in states]
        self._boxes = np.array([np.asarray(s["bounds"], float) for s in states]).reshape(-1, 2, 3)


def sorted_union(sorted_unique: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.union1d(sorted_unique, values)`` for a sorted duplicate-free first array, without
    re-sorting it (``values`` are few, the first array large)."""
    values = np.unique(values)
    at = np.minimum(np.searchsorted(sorted_unique, values), len(sorted_unique) - 1)
    missing = values[sorted_unique[at] != values]
    return spliced(sorted_unique, missing, insertion_slots(sorted_unique, missing))


def insertion_slots(sorted_old: np.ndarray, added: np.ndarray) -> np.ndarray:
    """``(N + M,) bool``: where the sorted ``added`` ``(M,)`` land when merged into the sorted
    ``sorted_old`` ``(N,)``, each after the old keys equal to it (a stable sort of old + added)."""
    fresh = np.zeros(len(sorted_old) + len(added), bool)
    fresh[np.searchsorted(sorted_old, added, side="right") + np.arange(len(added))] = True
    return fresh


def spliced(old: np.ndarray, added: np.ndarray, fresh: np.ndarray) -> np.ndarray:
    """``old`` ``(N, ...)`` and ``added`` ``(M, ...)`` interleaved: ``added`` where ``fresh`` is set."""
    out = np.empty((len(fresh), *old.shape[1:]), np.result_type(old, added))
    out[fresh] = added
    out[~fresh] = old
    return out
