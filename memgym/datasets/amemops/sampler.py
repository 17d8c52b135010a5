"""Batched training sampler: AMemOps streams as torch tensors, in worker processes, by seed.

Stream ``i`` of a sampler is ``StreamGenerator(config).generate(seed, i)`` — a pure function of
(config, library, seed, i) — so batches are identical whatever the number of workers, and a
training run resumes at step ``s`` by starting at index ``s * batch_size``.

Batch dict (``B`` streams of ``T`` frames, ``Q`` queries in the whole batch)::

    features      (B, T, 131) float32  log-mel L (0-63), R (64-127), query / gain-request /
                                       pan-request flags (128-130); see features.py
    gain_labels   (B, T) int64         gain class 0-3 or 4 (none) at the end frame of each gain
                                       query, -100 elsewhere
    pan_labels    (B, T) int64         same for pan queries
    index         (B,) int64           stream index within the sampler
    query_stream  (Q,) int64           row of the batch the query belongs to
    query_frame   (Q,) int64           frame of the label (query end)
    query_head    (Q,) int64           0 = gain query, 1 = pan query
    query_answer  (Q,) int64           answer class (0-3, 4 = none)
    query_type    (Q,) int64           index into QUERY_TYPES (initial, update, interference, absent)
    queries       list[list[dict]]     per stream, per query: item_id, type, operation, attribute,
                                       identity, end_frame, delay_s, answer
    stream_ids    list[str]            episode ids

Usage::

    loader = make_loader(StreamConfig(), batch_size=40, seed=0, num_workers=2)
    for step, batch in enumerate(loader):
        logits_gain, logits_pan = model(batch["features"])            # (B, T, 5) each
        loss = ce(logits_gain.flatten(0, 1), batch["gain_labels"].flatten()) + ...

The optional on-disk cache (``cache_dir``) stores each stream's features, labels and record in
``cache_dir/amemops-<config hash>/<index>.npz``; a second epoch or run reads them back. The hash
covers every generator setting (:meth:`StreamConfig.key`, the value count included).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from memgym.core.records import from_json
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.audio import StreamRenderer
from memgym.datasets.amemops.config import QUERY_TYPES, StreamConfig
from memgym.datasets.amemops.features import stream_features, stream_labels
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.sources.factory import open_library
from memgym.datasets.sources.library import SourceLibrary
from memgym.datasets.sources.similarity import SimilarityPools

QUERY_FIELDS = ("type", "operation", "attribute", "identity", "end_frame", "delay_s")


class StreamDataset(Dataset):
    """Map-style dataset: index ``i`` -> one featurised stream (see the module docstring).

    Args:
        config: generator settings (``config.library`` names the sound library).
        seed: run seed.
        length: number of indices (streams are generated on demand; any large number works).
        start: index of the first stream (resume a run at ``step * batch_size``).
        cache_dir: optional on-disk cache of featurised streams.
        library: an already opened library (else opened from ``config.library`` per process).
    Raises:
        ConfigError: ``config.attribute_values`` is not 4 (audio needs the physical gains/pans).
    """

    def __init__(
        self,
        config: StreamConfig,
        *,
        seed: int = 0,
        length: int = 1_000_000,
        start: int = 0,
        cache_dir: str | Path | None = None,
        library: SourceLibrary | None = None,
    ) -> None:
        config.require_audio()
        self.config = config
        self.seed = seed
        self.length = length
        self.start = start
        self._library = library
        generator = self._generator()  # computes similarity pools once, in this process
        self._pools: SimilarityPools | None = generator.pools
        self.digest = config_hash({"config": config.key(), "library": generator.library.fingerprint()})
        self.cache = Path(cache_dir) / f"amemops-{self.digest}" if cache_dir else None
        self._state: tuple[StreamGenerator, StreamRenderer] | None = (generator, StreamRenderer(generator.library))

    def __getstate__(self) -> dict[str, Any]:  # workers rebuild generator and renderer caches
        state = dict(self.__dict__)
        state["_state"] = None
        return state

    def _generator(self) -> StreamGenerator:
        library = self._library if self._library is not None else open_library(self.config.library)
        self._library = library
        return StreamGenerator(self.config, library, getattr(self, "_pools", None))

    def __len__(self) -> int:
        return self.length

    def stream(self, i: int) -> AMemOpsStream:
        """The record of stream ``i``."""
        return self._tools()[0].generate(self.seed, self.start + i)

    def _tools(self) -> tuple[StreamGenerator, StreamRenderer]:
        if self._state is None:
            generator = self._generator()
            self._state = (generator, StreamRenderer(generator.library))
        return self._state

    def __getitem__(self, i: int) -> dict[str, Any]:
        index = self.start + int(i)
        path = self.cache / f"{index:09d}.npz" if self.cache is not None else None
        if path is not None and path.is_file():
            with np.load(path) as data:
                features, gain, pan = data["features"], data["gain"], data["pan"]
                stream = from_json(str(data["record"]))
        else:
            generator, renderer = self._tools()
            stream = generator.generate(self.seed, index)
            features = stream_features(stream, renderer.render(stream))
            gain, pan = stream_labels(stream)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
                np.savez(tmp, features=features, gain=gain, pan=pan, record=np.array(stream.to_json()))
                tmp.replace(path)
        return {
            "features": torch.from_numpy(np.ascontiguousarray(features)),
            "gain_labels": torch.from_numpy(gain),
            "pan_labels": torch.from_numpy(pan),
            "index": index,
            "stream_id": stream.episode_id,
            "queries": query_metadata(stream),
        }


def query_metadata(stream: AMemOpsStream) -> list[dict[str, Any]]:
    """Per-query metadata dicts of ``stream`` (item_id, answer and :data:`QUERY_FIELDS`)."""
    return [
        {"item_id": item.item_id, "answer": int(item.answer), **{k: item.annotations[k] for k in QUERY_FIELDS}}
        for item in stream.items
    ]


def collate_streams(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Stack :class:`StreamDataset` samples into the batch dict of the module docstring."""
    rows = [(b, q) for b, sample in enumerate(samples) for q in sample["queries"]]
    return {
        "features": torch.stack([s["features"] for s in samples]),
        "gain_labels": torch.stack([s["gain_labels"] for s in samples]),
        "pan_labels": torch.stack([s["pan_labels"] for s in samples]),
        "index": torch.tensor([s["index"] for s in samples], dtype=torch.int64),
        "query_stream": torch.tensor([b for b, _ in rows], dtype=torch.int64),
        "query_frame": torch.tensor([q["end_frame"] for _, q in rows], dtype=torch.int64),
        "query_head": torch.tensor([int(q["attribute"] == "pan") for _, q in rows], dtype=torch.int64),
        "query_answer": torch.tensor([q["answer"] for _, q in rows], dtype=torch.int64),
        "query_type": torch.tensor(
            [QUERY_TYPES.index(q["type"]) if q["type"] in QUERY_TYPES else -1 for _, q in rows], dtype=torch.int64
        ),
        "queries": [s["queries"] for s in samples],
        "stream_ids": [s["stream_id"] for s in samples],
    }


def _single_thread_worker(_: int) -> None:
    torch.set_num_threads(1)


def make_loader(
    config: StreamConfig,
    *,
    batch_size: int = 40,
    seed: int = 0,
    steps: int = 1_000_000,
    start_step: int = 0,
    num_workers: int = 0,
    cache_dir: str | Path | None = None,
    library: SourceLibrary | None = None,
    prefetch_factor: int = 2,
) -> DataLoader:
    """A ``DataLoader`` yielding ``steps`` batches of ``batch_size`` streams, in index order.

    Batch ``s`` holds streams ``(start_step + s) * batch_size ...``: deterministic for a seed and
    independent of ``num_workers``. Workers run single-threaded torch.
    """
    dataset = StreamDataset(
        config,
        seed=seed,
        length=steps * batch_size,
        start=start_step * batch_size,
        cache_dir=cache_dir,
        library=library,
    )
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=collate_streams,
        worker_init_fn=_single_thread_worker if num_workers else None,
        prefetch_factor=prefetch_factor if num_workers else None,
        persistent_workers=num_workers > 0,
    )
