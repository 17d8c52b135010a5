"""AMemOps viewer data: the stream's audio and spectrogram, queries with each model's answers."""

from __future__ import annotations

import io
import json

import numpy as np
import soundfile
from PIL import Image

from memgym.datasets.amemops.audio import render_audio
from memgym.datasets.amemops.stream_set import load_stream_features, load_stream_set
from memgym.datasets.sources.factory import open_library
from memgym.viewer.amemops import spectrogram_image, value_labels
from memgym.viewer.sites import open_site


def test_stream_set_audio_and_spectrogram(amemops_set):
    site = open_site(amemops_set)
    stream = load_stream_set(amemops_set)[1]
    data = site.episode(1)
    assert data["id"] == stream.episode_id and len(data["queries"]) == len(stream.items)
    audio, rate = soundfile.read(io.BytesIO(site.media("1/audio.wav")), dtype="float32", always_2d=True)
    expected = render_audio(stream, open_library("synthetic_env"))
    assert rate == 16000 and audio.shape == expected.T.shape and np.abs(audio - expected.T).max() < 1e-4
    image = np.asarray(Image.open(io.BytesIO(site.media("1/spectrogram.png"))))
    features = load_stream_features(amemops_set, stream.episode_id)["features"]
    assert image.shape == (128, stream.frames, 3) and np.array_equal(image, spectrogram_image(features))
    assert [q["answer_label"] for q in data["queries"]] == [
        value_labels(4)[i.annotations["attribute"]][i.answer] for i in stream.items
    ]


def test_spectrogram_puts_the_right_channel_on_top_low_bands_at_the_bottom():
    features = np.zeros((3, 131), np.float32)
    features[:, 64] = 1.0  # the right channel's lowest band
    image = spectrogram_image(features)
    bright = image.sum(axis=(1, 2))
    assert int(np.argmax(bright)) == 63  # the last row of the top half


def test_run_queries_carry_each_models_answer(amemops_run):
    site = open_site(amemops_run)
    rows = [json.loads(line) for line in (amemops_run / "results.jsonl").read_text().splitlines()]
    data = site.episode(0)
    assert data["models"] == ["gdn2 (seed 0, step 2)"] and data["id"] == rows[0]["stream"]
    for query, row in zip(data["queries"], rows[0]["queries"], strict=True):
        (result,) = query["results"]
        assert (query["id"], result["prediction"], result["correct"]) == (
            row["query"],
            row["prediction"],
            row["correct"],
        )
        assert result["label"] == data["labels"][query["attribute"]][row["prediction"]]
