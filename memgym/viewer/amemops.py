"""AMemOps pages: the stereo spectrogram with events and queries, the audio, each model's answers.

A stream set stores records (which rebuild the exact audio from the source library) and
features; an eval run stores each (model, seed, checkpoint)'s prediction per query and its
config, from which its streams are rebuilt (generated, or read from its ``stream_set``). Media:

* ``<key>/audio.wav``: the stream's 16 kHz stereo audio (rendered from the record).
* ``<key>/spectrogram.png``: ``(128, T)`` pixels, one column per 25 Hz frame: the right channel's
  64 log-mel bands on top of the left's, low frequencies at the bottom of each, through the
  magma colormap between the stream's 1st and 99th feature percentiles.

Streams with symbolic attribute values (``attribute_values`` != 4) have no audio: their page
shows events and queries only.
"""

from __future__ import annotations

import collections
import threading
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.datasets.amemops.audio import StreamRenderer
from memgym.datasets.amemops.config import FRAME_RATE, GAINS_DB, PHYSICAL_VALUES, SAMPLE_RATE
from memgym.datasets.amemops.features import stream_features
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.amemops.stream_set import StreamSetConfig, load_stream_features, load_stream_set
from memgym.datasets.sources.factory import open_library
from memgym.viewer import media
from memgym.viewer.detect import Target
from memgym.viewer.site import Site, finite, resolve_dataset, run_config, run_rows, split_media_name

PAN_NAMES = ("left", "centre-left", "centre-right", "right")
RENDER_CACHE = 4


def value_labels(attribute_values: int) -> dict[str, list[str]]:
    """Names of the classes of each attribute (the last one is "none")."""
    if attribute_values == PHYSICAL_VALUES:
        return {"gain": [f"{g:+.0f} dB" for g in GAINS_DB] + ["none"], "pan": [*PAN_NAMES, "none"]}
    symbolic = [f"value {k}" for k in range(attribute_values)] + ["none"]
    return {"gain": symbolic, "pan": list(symbolic)}


