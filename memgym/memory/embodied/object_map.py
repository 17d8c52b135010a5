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

from memgym.memory.embodied.association_kernels import (
    absent,
    boxes_near,
    insert_absent,
    merge_sorted,
    shares_inside,
    view_geometry,
)
from memgym.memory.embodied.backproject import remove_outliers, voxel_downsample, voxel_keys
from memgym.memory.embodied.perception import ObjectView
from memgym.sensors.sightings import MAX_SIGHTING_GAP, count_sightings, seen_frames

MERGE_AT = 64
"""Added keys a :class:`KeySet` holds apart beyond a quarter of its size before merging them in."""


class KeySet:
    """Sorted int64 keys (voxel or cell keys), each with an optional row of values, grown by adding
    keys it lacks. Added keys are kept in a second, small sorted array and merged into the main
    one when the set is read or the second outgrows :data:`MERGE_AT` + a quarter of the first
    (equal keys keep the order of addition: the result of a stable sort of all keys in the order
    added), so adding a few keys to a large set does not copy the set.

    Args:
        keys: ``(N,) int64`` sorted keys.
        rows: ``(N, D)`` values of the keys, or None.
    """

    def __init__(self, keys: np.ndarray, rows: np.ndarray | None = None) -> None:
        self._with_rows = rows is not None
        self._keys = np.asarray(keys, np.int64)
        self._rows = np.asarray(rows) if rows is not None else np.zeros((len(keys), 0))
        self._clear_added()

    @property
    def keys(self) -> np.ndarray:
        """``(N,) int64`` the keys, sorted."""
        self._merge_added()
        return self._keys

    @property
    def rows(self) -> np.ndarray | None:
        """``(N, D)`` the rows, in the order of :attr:`keys` (None for a set without rows)."""
        self._merge_added()
        return self._rows if self._with_rows else None

    def missing(self, keys: np.ndarray) -> np.ndarray:
        """``(M,) bool``: which of ``keys`` ``(M,) int64`` the set lacks."""
        return absent(keys, self._keys, self._added_keys)

    def add(self, keys: np.ndarray, rows: np.ndarray | None = None, unique: bool = False) -> np.ndarray:
        """Add those of ``keys`` ``(M,) int64`` the set lacks, with their ``rows`` ``(M, D)`` (equal
        keys among them: all of them, or with ``unique`` the first); returns ``(M,) bool``: which of
        ``keys`` it lacked (see :meth:`missing`)."""
        if rows is None:
            rows = np.zeros((len(keys), 0))
        self._added_keys, self._added_rows, missing = insert_absent(
            self._keys, self._added_keys, self._added_rows, keys, rows, unique
        )
        if len(self._added_keys) > MERGE_AT + len(self._keys) // 4:  # each key is copied O(1) times
            self._merge_added()
        return missing

    def _merge_added(self) -> None:
        if len(self._added_keys):
            self._keys, self._rows = merge_sorted(self._keys, self._rows, self._added_keys, self._added_rows)
            self._clear_added()

    def _clear_added(self) -> None:
        self._added_keys = np.zeros(0, np.int64)
        self._added_rows = np.zeros((0, self._rows.shape[1]), self._rows.dtype)


