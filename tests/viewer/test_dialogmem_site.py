"""DialogMem viewer data: frames rendered as the traversal's camera saw them, items joined with results."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
from PIL import Image

from memgym.core.episode import Dataset
from memgym.core.seeding import config_hash
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.scenes.poses import yaw_from_quat
from memgym.scenes.spec import load_scene
from memgym.sensors.camera import CameraConfig, RGBDCamera
from memgym.viewer.sites import open_site


def decode(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)))


def test_frames_are_the_recorded_camera_views(dialogmem_dataset):
    site = open_site(dialogmem_dataset)
    episode = Dataset.load(dialogmem_dataset)[0]
    frame = episode.traversal.frames[7]
    camera = CameraConfig(**episode.traversal.camera)
    seen = RGBDCamera(camera).observe(
        load_scene(episode.traversal.scene), np.asarray(frame.position), yaw_from_quat(np.asarray(frame.rotation))
    )
    depth = decode(site.media("0/depth_7.png"))
    expected = np.round((1.0 - np.clip(seen["depth"] / camera.max_depth, 0, 1)) * 255.0)
    assert depth.shape == (24, 32) and np.array_equal(depth, expected.astype(np.uint8))
    semantic = decode(site.media("0/semantic_7.png"))
    ids = seen["semantic"]
    assert np.all(semantic[ids == 0] == 0) and np.all(semantic[ids > 0].max(axis=-1) > 0)
    for k in np.unique(ids):  # one colour per instance
        assert len(np.unique(semantic[ids == k], axis=0)) == 1
    rgb = decode(site.media("0/rgb_7.jpg")).astype(float)
    assert rgb.shape == (24, 32, 3) and np.abs(rgb - seen["rgb"]).mean() < 8  # JPEG
    names = site.media_names(0)
    assert len(names) == 1 + 3 * len(episode.traversal.frames) and "0/map.png" in names


def test_run_items_carry_each_memorys_answer(dialogmem_run):
    site = open_site(dialogmem_run)
    data = site.episode(0)
    assert data["memories"] == ["3dmem+controlled", "dialogue", "oracle"]
    navigation = next(i for i in data["items"] if i["task"] == "navigation")
    oracle = navigation["results"]["oracle"]
    assert oracle["prediction"] == f"OBJECT {navigation['answer']}" and oracle["scores"]["geodesic_success"] == 1.0
    assert np.allclose(oracle["predicted_position"], navigation["target"], atol=1e-3)
    assert navigation["results"]["dialogue"]["predicted_position"] is None  # NaN in the row: no location
    qa = next(i for i in data["items"] if i["task"] == "qa")
    assert qa["results"]["oracle"]["scores"]["token_f1"] == 1.0 and qa["target"] is None


def test_unknown_media_and_episodes_are_key_errors(dialogmem_dataset):
    site = open_site(dialogmem_dataset)
    frames = len(site.episode(0)["frames"])
    for name in ("0/rgb_x.jpg", f"0/rgb_{frames}.jpg", "1/map.png", "../etc/passwd", "0/../../x"):
        try:
            site.media(name)
        except KeyError:
            continue
        raise AssertionError(f"{name} was served")


def test_saved_memory_contents(dialogmem_dataset, dialogmem_run):
    episode = Dataset.load(dialogmem_dataset)[0]
    data = open_site(dialogmem_run).episode(0)
    assert set(data["contents"]) == {"3dmem+controlled", "dialogue", "oracle"}
    said = [f"{t.spec.speaker}: {t.text}" for t in episode.dialogue]
    assert [line["text"] for line in data["contents"]["dialogue"]["dialogue"]] == said
    snapshots = data["contents"]["3dmem+controlled"]
    objects = {o["id"] for o in snapshots["objects"]}
    assert snapshots["snapshots"] and all(set(s["objects"]) <= objects for s in snapshots["snapshots"])
    linked = [t for s in snapshots["snapshots"] for t in s["turns"]]
    assert linked and set(linked) <= set(said)  # the controlled linker at 100%: turns linked to snapshots
    frames = len(episode.traversal.frames)
    assert all(0 <= s["frame"] < frames for s in snapshots["snapshots"])
    assert [line["frame"] for line in snapshots["dialogue"]] == [t.spec.step for t in episode.dialogue]
    assert data["contents"]["oracle"] == {"episode_id": episode.episode_id}  # a probe keeps none of the parts


def test_saving_memory_contents_keeps_the_run_hash():
    config = DialogMemEvalConfig()
    assert config_hash(dataclasses.replace(config, save_memory=True)) == config_hash(config)
