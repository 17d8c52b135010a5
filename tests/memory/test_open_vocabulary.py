"""The zero-shot detector: depth masks, NMS, and a tiny random OWLv2 end to end."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.registry import MEMORIES
from memgym.memory.embodied.open_vocabulary import ZeroShotDetector, depth_mask, non_maximum_suppression
from memgym.pipelines.structured_reasoner import StructuredReasoner
from tests.support.tiny_hf_models import build_tiny_owlv2


@pytest.fixture(scope="session")
def tiny_owlv2(tmp_path_factory):
    return str(build_tiny_owlv2(tmp_path_factory.mktemp("owlv2")))


def walled(view):
    """The view without its semantic image, with a wall 6 m away wherever nothing was hit (a random
    detector's boxes land anywhere; every box then has depth to make a mask from)."""
    depth = np.where(view["depth"] > 0, view["depth"], np.float32(6.0))
    return {**{k: v for k, v in view.items() if k != "semantic"}, "depth": depth}


def test_depth_mask_keeps_the_object_not_the_wall_behind():
    depth = np.full((20, 30), 5.0, np.float32)
    depth[5:15, 10:20] = 2.0
    depth[6, 11] = 0.0  # a hole: no depth, not in the mask
    mask = depth_mask(depth, np.array([8.0, 3.0, 22.0, 17.0]), 0.3)
    expected = depth == 2.0
    assert np.array_equal(mask, expected)
    assert not depth_mask(np.zeros((4, 4), np.float32), np.array([0.0, 0.0, 4.0, 4.0]), 0.3).any()


def test_non_maximum_suppression_keeps_the_best_of_overlapping_boxes():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [0, 0, 10, 10]], float)
    scores = np.array([0.5, 0.9, 0.4, 0.5])
    assert non_maximum_suppression(boxes, scores, 0.5).tolist() == [1, 2]
    assert non_maximum_suppression(boxes, scores, 1.0).tolist() == [1, 0, 3, 2]


def test_tiny_owlv2_detects_vocabulary_labels_with_depth_masks(tiny_owlv2, box_views):
    detector = ZeroShotDetector(tiny_owlv2, ("crate", "mug", "table"), threshold=0.0, depth_tolerance=0.5)
    frame = walled(box_views[0])
    detections = detector.detect(frame)
    assert detections and len(detections) <= detector.max_detections
    for detection in detections:
        assert detection.label in ("crate", "mug", "table") and 0.0 <= detection.score <= 1.0
        assert detection.mask.shape == (96, 128) and detection.mask.sum() >= detector.min_pixels
        r0, c0, r1, c1 = detection.box
        assert detection.crop.shape == (r1 - r0, c1 - c0, 3)
        depths = frame["depth"][detection.mask]
        assert depths.min() > 0 and depths.max() - depths.min() <= 2 * detector.depth_tolerance + 1e-6
    again = detector.detect(frame)
    assert [(d.label, d.box, d.score) for d in again] == [(d.label, d.box, d.score) for d in detections]


def test_memories_run_on_the_zero_shot_detector(tiny_owlv2, box_views):
    memory = MEMORIES.get("conceptgraph")(detector=tiny_owlv2, vocabulary=("crate", "mug"), hfov=80.0)
    for view in box_views:
        memory.observe(walled(view))
    assert memory.objects.instances and {i.label for i in memory.objects.instances} <= {"crate", "mug"}
    memory.bind_reasoner(StructuredReasoner())
    evidence = memory.retrieve("Go to the mug.")
    assert all(e.label == "mug" for e in evidence.entries)
    with pytest.raises(MemgymError, match="vocabulary"):
        ZeroShotDetector(tiny_owlv2).detect(box_views[0])


def test_an_unloadable_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="zero-shot object detection"):
        ZeroShotDetector(str(tmp_path))


def test_bind_episode_queries_the_scene_categories_unless_a_vocabulary_is_set(tiny_owlv2):
    from types import SimpleNamespace

    from memgym.scenes.spec import load_scene
    from tests.support.dialogmem_fixtures import TRAVERSAL

    episode = SimpleNamespace(traversal=TRAVERSAL)
    categories = tuple(sorted({o.category for o in load_scene(TRAVERSAL.scene).objects}))
    memory = MEMORIES.get("3dmem")(detector=tiny_owlv2)
    assert memory.detector.vocabulary == () and "semantic" not in memory.reads
    memory.bind_episode(episode)
    assert memory.detector.vocabulary == categories
    configured = MEMORIES.get("3dmem")(detector=tiny_owlv2, vocabulary=("mug",))
    configured.bind_episode(episode)
    assert configured.detector.vocabulary == ("mug",)
