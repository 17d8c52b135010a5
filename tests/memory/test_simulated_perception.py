"""Simulated perception: each error process does what its docstring says (statistics over many
seeded draws on synthetic masks, depths and paths), draws are deterministic, rates are validated."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from memgym.core.errors import ConfigError
from memgym.core.registry import MEMORIES
from memgym.memory.embodied.ground_truth import SceneTruth, map_errors
from memgym.memory.embodied.perception_errors import (
    PerceptionNoise,
    SensorErrors,
    depth_sigma,
    detection_states,
    frame_rng,
    similar_labels,
)
from memgym.memory.embodied.simulated_detector import SimulatedDetector, occluded_shares, split_mask, touching
from memgym.scenes.poses import quat_from_yaw, yaw_from_quat

OFF = {
    "recall_small": 1.0,
    "recall_medium": 1.0,
    "recall_large": 1.0,
    "occlusion_miss": 0.0,
    "confusion": 0.0,
    "boundary_px": 0,
    "boundary_flip": 0.0,
    "split": 0.0,
    "merge": 0.0,
    "depth_scale": 0.0,
    "drift_translation": 0.0,
    "drift_yaw": 0.0,
    "drift_turn": 0.0,
}
"""Every error process off: the simulated detector is the gt detector."""


def frame(semantic: np.ndarray, index: int, depth: np.ndarray | None = None, episode: int = 7) -> dict:
    h, w = semantic.shape
    return {
        "rgb": np.zeros((h, w, 3), np.uint8),
        "depth": np.full((h, w), 3.0, np.float32) if depth is None else depth,
        "semantic": semantic,
        "frame_index": index,
        "episode_key": episode,
    }


def square(h: int, w: int, top: int, left: int, side: int, value: int = 1, into=None) -> np.ndarray:
    out = np.zeros((h, w), np.int32) if into is None else into
    out[top : top + side, left : left + side] = value
    return out


def detector(labels: dict[int, str], **rates) -> SimulatedDetector:
    return SimulatedDetector(PerceptionNoise(**{**OFF, **rates}), labels, min_pixels=1)


def test_miss_rate_follows_the_size_bands():
    noise = {"recall_small": 0.2, "recall_medium": 0.5, "recall_large": 0.9}
    sim = detector({1: "mug"}, **noise)
    # 64x64 frame: small < 0.33% (13.5 px), large > 3% (123 px)
    for side, expected in ((3, 0.2), (8, 0.5), (20, 0.9)):
        semantic = square(64, 64, 20, 20, side)
        rate = np.mean([len(sim.detect(frame(semantic, 3, episode=i))) for i in range(250)])
        assert abs(rate - expected) < 0.08, (side, rate)


def test_occluded_outline_share_and_occlusion_misses():
    depth = np.full((40, 40), 3.0, np.float32)
    semantic = square(40, 40, 10, 10, 10, 1)
    semantic = square(40, 40, 10, 20, 6, 2, into=semantic)  # touches object 1's right side
    depth[10:16, 20:26] = 1.0  # nearer: object 2 occludes one of object 1's four sides
    shares = occluded_shares(semantic, depth, {1, 2})
    assert shares[1] == pytest.approx(6 / 36)  # 6 of the 36 outline pixels touch the nearer object
    assert shares[2] == 0.0
    assert occluded_shares(semantic, depth, {1})[1] == 0.0  # a nearer surface that is no object: background
    square(40, 40, 0, 0, 5, 3, into=semantic)  # at the image corner: truncated on two sides
    assert occluded_shares(semantic, depth, {1, 2, 3})[3] == pytest.approx(0.5, abs=0.1)
    sim = detector({1: "chair", 2: "lamp"}, occlusion_miss=1.0)
    seen = np.mean(
        [[d.label for d in sim.detect(frame(semantic, 0, depth, episode=i))].count("chair") for i in range(300)]
    )
    assert abs(seen - (1 - shares[1])) < 0.08


def test_confusion_stays_inside_the_similar_group():
    assert similar_labels("chair") == ("bench", "stool")
    semantic = square(32, 32, 8, 8, 10)
    labels = [detector({1: "chair"}, confusion=1.0).detect(frame(semantic, i))[0].label for i in range(100)]
    assert set(labels) == {"bench", "stool"}
    assert {detector({1: "piano"}, confusion=1.0).detect(frame(semantic, 0))[0].label} == {"piano"}
    some = [detector({1: "chair"}, confusion=0.3).detect(frame(semantic, i))[0].label for i in range(300)]
    assert abs(np.mean([label != "chair" for label in some]) - 0.3) < 0.07


def test_boundary_error_erodes_dilates_and_jitters_the_outline_only():
    semantic = square(40, 40, 10, 10, 12)
    coarse = {"boundary_px": 1, "boundary_cells": 28.0}  # a cell as wide as the box: the radius is boundary_px
    areas = {int(detector({1: "box"}, **coarse).detect(frame(semantic, i))[0].mask.sum()) for i in range(60)}
    assert areas == {100, 144, 14 * 14 - 4}  # eroded, exact, dilated (cross element: no corners)
    exact = semantic == 1
    for i in range(30):
        mask = detector({1: "box"}, boundary_flip=0.5, boundary_cells=28.0).detect(frame(semantic, i))[0].mask
        changed = mask ^ exact
        assert changed.any()
        inner = np.zeros_like(exact)
        inner[11:21, 11:21] = True
        outer = np.zeros_like(exact)
        outer[9:23, 9:23] = True
        assert not (changed & inner).any() and not (changed & ~outer).any()


def test_boundary_error_scales_with_the_mask_cell():
    # a 12 px box: a 28x28 mask's cell is 0.43 px, so one cell rounds to no erosion or dilation,
    # and the outline flips scale down with the cell
    semantic = square(40, 40, 10, 10, 12)
    areas = {int(detector({1: "box"}, boundary_px=1).detect(frame(semantic, i))[0].mask.sum()) for i in range(60)}
    assert areas == {144}
    big = square(128, 128, 20, 20, 42)  # a 42 px box: 1.5 px cells, rounded to 2, capped at boundary_px
    areas = {int(detector({1: "box"}, boundary_px=1).detect(frame(big, i))[0].mask.sum()) for i in range(60)}
    assert areas == {40 * 40, 42 * 42, 44 * 44 - 4}
    flipped = [
        (detector({1: "box"}, boundary_flip=0.5).detect(frame(semantic, i))[0].mask ^ (semantic == 1)).sum()
        for i in range(60)
    ]
    outline = 4 * 12 + 4 * 14  # inner and outer ring
    assert abs(np.mean(flipped) / outline - 0.5 * 12 / 28) < 0.05


def test_detection_states_are_uniform_and_last_several_frames():
    keys = np.arange(400)
    for frames in (0.0, 4.0):
        states = np.array([detection_states(3, 11, keys, t, frames) for t in range(60)])  # (frames, keys)
        assert abs(states.mean() - 0.5) < 0.02 and abs((states < 0.3).mean() - 0.3) < 0.02
        lag1 = np.corrcoef(states[:-1].ravel(), states[1:].ravel())[0, 1]
        runs = miss_runs(states < 0.8)  # detected with chance 0.8 in every frame
        if frames == 0:
            assert abs(lag1) < 0.03 and abs(np.mean(runs) - 1 / 0.8) < 0.1
        else:  # normal-score correlation exp(-1/4) = 0.78; a miss lasts about twice as long
            assert 0.6 < lag1 < 0.85 and np.mean(runs) > 2.0
    first = detection_states(3, 11, keys, 17, 4.0)
    assert np.array_equal(first, detection_states(3, 11, keys, 17, 4.0))  # a function of the frame alone
    assert not np.array_equal(first, detection_states(3, 12, keys, 17, 4.0))
    assert np.array_equal(detection_states(3, 11, keys[5:9], 17, 4.0), first[5:9])


def miss_runs(detected: np.ndarray) -> list[int]:
    """Lengths of the runs of misses in ``detected`` ``(frames, keys)`` (each key's column)."""
    runs = []
    for column in detected.T:
        length = 0
        for hit in column:
            if not hit:
                length += 1
            elif length:
                runs.append(length)
                length = 0
    return runs


def test_split_and_merge_change_the_instance_count():
    semantic = square(40, 40, 10, 10, 8, 1)
    semantic = square(40, 40, 10, 18, 8, 2, into=semantic)  # touching, same category
    apart = square(40, 40, 30, 30, 6, 3, into=semantic.copy())
    merged = detector({1: "chair", 2: "chair"}, merge=1.0).detect(frame(semantic, 0))
    assert len(merged) == 1 and np.array_equal(merged[0].mask, semantic > 0)
    assert len(detector({1: "chair", 2: "chair", 3: "chair"}, merge=1.0).detect(frame(apart, 0))) == 2
    assert len(detector({1: "chair", 2: "sofa"}, merge=1.0).detect(frame(semantic, 0))) == 2
    halves = detector({1: "chair"}, split=1.0).detect(frame(square(40, 40, 5, 5, 10), 0))
    assert len(halves) == 2 and {d.label for d in halves} == {"chair"}
    assert not (halves[0].mask & halves[1].mask).any() and (halves[0].mask | halves[1].mask).sum() == 100
    first, second = split_mask(square(20, 20, 2, 2, 4) > 0)
    assert first.sum() == second.sum() == 8 and touching(first, second) and not (first & second).any()


def test_depth_noise_matches_the_axial_model():
    sensor = SensorErrors(PerceptionNoise(), max_depth=10.0)
    for z in (1.0, 3.0, 5.0):
        values = np.concatenate([sensor.noisy_depth(np.full(500, z), i) for i in range(20)])
        assert abs(values.mean() - z) < 4 * depth_sigma(z) / np.sqrt(len(values))
        assert values.std() == pytest.approx(depth_sigma(z), rel=0.08)
    assert depth_sigma(5.0) == pytest.approx(0.0012 + 0.0019 * 4.6**2)
    assert np.array_equal(SensorErrors(PerceptionNoise(**OFF), 10.0).noisy_depth(np.full(3, 2.0), 0), np.full(3, 2.0))


def drifted(noise: PerceptionNoise, episode: int, steps: int = 80, step: float = 0.25) -> np.ndarray:
    """``(steps,)`` horizontal position error along a straight path."""
    sensor = SensorErrors(noise, 10.0)
    sensor.episode = episode
    errors = []
    for k in range(steps):
        true = np.array([0.0, 0.0, -step * k])
        position = sensor.apply({"position": true, "rotation": quat_from_yaw(0.0), "depth": None}, k)["position"]
        errors.append(np.hypot(*(position - true)[[0, 2]]))
    return np.array(errors)


def test_drift_grows_with_distance_travelled():
    runs = np.array([drifted(PerceptionNoise(), e) for e in range(30)])
    rms = np.sqrt((runs**2).mean(axis=0))
    assert rms[0] == 0.0
    assert rms[20] < rms[40] < rms[79]  # 5 m, 10 m, 20 m
    assert 0.005 * 20 < rms[79] < 0.05 * 20  # 0.5-5 % of the distance after 20 m
    assert not drifted(PerceptionNoise(**OFF), 3).any()
    sensor = SensorErrors(PerceptionNoise(**{**OFF, "drift_turn": 0.1}), 10.0)
    sensor.apply({"position": np.zeros(3), "rotation": quat_from_yaw(0.0)}, 0)
    turned = sensor.apply({"position": np.zeros(3), "rotation": quat_from_yaw(1.0)}, 1)
    assert yaw_from_quat(turned["rotation"]) != pytest.approx(1.0, abs=1e-4)


def test_draws_are_deterministic_and_independent_of_order():
    assert frame_rng(0, 5, 3, "detector").random() == frame_rng(0, 5, 3, "detector").random()
    assert frame_rng(0, 5, 3, "detector").random() != frame_rng(0, 6, 3, "detector").random()
    semantic = square(48, 48, 4, 4, 12, 1)
    semantic = square(48, 48, 4, 16, 12, 2, into=semantic)
    sim = SimulatedDetector(PerceptionNoise(merge=0.5, split=0.5), {1: "chair", 2: "chair"})

    def masks(order):
        out = {i: sim.detect(frame(semantic, i)) for i in order}
        return {i: [(d.label, d.mask.tobytes()) for d in out[i]] for i in sorted(out)}

    assert masks(range(12)) == masks(reversed(range(12)))
    assert drifted(PerceptionNoise(), 4).tolist() == drifted(PerceptionNoise(), 4).tolist()


def test_rates_out_of_range_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match="confusion"):
        PerceptionNoise(confusion=1.5)
    with pytest.raises(ConfigError, match="small_area.*large_area"):
        PerceptionNoise(small_area=0.5, large_area=0.1)
    with pytest.raises(ConfigError, match="noise.*recall_small|recall_small"):
        MEMORIES.get("conceptgraph")(noise={"recall_small": -0.1})
    with pytest.raises(ConfigError, match="perception"):
        MEMORIES.get("conceptgraph")(perception="perfect")


