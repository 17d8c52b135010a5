"""The optimised formation path (perception, simulated detector, association) builds exactly what
plain reference implementations of the same rules build, on a generated DialogMem episode.

Each ``reference_*`` below is the direct statement of one step (every touching instance measured,
one voxel reduction per detection, full-frame masks, a padded occlusion test, ...), monkeypatched
over the optimised code for the reference run; the two runs are compared array by array, so the
check does not depend on the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from memgym.core.registry import MEMORIES
from memgym.envs.dialogmem_env import DialogMemEnv
from memgym.memory.embodied import backproject as backprojection
from memgym.memory.embodied import detections, object_map, perception, simulated_detector
from memgym.memory.embodied.backproject import backproject, valid_depth, voxel_keys
from memgym.memory.embodied.object_map import KeySet, ObjectMap
from memgym.memory.embodied.perception_errors import PerceptionNoise, detection_states, frame_rng
from memgym.scenes.spec import load_scene
from tests.memory.test_visual_memory import SMALL

EPISODE = {**SMALL, "traversal": {"min_goals": 2, "max_goals": 2}, "camera": {"width": 96, "height": 96}}


@pytest.fixture(scope="module")
def formation():
    """The generated episode and its formation observations."""
    env = DialogMemEnv(EPISODE)
    env.reset(seed=0)
    observations = []
    observation, info = env.reset(options={"episode": env.episode})
    while info["phase"] == "formation":
        observations.append(observation)
        observation, _, _, _, info = env.step(env.formation_action())
    return env.episode, observations


def reference_voxel_keys(points, voxel):
    cells = np.floor(np.asarray(points) / voxel).astype(np.int64) + (1 << 20)
    return (cells[:, 0] << 42) | (cells[:, 1] << 21) | cells[:, 2]


def reference_best_match(self, view, low, high, cells=None):
    """Every instance whose box is near measured (grid overlap, grown-box share); the first most
    similar above the threshold."""
    cells = reference_voxel_keys(view.points, 2 * self.voxel)
    margin = 2 * self.voxel
    near = np.all((self._boxes[:, 0] <= high + margin) & (self._boxes[:, 1] >= low - margin), axis=1)
    best, best_sim = -1, self.threshold
    for k in np.flatnonzero(near):
        instance = self.instances[k]
        grown_low, grown_high = self._boxes[k, 0] - self.voxel, self._boxes[k, 1] + self.voxel
        inside = np.mean(np.all((view.points >= grown_low) & (view.points <= grown_high), axis=1))
        geometric = max(float(np.isin(cells, instance.cells).mean()), float(inside))
        if geometric > 0 and geometric + self.semantic(view, instance) > best_sim:
            best, best_sim = k, geometric + self.semantic(view, instance)
    return best


def reference_add_voxels(instance, points, keys, cells):
    """Concatenate the missing voxels, stable-sort by key, union of the cells."""
    new = ~np.isin(keys, instance.keys)
    if new.any():
        merged = np.concatenate([instance.keys, keys[new]])
        order = np.argsort(merged, kind="stable")
        instance.voxels = KeySet(merged[order], np.concatenate([instance.points, points[new]])[order])
        instance.grid = KeySet(np.union1d(instance.cells, cells[new]))
        instance._box = None


def reference_voxel_centroids(points, which, voxel, count):
    """Grouped by (detection, voxel key) with a lexsort; one reduction for all groups."""
    keys = reference_voxel_keys(points, voxel)
    order = np.lexsort((keys, which))
    which, keys, points = which[order], keys[order], points[order]
    first_of_group = np.ones(len(keys), bool)
    first_of_group[1:] = (which[1:] != which[:-1]) | (keys[1:] != keys[:-1])
    starts = np.flatnonzero(first_of_group)
    counts = np.diff(starts, append=len(keys))
    centroids = np.add.reduceat(points, starts, axis=0) / counts[:, None] if len(starts) else np.zeros((0, 3))
    bounds = np.searchsorted(which[starts], np.arange(count + 1))
    return [centroids[bounds[k] : bounds[k + 1]] for k in range(count)]


def reference_lift(self, found, depth, position, rotation, index=0):
    """Full-frame pixel selection, noisy depth written into a float64 copy of the frame, then a
    lexsort voxel reduction."""
    h, w = depth.shape
    owner = np.full((h, w), -1)
    for k, detection in enumerate(found):
        owner[detection.mask] = k
    on_grid = np.zeros((h, w), bool)
    on_grid[self.stride // 2 :: self.stride, self.stride // 2 :: self.stride] = True
    pixels = np.flatnonzero(on_grid & valid_depth(depth, self.camera) & (owner >= 0))
    noisy = np.array(depth, np.float64)
    if self.sensor is not None:
        noisy.reshape(-1)[pixels] = self.sensor.noisy_depth(noisy.reshape(-1)[pixels], index)
    points = backproject(noisy, pixels, position, rotation, self.camera)
    return reference_voxel_centroids(points, owner.reshape(-1)[pixels], self.voxel, len(found))


def reference_occluded_shares(semantic, depth, occluders):
    """The 4 neighbours of each pixel from a padded image: the image edge is another, nearer id
    that occludes; another id occludes when it is in ``occluders`` and nearer."""
    ids = np.pad(np.asarray(semantic, np.int64), 1, constant_values=-1)
    near = np.pad(np.asarray(depth, np.float32), 1, constant_values=-np.inf)
    centre_ids, centre_depth = ids[1:-1, 1:-1], near[1:-1, 1:-1]
    outline = np.zeros(centre_ids.shape, bool)
    occluded = np.zeros(centre_ids.shape, bool)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        neighbour = ids[1 + dr : ids.shape[0] - 1 + dr, 1 + dc : ids.shape[1] - 1 + dc]
        other = neighbour != centre_ids
        nearer = near[1 + dr : near.shape[0] - 1 + dr, 1 + dc : near.shape[1] - 1 + dc] < centre_depth - np.float32(
            simulated_detector.NEARER
        )
        can_occlude = np.isin(neighbour, [-1, *occluders])
        outline |= other
        occluded |= other & nearer & can_occlude
    return {
        int(i): float(occluded[centre_ids == i].sum() / outline[centre_ids == i].sum())
        for i in np.unique(centre_ids[outline])
    }


def reference_mask_box(mask):
    rows, cols = np.nonzero(mask)
    return int(rows.min()), int(cols.min()), int(rows.max()) + 1, int(cols.max()) + 1


def reference_grow(mask):
    """Dilation by the 4-neighbour cross: a pixel or one of its 4 neighbours is set (padded with False)."""
    padded = np.pad(mask, 1)
    return mask | padded[:-2, 1:-1] | padded[2:, 1:-1] | padded[1:-1, :-2] | padded[1:-1, 2:]


def reference_shrink(mask):
    """Erosion by the 4-neighbour cross (outside the array counts as inside)."""
    padded = np.pad(mask, 1, constant_values=True)
    return mask & padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:]


def reference_touching(a, b):
    return bool((reference_grow(a) & b).any())


def reference_detect(self, frame):
    """The simulated detector on full-frame masks at every step, the outline ring as dilation minus
    erosion; the same draws (the flips are drawn over the mask's box grown by ``|shift| + 2``)."""
    semantic = np.asarray(frame["semantic"])
    known = np.array(sorted(i for i in self.labels if i > 0))
    counts = np.bincount(np.maximum(semantic, 0).reshape(-1), minlength=known.max() + 1)[known]
    ids, counts = known[counts >= self.min_pixels], counts[counts >= self.min_pixels]
    if not len(ids):
        return []
    noise = self.noise
    episode, index = int(frame.get("episode_key", 0)), int(frame.get("frame_index", 0))
    rng = frame_rng(noise.seed, episode, index, "detector")
    depth = np.asarray(frame["depth"])
    shares = reference_occluded_shares(semantic[::2, ::2], depth[::2, ::2], list(self.labels))
    occluded = np.array([shares.get(int(i), 0.0) for i in ids])
    chance = noise.recall(counts / semantic.size) * (1.0 - noise.occlusion_miss * occluded)
    kept = detection_states(noise.seed, episode, ids, index, noise.miss_frames) < chance
    found = [[semantic == i, self.labels[int(i)], float(c)] for i, c, k in zip(ids, chance, kept) if k]
    for i in range(len(found)):
        for j in range(i + 1, len(found)):
            a, b = found[i][0], found[j][0]
            if found[i][1] != found[j][1] or not a.any() or not b.any() or not reference_touching(a, b):
                continue
            if rng.random() < noise.merge:
                found[i][0], found[j][0] = a | b, np.zeros_like(b)
    pieces = []
    for mask, label, score in (f for f in found if f[0].any()):
        if rng.random() < noise.split and mask.sum() >= 2 * self.min_pixels:
            pieces += [(half, label, score) for half in simulated_detector.split_mask(mask)]
        else:
            pieces.append((mask, label, score))
    out = []
    for mask, label, score in pieces:
        r0, c0, r1, c1 = reference_mask_box(mask)
        cell = np.sqrt((r1 - r0) * (c1 - c0)) / 28  # a cell of a 28x28 mask over the box
        radius = min(noise.boundary_px, int(np.floor(noise.boundary_cells * cell + 0.5)))
        flip = noise.boundary_flip * min(cell, 1.0)
        shift = int(rng.integers(-radius, radius + 1)) if radius else 0
        pad = abs(shift) + 2
        r0, c0, r1, c1 = max(r0 - pad, 0), max(c0 - pad, 0), r1 + pad, c1 + pad  # where the flips are drawn
        for _ in range(abs(shift)):
            mask = reference_grow(mask) if shift > 0 else reference_shrink(mask)
        if flip > 0 and mask.any():
            flips = np.zeros_like(mask)
            flips[r0:r1, c0:c1] = rng.random(flips[r0:r1, c0:c1].shape) < flip
            ring = reference_grow(mask) & ~reference_shrink(mask)
            mask = mask ^ (ring & flips)
        label = self.confused(label, rng)
        if mask.sum() < max(self.min_pixels, 1):
            continue
        box = reference_mask_box(mask)
        out.append(detections.Detection(mask, label, score, box, detections.crop_of(np.asarray(frame["rgb"]), box)))
    return out


def reference_mask_sources(semantic, mask, box=None):
    counts = np.bincount(semantic[mask].astype(np.int64))
    counts[:1] = 0
    ids = np.flatnonzero(counts >= perception.SOURCE_SHARE * max(int(mask.sum()), 1))
    return tuple(int(i) for i in sorted(ids, key=lambda i: (-counts[i], i)))


def use_references(monkeypatch):
    for module in (backprojection, perception, object_map):
        monkeypatch.setattr(module, "voxel_keys", reference_voxel_keys)
    monkeypatch.setattr(ObjectMap, "_best_match", reference_best_match)
    monkeypatch.setattr(ObjectMap, "_add_voxels", staticmethod(reference_add_voxels))
    monkeypatch.setattr(perception.Perception, "lift", reference_lift)
    monkeypatch.setattr(perception, "mask_sources", reference_mask_sources)
    monkeypatch.setattr(simulated_detector.SimulatedDetector, "detect", reference_detect)
    monkeypatch.setattr(detections.Detection, "coverage", property(lambda d: float(d.mask.mean())))


def formed(name, perception_mode, episode, observations):
    memory = MEMORIES.get(name)(perception=perception_mode)
    memory.bind_episode(episode)
    for observation in observations:
        memory.observe(observation)
    provenance = {k: dict(v) for k, v in getattr(memory, "provenance", {}).items()}
    return memory.state_dict(), memory.contents(), provenance


def assert_identical(a, b, where="state"):
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert_identical(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_identical(x, y, f"{where}[{k}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b), where
    else:
        assert a == b, where


@pytest.mark.parametrize(
    ("name", "perception_mode", "frames"),
    [("conceptgraph", "simulated", None), ("conceptgraph", "exact", 50), ("frames", "simulated", 50)],
)
def test_optimised_formation_equals_the_reference(formation, monkeypatch, name, perception_mode, frames):
    episode, observations = formation
    observations = observations[:frames]
    fast = formed(name, perception_mode, episode, observations)
    with monkeypatch.context() as patch:
        use_references(patch)
        slow = formed(name, perception_mode, episode, observations)
    if name == "conceptgraph":  # the episode exercises association: merges and several instances
        instances = fast[0]["store"]["instances"]
        assert len(instances) > 10 and sum(len(i["frames"]) for i in instances) > 2 * len(instances)
    assert_identical(fast, slow)


def test_reference_occlusion_matches_on_the_episode(formation):
    episode, observations = formation
    for observation in observations[::7]:
        semantic, depth = observation["semantic"][::2, ::2], observation["depth"][::2, ::2]
        objects = [o.semantic_id for o in load_scene(episode.traversal.scene).objects]
        reference = reference_occluded_shares(semantic, depth, objects)
        assert simulated_detector.occluded_shares(semantic, depth, objects) == reference
        full = (observation["semantic"], observation["depth"])
        assert simulated_detector.occluded_shares(*full, objects, step=2) == reference


def random_views(rng, count, embeddings):
    """``count`` views of points scattered around 6 object centres (3 labels), some overlapping, some
    an earlier view shifted by about a voxel (where the grid overlap beats the box share)."""
    centres = rng.uniform(-1.0, 1.0, (6, 3))
    out = []
    for frame in range(count):
        k = int(rng.integers(6))
        spread = rng.uniform(0.05, 0.4)
        points = centres[k] + rng.uniform(-spread, spread, (int(rng.integers(3, 300)), 3))
        if out and rng.random() < 0.6:
            points = out[int(rng.integers(len(out)))].points + np.eye(3)[int(rng.integers(3))] * rng.uniform(0.04, 0.1)
        embedding = rng.normal(size=4).astype(np.float32) if embeddings else None
        if embedding is not None:
            embedding /= np.linalg.norm(embedding)
        label = ("chair", "table", "lamp")[k % 3 if rng.random() < 0.8 else int(rng.integers(3))]
        out.append(perception.ObjectView(frame, label, 1.0, points, np.zeros((1, 1, 3), np.uint8), 0.01, embedding))
    return out


@pytest.mark.parametrize(("threshold", "embeddings"), [(1.1, False), (0.3, False), (1.2, True)])
def test_association_equals_the_reference_on_random_views(monkeypatch, threshold, embeddings):
    views = random_views(np.random.default_rng(int(threshold * 10)), 240, embeddings)

    def associate():
        objects = ObjectMap(voxel=0.05, threshold=threshold)
        ids = [objects.add(views[k : k + 3]) for k in range(0, len(views), 3)]
        return ids, objects.state()

    fast = associate()
    with monkeypatch.context() as patch:
        patch.setattr(ObjectMap, "_best_match", reference_best_match)
        patch.setattr(ObjectMap, "_add_voxels", staticmethod(reference_add_voxels))
        patch.setattr(object_map, "voxel_keys", reference_voxel_keys)
        slow = associate()
    assert len({i for frame in fast[0] for i in frame}) > 3  # several instances, several merges
    assert_identical(fast, slow)


def test_voxel_keys_equal_the_numpy_statement_at_cell_boundaries():
    rng = np.random.default_rng(3)
    points = np.concatenate(
        [rng.uniform(-30.0, 30.0, (500, 3)), np.round(rng.uniform(-3.0, 3.0, (500, 3)) / 0.05) * 0.05]
    )  # the second half on (or next to) cell boundaries
    for size in (0.05, 0.1, 0.25):
        assert np.array_equal(voxel_keys(points, size), reference_voxel_keys(points, size))


def random_frame(rng, index, size=48):
    """A frame of overlapping rectangles (ids 1..9, 3 categories), depth varying by object."""
    semantic = np.zeros((size, size), np.int32)
    depth = np.full((size, size), 6.0, np.float32)
    for instance in rng.permutation(np.arange(1, 10)):
        top, left = rng.integers(-4, size - 4, 2)
        height, width = rng.integers(2, 18, 2)
        rows, cols = slice(max(top, 0), top + height), slice(max(left, 0), left + width)
        semantic[rows, cols] = instance
        depth[rows, cols] = rng.uniform(0.5, 5.0)
    return {"rgb": np.zeros((size, size, 3), np.uint8), "depth": depth, "semantic": semantic, "frame_index": index}


def test_simulated_detector_equals_the_reference_with_every_error_process_frequent():
    labels = {i: ("chair", "sofa", "table")[i % 3] for i in range(1, 10)}
    rates = {
        "merge": 0.6,
        "split": 0.5,
        "boundary_px": 2,
        "boundary_cells": 3.0,
        "boundary_flip": 0.4,
        "confusion": 0.3,
    }
    detector = simulated_detector.SimulatedDetector(PerceptionNoise(**rates), labels, min_pixels=4)
    rng = np.random.default_rng(5)
    changed = {"merges": 0, "splits": 0}

    def counted(step, original):
        def run(found, draws):
            out = original(found, draws)
            changed[step] += abs(len(out) - len(found))  # the masks the step joined or cut
            return out

        return run

    for step in changed:
        setattr(detector, step, counted(step, getattr(detector, step)))
    for index in range(120):
        frame = random_frame(rng, index)
        fast, slow = detector.detect(frame), reference_detect(detector, frame)
        assert len(fast) == len(slow), index
        for a, b in zip(fast, slow):
            assert (a.label, a.score, a.box) == (b.label, b.score, b.box), index
            assert np.array_equal(a.mask, b.mask) and np.array_equal(a.crop, b.crop), index
    assert changed["merges"] > 10 and changed["splits"] > 10