@dataclasses.dataclass(eq=False)
class Instance:
    """One fused object.

    Attributes:
        id: ``obj_<n>`` in order of creation.
        voxels: its voxels' keys, each with the ``(3,)`` centroid it was first seen with, metres.
        grid: the keys of the coarse association grid (``2 * voxel``) cells it occupies.
        votes: label -> number of views with that label.
        crop: the crop of its largest view.
        crop_coverage: that view's frame coverage.
        frames: ``{frame index: coverage}`` of the frames it was detected in.
        embedding: mean unit crop embedding, or None.
    """

    id: str
    voxels: KeySet
    grid: KeySet
    votes: collections.Counter
    crop: np.ndarray
    crop_coverage: float
    frames: dict[int, float]
    embedding: np.ndarray | None = None
    _box: np.ndarray | None = None

    @property
    def points(self) -> np.ndarray:
        """``(M, 3)`` voxel centroids of the fused cloud, metres, sorted by voxel key."""
        return self.voxels.rows

    @property
    def keys(self) -> np.ndarray:
        """``(M,)`` the sorted voxel keys of :attr:`points`."""
        return self.voxels.keys

    @property
    def cells(self) -> np.ndarray:
        """Sorted unique keys of the coarse association grid cells it occupies."""
        return self.grid.keys

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

    def sightings(self, max_gap: int = MAX_SIGHTING_GAP) -> int:
        """Separate sightings (:func:`memgym.sensors.sightings.count_sightings` of :meth:`seen_frames`,
        at most ``max_gap`` unseen frames inside one)."""
        return count_sightings(self.seen_frames(), max_gap)

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
            voxels=KeySet(voxel_keys(points, voxel), points),
            grid=KeySet(np.unique(voxel_keys(points, 2 * voxel))),
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
            keys, cells, low, high = view_geometry(np.asarray(view.points, np.float64), self.voxel)
            best = self._best_match(view, low, high, cells)
            if best < 0:
                self._create(view)
                self._boxes = np.concatenate([self._boxes, [[low, high]]])
                best = len(self.instances) - 1
            else:
                self._merge(self.instances[best], view, keys, cells)
                np.minimum(self._boxes[best, 0], low, out=self._boxes[best, 0])
                np.maximum(self._boxes[best, 1], high, out=self._boxes[best, 1])
            ids[index] = self.instances[best].id
        return ids

    def _best_match(self, view: ObjectView, low: np.ndarray, high: np.ndarray, cells: np.ndarray) -> int:
        """Index of the instance ``view`` merges into (the first of the most similar ones above the
        threshold), or -1 (``low``/``high``: the corners of its points' box, ``cells``: their
        coarse-grid keys). Geometric similarity is at most 1, so a candidate whose semantic
        similarity + 1 does not beat the best so far cannot win and is skipped unmeasured; the
        grid overlap is measured only where the box share is below 1."""
        candidates = self._candidates(low, high)
        semantic = [self.semantic(view, self.instances[k]) for k in candidates]
        hopeful = [k for k, s in zip(candidates, semantic) if not 1.0 + s <= self.threshold]
        inside = dict(zip(hopeful, shares_inside(view.points, self._boxes, np.array(hopeful, np.int64), self.voxel)))
        best, best_sim = -1, self.threshold
        for k, s in zip(candidates, semantic):
            if 1.0 + s <= best_sim:
                continue
            geometric = inside[k]
            if geometric < 1.0:
                geometric = max(self.overlap(cells, self.instances[k].grid), geometric)
            if geometric <= 0:
                continue
            sim = geometric + s
            if sim > best_sim:
                best, best_sim = int(k), sim
        return best

    @staticmethod
    def overlap(cells: np.ndarray, grid: KeySet) -> float:
        """Fraction of ``cells`` (one per view voxel) present in an instance's ``grid``."""
        return int(np.count_nonzero(~grid.missing(cells))) / len(cells)

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
        return boxes_near(self._boxes, low, high, 2 * self.voxel)

    def _create(self, view: ObjectView) -> None:
        points = voxel_downsample(view.points, self.voxel)
        self.instances.append(
            Instance(
                id=f"obj_{len(self.instances)}",
                voxels=KeySet(voxel_keys(points, self.voxel), points),
                grid=KeySet(np.unique(voxel_keys(points, 2 * self.voxel))),
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
        new = instance.voxels.add(keys, points)
        if new.any():
            instance.grid.add(cells[new], unique=True)
            instance._box = None

    def state(self) -> list[dict[str, Any]]:
        """Plain-data form of the instances, each with the ``bounds`` of every point it was shown."""
        return [{**i.state(), "bounds": self._boxes[k].copy()} for k, i in enumerate(self.instances)]

    def load(self, states: list[dict[str, Any]]) -> None:
        """Restore :meth:`state` output."""
        self.instances = [Instance.from_state(s, self.voxel) for s in states]
        self._boxes = np.array([np.asarray(s["bounds"], float) for s in states]).reshape(-1, 2, 3)
