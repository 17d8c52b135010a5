"""CLIP crop/text embeddings (a tiny random CLIP) and the labels-only fallback."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from memgym.core.errors import ConfigError
from memgym.core.registry import MEMORIES
from memgym.memory.embodied import encoders
from memgym.memory.embodied.encoders import ImageTextEncoder, build_encoder
from tests.support.box_scene import TABLE_LABELS
from tests.support.tiny_hf_models import build_tiny_clip


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory):
    return str(build_tiny_clip(tmp_path_factory.mktemp("clip")))


def test_unit_embeddings_of_images_and_texts(tiny_clip):
    encoder = ImageTextEncoder(tiny_clip)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (20, 30, 3), dtype=np.uint8), rng.integers(0, 255, (40, 12, 3), dtype=np.uint8)]
    embedded = encoder.encode_images(images)
    assert embedded.shape == (2, 16) and embedded.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(embedded, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(encoder.encode_images(images[:1])[0], embedded[0], rtol=1e-5, atol=1e-6)
    texts = encoder.encode_texts(["a mug", "a crate"])
    assert texts.shape == (2, 16)
    np.testing.assert_allclose(np.linalg.norm(texts, axis=1), 1.0, rtol=1e-5)


def test_no_model_means_labels_only_said_once(caplog, monkeypatch):
    monkeypatch.setattr(encoders, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="memgym.memory.embodied.encoders"):
        assert build_encoder(None) is None
        assert build_encoder("") is None
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "labels only" in caplog.records[0].message


def test_an_unloadable_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="CLIP"):
        ImageTextEncoder(str(tmp_path))


def test_memories_keep_crop_embeddings(tiny_clip, box_views):
    memory = MEMORIES.get("conceptgraph")(encoder_model=tiny_clip, hfov=80.0, stride=2)
    memory.detector.set_labels(TABLE_LABELS)
    for view in box_views:
        memory.observe(view)
    assert memory.objects.instances
    for instance in memory.objects.instances:
        assert instance.embedding is not None and instance.embedding.shape == (16,)
    clone = MEMORIES.get("conceptgraph")(encoder_model=tiny_clip, hfov=80.0, stride=2)
    clone.load_state_dict(memory.state_dict())
    for a, b in zip(clone.objects.instances, memory.objects.instances):
        np.testing.assert_array_equal(a.embedding, b.embedding)
