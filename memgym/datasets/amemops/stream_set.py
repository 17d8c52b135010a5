"""Stream sets on disk: a JSONL manifest of stream records plus per-stream feature files.

Layout of a stream-set folder::

    config.yaml                 the StreamSetConfig that built it
    manifest.jsonl              one AMemOpsStream record per line (rebuilds the exact audio)
    features/<episode_id>.npz   features (T, 131) float32, gain (T,) int64, pan (T,) int64

Writing is resumable: the records are built before anything is written, then the config and the
manifest are written (atomically); feature files that already exist are skipped, each written
atomically, so an interrupted ``memgym generate amemops`` picks up where it stopped. A folder that
holds a set of another config (or other files) is refused before any work, so features of two
configs are never mixed; a failed build leaves an existing set as it was. With ``executor=ray``
the features are computed on Ray workers (:mod:`memgym.core.executors`) and written here.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import Literal

import numpy as np
from tqdm import tqdm

from memgym.core.config import load_config, yaml_text
from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError, MemgymError, RecordError
from memgym.core.executors import executor_field, ray_address_field, run_ordered, worker_gpus_field, workers_field
from memgym.core.outputs import prepare_output_folder, write_text_atomic
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.audio import StreamRenderer
from memgym.datasets.amemops.config import RECORDING_CONTROLS, StreamConfig
from memgym.datasets.amemops.features import stream_features, stream_labels
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.amemops.templates import N_TEMPLATES, HistoryCondition, build_history_stream
from memgym.datasets.sources.library import SourceLibrary


@dataclasses.dataclass(frozen=True)
class HistorySetConfig:
    """Which matched-history conditions a ``kind=history`` set crosses (all paired by template)."""

    templates: int = dataclasses.field(default=N_TEMPLATES, metadata={"help": "templates 0..N-1 (max 192)"})
    operations: tuple[str, ...] = dataclasses.field(
        default=("no_update", "updated", "retained"), metadata={"help": "no_update / updated / retained"}
    )
    delays: tuple[float, ...] = dataclasses.field(default=(20.0, 120.0), metadata={"help": "retrieval delays (s)"})
    loads: tuple[str, ...] = dataclasses.field(
        default=("low", "high"), metadata={"help": "low (4) / high (16) distractors"}
    )
    earlier: tuple[str, ...] = dataclasses.field(
        default=("target",), metadata={"help": "target / omitted / distractor (earlier-event controls)"}
    )
    recordings: tuple[str, ...] = dataclasses.field(default=("original",), metadata={"help": "recording controls"})


@dataclasses.dataclass(frozen=True)
class StreamSetConfig:
    """What ``memgym generate amemops`` builds and ``memgym render amemops`` shows."""

    stream: StreamConfig = dataclasses.field(default_factory=StreamConfig, metadata={"help": "generator settings"})
    kind: Literal["streams", "history"] = dataclasses.field(
        default="streams", metadata={"help": "random streams or matched-history templates"}
    )
    count: int = dataclasses.field(default=48, metadata={"help": "streams in a kind=streams set", "min": 1})
    seed: int = dataclasses.field(default=0, metadata={"help": "run seed"})
    history: HistorySetConfig = dataclasses.field(default_factory=HistorySetConfig, metadata={"help": "history set"})
    features: bool = dataclasses.field(default=True, metadata={"help": "also write features/labels per stream"})
    index: int = dataclasses.field(default=0, metadata={"help": "render: which stream of the set"})
    manifest: str = dataclasses.field(default="", metadata={"help": "render: a stream-set folder or manifest.jsonl"})
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()
    worker_gpus: float = worker_gpus_field()

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ConfigError(f"count must be >= 1, got {self.count}")
        if not 1 <= self.history.templates <= N_TEMPLATES:
            raise ConfigError(f"history.templates must be 1-{N_TEMPLATES}, got {self.history.templates}")
        bad = [r for r in self.history.recordings if r not in RECORDING_CONTROLS]
        if bad:
            raise ConfigError(f"history.recordings {bad} not in {list(RECORDING_CONTROLS)}")
        if self.features or self.kind == "history":  # audio features and matched histories use physical values
            self.stream.require_audio("stream")


def build_records(config: StreamSetConfig, library: SourceLibrary) -> list[AMemOpsStream]:
    """The stream records of a set (cheap: no audio)."""
    if config.kind == "streams":
        generator = StreamGenerator(config.stream, library)
        return [generator.generate(config.seed, i) for i in range(config.count)]
    h = config.history
    return [
        build_history_stream(
            t,
            library,
            HistoryCondition(op, delay, load, earlier, rec),  # type: ignore[arg-type]
            split=config.stream.split,
            seed=config.seed,
        )
        for t in range(h.templates)
        for op in h.operations
        for delay in h.delays
        for load in h.loads
        for earlier in h.earlier
        for rec in h.recordings
    ]


def write_stream_set(
    config: StreamSetConfig, library: SourceLibrary, folder: str | Path, *, progress: bool = True
) -> Path:
    """Build the set into ``folder`` (see the module docstring); returns the manifest path."""
    folder = prepare_output_folder(folder, digest=config_hash(config), marker="config.yaml", read_digest=_set_digest)
    records = build_records(config, library)
    write_text_atomic(folder / "config.yaml", yaml_text(config))
    manifest = folder / "manifest.jsonl"
    Dataset(records).save(manifest)
    if config.features:
        (folder / "features").mkdir(exist_ok=True)
        pending = [(s.episode_id, s) for s in records if not (folder / "features" / f"{s.episode_id}.npz").is_file()]
        rendered = run_ordered(config, functools.partial(FeatureRenderer, library), pending)
        for episode_id, arrays in tqdm(rendered, total=len(pending), desc="amemops streams", disable=not progress):
            path = folder / "features" / f"{episode_id}.npz"
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
            np.savez(tmp, **arrays)
            tmp.replace(path)
    return manifest


class FeatureRenderer:
    """A stream's audio features and labels: ``{"features": (T, 131) float32, "gain": (T,) int64,
    "pan": (T,) int64}`` (rendered from ``library``)."""

    def __init__(self, library: SourceLibrary) -> None:
        self.renderer = StreamRenderer(library)

    def __call__(self, stream: AMemOpsStream) -> dict[str, np.ndarray]:
        gain, pan = stream_labels(stream)
        return {"features": stream_features(stream, self.renderer.render(stream)), "gain": gain, "pan": pan}


def _set_digest(path: Path) -> str | None:
    """Config hash of the set whose ``config.yaml`` is ``path`` (None when it is not one)."""
    try:
        return config_hash(load_config(StreamSetConfig, path=path))
    except MemgymError:
        return None


def load_stream_set(path: str | Path) -> Dataset:
    """The streams of a set folder (or of a ``manifest.jsonl`` path)."""
    path = Path(path)
    if not path.exists():
        raise RecordError(f"stream set {path} does not exist; build one with 'memgym generate amemops'")
    manifest = path / "manifest.jsonl" if path.is_dir() else path
    if not manifest.is_file():
        raise RecordError(f"{path} is not an AMemOps stream set (no manifest.jsonl)")
    dataset = Dataset.load(manifest)
    if not len(dataset):
        raise RecordError(f"{manifest} holds no streams")
    for episode in dataset:
        if not isinstance(episode, AMemOpsStream):
            raise RecordError(f"{manifest}: expected amemops.stream records, found {type(episode).__name__}")
    return dataset


def load_stream_features(folder: str | Path, episode_id: str) -> dict[str, np.ndarray]:
    """``{"features", "gain", "pan"}`` arrays saved for one stream of a set folder."""
    path = Path(folder) / "features" / f"{episode_id}.npz"
    if not path.is_file():
        raise RecordError(f"{path} does not exist (was the set generated with features=true?)")
    with np.load(path) as data:
        return {k: data[k] for k in ("features", "gain", "pan")}
