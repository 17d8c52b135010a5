"""AMemOps streams as model inputs: generated or saved streams -> tensors, and training batches."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np
import torch

from memgym.core.errors import ConfigError
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.pipelines.amemops.configs import DataConfig


@functools.lru_cache(maxsize=4)
def _open_library(config):
    """Libraries are immutable: one per config and process (train, eval and quickstart share it)."""
    from memgym.datasets.sources.factory import open_library

    return open_library(config)


# ----- streams -> tensors ----------------------------------------------------------------------
class StreamTensors:
    """Generates streams and turns them into model inputs and labels (audio or symbolic).

    Args:
        data: stream settings; ``data.stream.split`` selects the library split.
    Raises:
        ConfigError: audio inputs with ``data.stream.attribute_values`` other than 4.
    """

    def __init__(self, data: DataConfig) -> None:
        from memgym.datasets.amemops.generator import StreamGenerator

        if data.inputs == "audio":
            data.stream.require_audio("data.stream")
        self.data = data
        self.library = _open_library(data.stream.library)
        self.generator = StreamGenerator(data.stream, self.library)
        self.identities = self.library.identities()  # every split: one symbolic vocabulary
        self._renderer = None

    @property
    def input_dim(self) -> int:
        from memgym.datasets.amemops.features import N_FEATURES
        from memgym.datasets.amemops.symbolic import symbolic_input_dim

        if self.data.inputs == "symbolic":
            return symbolic_input_dim(len(self.identities), self.data.stream.attribute_values)
        return N_FEATURES

    @property
    def n_classes(self) -> int:
        """Classes per head: ``data.stream.attribute_values`` values plus none (the last class)."""
        return self.data.stream.attribute_values + 1

    def stream(self, index: int) -> AMemOpsStream:
        return self.generator.generate(self.data.stream_seed, index)

    @functools.lru_cache(maxsize=512)  # noqa: B019  (instances are cached per data config; bounded)
    def arrays(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(features (T, D) float32, gain labels (T,), pan labels (T,))`` of stream ``index``."""
        stream = self.stream(index)
        if self.data.inputs == "symbolic":
            from memgym.datasets.amemops.symbolic import symbolic_stream

            return symbolic_stream(stream, self.identities)
        from memgym.datasets.amemops.audio import StreamRenderer
        from memgym.datasets.amemops.features import stream_features, stream_labels

        if self._renderer is None:
            self._renderer = StreamRenderer(self.library)
        gain, pan = stream_labels(stream)
        return stream_features(stream, self._renderer.render(stream)), gain, pan