class AMemOpsSite(Site):
    """An AMemOps stream set, or an eval run (its streams rebuilt from its config).

    Args:
        target: what :func:`~memgym.viewer.detect.detect` found.
        dataset: a run's ``stream_set`` folder when its recorded path does not resolve (``--dataset``).
    """

    def __init__(self, target: Target, dataset: Path | None = None) -> None:
        super().__init__(target)
        self.models: list[str] = []
        self.predictions: dict[int, dict[str, list[dict[str, Any]]]] = {}  # stream -> query -> rows
        self.stream_set: Path | None = None
        if target.kind == "dataset":
            self.stream_set = target.path
            config = load_config(StreamSetConfig, path=target.path / "config.yaml")
            self.library_config = config.stream.library
            self._streams: list[AMemOpsStream] = list(load_stream_set(target.path))
        else:
            self._load_run(target.path, dataset)
        self._lock = threading.Lock()
        self._rendered: collections.OrderedDict[int, tuple[np.ndarray, np.ndarray]] = collections.OrderedDict()

    def _load_run(self, run: Path, dataset: Path | None) -> None:
        from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
        from memgym.pipelines.amemops.evaluate import eval_streams

        config = run_config(run, AMemOpsEvalConfig)
        tag, data = config.evaluations()[0]  # the main evaluation (its tables)
        stream_set = ""
        if dataset is not None and not config.stream_set:
            raise MemgymError(f"--dataset: run {run} generated its streams from its config; it has no stream set")
        if config.stream_set:
            self.stream_set = resolve_dataset(config.stream_set, run, dataset)
            stream_set = str(self.stream_set)
        tensors, count = eval_streams(data, stream_set, config.streams)
        self._streams = [tensors.stream(i) for i in range(count)]
        self.library_config = data.stream.library
        for row in run_rows(run):
            model, seed, step, rest = row["key"].split("|", 3)
            if not rest.startswith(tag) or not rest[len(tag) :].isdigit():
                continue
            index = int(rest[len(tag) :])
            name = f"{model} (seed {seed}, step {step})"
            if name not in self.models:
                self.models.append(name)
            for query in row.get("queries", []):
                self.predictions.setdefault(index, {}).setdefault(query["query"], []).append(
                    {"model": name, "prediction": query["prediction"], "correct": query["correct"]}
                )

    def episodes(self) -> list[dict[str, Any]]:
        return [
            {
                "id": s.episode_id,
                "label": f"{s.frames / FRAME_RATE:.1f} s, {len(s.events)} events, {len(s.items)} queries",
            }
            for s in self._streams
        ]

    def has_audio(self, key: int) -> bool:
        """Whether stream ``key`` has physical gains and pans (so audio and a spectrogram)."""
        return self._streams[key].attribute_values == PHYSICAL_VALUES

    def episode(self, key: int) -> dict[str, Any]:
        stream = self._streams[self.check_key(key)]
        labels = value_labels(stream.attribute_values)
        audio = self.has_audio(key)
        queries = []
        for item in stream.items:
            a = item.annotations
            rows = self.predictions.get(key, {}).get(item.item_id, [])
            queries.append(
                {
                    "id": item.item_id,
                    "type": a.get("type"),
                    "operation": a.get("operation"),
                    "attribute": a["attribute"],
                    "identity": a.get("identity"),
                    "onset": a["onset_frame"],
                    "end": a["end_frame"],
                    "delay_s": a.get("delay_s"),
                    "answer": item.answer,
                    "answer_label": labels[a["attribute"]][item.answer],
                    "results": [r | {"label": labels[a["attribute"]][r["prediction"]]} for r in rows],
                }
            )
        return finite(
            {
                "id": stream.episode_id,
                "frames": stream.frames,
                "frame_rate": FRAME_RATE,
                "recordings": stream.recordings,
                "split": stream.split,
                "audio": f"media/{key}/audio.wav" if audio else None,
                "spectrogram": f"media/{key}/spectrogram.png" if audio else None,
                "labels": labels,
                "events": [
                    {
                        "identity": e.identity,
                        "role": e.role,
                        "onset": e.onset_frame,
                        "frames": e.frames,
                        "gain": labels["gain"][e.attribute_class("gain")] if e.role != "query" else None,
                        "pan": labels["pan"][e.attribute_class("pan")] if e.role != "query" else None,
                        "query_id": e.query_id,
                    }
                    for e in stream.events
                ],
                "queries": queries,
                "models": self.models,
            }
        )

    def media_names(self, key: int) -> list[str]:
        return [f"{key}/audio.wav", f"{key}/spectrogram.png"] if self.has_audio(self.check_key(key)) else []

    def media(self, name: str) -> bytes:
        key, file = split_media_name(name)
        if file not in ("audio.wav", "spectrogram.png") or not self.has_audio(self.check_key(key)):
            raise KeyError(name)
        audio, features = self._render(key)
        return media.wav(audio, SAMPLE_RATE) if file == "audio.wav" else media.png(spectrogram_image(features))

    def _render(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        """``(audio (2, N), features (T, 131))`` of stream ``key`` (a set's stored features)."""
        with self._lock:
            if key not in self._rendered:
                stream = self._streams[key]
                audio = StreamRenderer(open_library(self.library_config)).render(stream)
                if self.stream_set is not None:
                    features = load_stream_features(self.stream_set, stream.episode_id)["features"]
                else:
                    features = stream_features(stream, audio)
                self._rendered[key] = (audio, features)
                while len(self._rendered) > RENDER_CACHE:
                    self._rendered.popitem(last=False)
            return self._rendered[key]


def spectrogram_image(features: np.ndarray) -> np.ndarray:
    """``(128, T, 3)`` uint8 image of ``(T, 131)`` features (module docstring)."""
    mel = np.concatenate([features[:, :64], features[:, 64:128]], axis=1).T[::-1]  # right on top, low at bottom
    low, high = np.percentile(mel, [1.0, 99.0])
    return media.colormap((mel - low) / max(float(high - low), 1e-6))