def test_cli_rejects_a_rate_out_of_range(tmp_path, capsys):
    from memgym.cli import main

    assert main(["eval", "dialogmem", "visual.noise.split=2", f"dataset={tmp_path / 'none.jsonl'}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error:") and "visual.noise.split" in err[0]


def test_state_round_trip_continues_the_drift(box_views):
    from tests.support.box_scene import TABLE_LABELS, TABLE_MEMORY_OPTIONS

    options = {**TABLE_MEMORY_OPTIONS, "perception": "simulated"}

    def build(upto=None):
        memory = MEMORIES.get("conceptgraph")(**options)
        memory.detector.set_labels(TABLE_LABELS)
        for view in box_views[:upto]:
            memory.observe(view)
        return memory

    whole, half = build(), build(4)
    restored = MEMORIES.get("conceptgraph")(**options)
    restored.load_state_dict(pickle.loads(pickle.dumps(half.state_dict())))
    for view in box_views[4:]:
        restored.observe(view)
    assert [i.location for i in restored.objects.instances] == [i.location for i in whole.objects.instances]


class _Instance:
    def __init__(self, id, label, views):
        self.id, self.label, self.votes = id, label, {label: views}


def test_map_errors_count_merges_splits_and_labels():
    truth = SceneTruth(
        {"chair_1": "chair", "chair_2": "chair", "sofa_3": "sofa"},
        {},
        (),
        {1: "chair_1", 2: "chair_2", 3: "sofa_3"},
    )
    instances = [_Instance("a", "chair", 4), _Instance("b", "chair", 4), _Instance("c", "stool", 2)]
    provenance = {"a": {1: 4, 2: 2}, "b": {1: 3}, "c": {3: 2}}
    assert map_errors(truth, instances, provenance) == {
        "instances": 3,
        "objects": 2,
        "merges": 1,  # a shows chair_1 and chair_2
        "splits": 1,  # chair_1 is the main source of a and b
        "mislabelled": 1,  # c is a sofa labelled stool
    }