class StreamSetTensors:
    """The streams of a saved stream set (``memgym generate amemops``), same interface as
    :class:`StreamTensors`: audio features are read from the set's ``features/`` files, symbolic
    inputs are rendered from the records."""

    def __init__(self, folder: str | Path, data: DataConfig) -> None:
        from memgym.datasets.amemops.stream_set import load_stream_set

        self.folder = Path(folder)
        self.data = data
        self.streams = list(load_stream_set(self.folder))
        mismatched = [s for s in self.streams if s.attribute_values != data.stream.attribute_values]
        if mismatched:
            raise ConfigError(
                f"stream_set {self.folder}: stream {mismatched[0].episode_id} has {mismatched[0].attribute_values} "
                f"attribute values but data.stream.attribute_values={data.stream.attribute_values}"
            )
        self.identities = _open_library(data.stream.library).identities() if data.inputs == "symbolic" else []

    def __len__(self) -> int:
        return len(self.streams)

    input_dim = StreamTensors.input_dim
    n_classes = StreamTensors.n_classes

    def stream(self, index: int) -> AMemOpsStream:
        return self.streams[index]

    @functools.cached_property
    def library(self):
        """The library the set's streams were generated from (its ``config.yaml``; sets without one:
        ``data.stream.library``), opened on first use."""
        from memgym.core.config import load_config
        from memgym.datasets.amemops.stream_set import StreamSetConfig

        saved = self.folder / "config.yaml"
        if not saved.exists():
            return _open_library(self.data.stream.library)
        return _open_library(load_config(StreamSetConfig, path=saved).stream.library)

    def arrays(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        stream = self.streams[index]
        if self.data.inputs == "symbolic":
            from memgym.datasets.amemops.symbolic import symbolic_stream

            return symbolic_stream(stream, self.identities)
        from memgym.datasets.amemops.stream_set import load_stream_features

        saved = load_stream_features(self.folder, stream.episode_id)
        return saved["features"], saved["gain"], saved["pan"]


@functools.lru_cache(maxsize=4)
def stream_tensors(data: DataConfig) -> StreamTensors:
    """One :class:`StreamTensors` per data config and process, so models trained or evaluated in one
    process (the quickstart) share generated streams, features and similarity pools."""
    return StreamTensors(data)


class StreamBatches:
    """``batch_fn(step, rank, world)`` for :class:`~memgym.memory.recurrent.trainer.Trainer`.

    Step ``s`` uses streams ``s·B .. s·B+B-1`` (``B`` = batch size; modulo ``data.pool`` when a
    fixed pool is set, shuffled per epoch by ``seed``); rank ``r`` of ``W`` takes its contiguous
    share, so batches are a pure function of (config, seed, step). ``data.clip_cache`` raises the
    library's in-memory cache of recordings (memory only; the batches do not change).
    """

    def __init__(self, tensors: StreamTensors, batch_size: int, seed: int) -> None:
        self.tensors = tensors
        self.batch_size = batch_size
        self.seed = seed
        if tensors.data.clip_cache > 0:  # before workers or envs copy the library
            tensors.library.keep_in_memory(tensors.data.clip_cache)

    def index(self, position: int) -> int:
        pool = self.tensors.data.pool
        if pool <= 0:
            return self.seed * 10_000_000 + position
        epoch, offset = divmod(position, pool)
        order = np.random.default_rng([self.seed, epoch]).permutation(pool)
        return int(order[offset])

    def indices(self, step: int, rank: int, world: int) -> list[int]:
        """Stream indices of rank ``rank``'s share of step ``step``."""
        share = self.batch_size // world
        first = step * self.batch_size + rank * share
        return [self.index(first + i) for i in range(share)]

    def __call__(self, step: int, rank: int, world: int) -> dict[str, torch.Tensor]:
        return stack_streams([self.tensors.arrays(i) for i in self.indices(step, rank, world)])

    def iterate(self, start_step: int, rank: int, world: int):
        """Batches from ``start_step`` on. With ``data.source=env`` they are recorded from
        rollouts of ``memgym/AMemOps-v0`` vector envs (:mod:`memgym.agents.stream_rollouts`; the
        same tensors). Otherwise audio streams with ``data.workers`` > 0 are featurised ahead in
        worker processes by the world's sampler (:mod:`memgym.datasets.amemops.sampler`, with its
        on-disk cache when ``data.cache_dir`` is set), else in this process."""
        data = self.tensors.data
        if data.source == "env":
            yield from self._env_batches(start_step, rank, world)
            return
        if data.inputs != "audio" or data.workers <= 0:
            for step in itertools.count(start_step):
                yield self(step, rank, world)
            return
        from torch.utils.data import DataLoader

        from memgym.datasets.amemops.sampler import StreamDataset, collate_streams

        dataset = StreamDataset(
            data.stream,
            seed=data.stream_seed,
            length=2**62,
            cache_dir=data.cache_dir or None,
            library=self.tensors.library,
        )
        plan = (self.indices(step, rank, world) for step in itertools.count(start_step))
        yield from DataLoader(
            dataset, batch_sampler=plan, collate_fn=collate_streams, num_workers=data.workers, prefetch_factor=2
        )

    def _env_batches(self, start_step: int, rank: int, world: int):
        from memgym.agents.stream_rollouts import make_stream_envs, rollout_streams

        data = self.tensors.data
        envs = make_stream_envs(
            data.stream,
            self.batch_size // world,
            run_seed=data.stream_seed,
            mode=data.vectorization,
            block_frames=data.block_frames,
            library=self.tensors.library,
        )
        try:
            plan = (self.indices(step, rank, world) for step in itertools.count(start_step))
            for streams in rollout_streams(envs, plan):
                yield stack_streams(streams)
        finally:
            envs.close()


def stack_streams(arrays: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict[str, torch.Tensor]:
    """The :data:`~memgym.memory.recurrent.trainer.Batch` of equally long streams' ``(features, gain, pan)``."""
    return {
        "features": torch.from_numpy(np.stack([a[0] for a in arrays])),
        "gain_labels": torch.from_numpy(np.stack([a[1] for a in arrays])),
        "pan_labels": torch.from_numpy(np.stack([a[2] for a in arrays])),
    }
