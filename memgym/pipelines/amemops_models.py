"""AMemOps models: ``memgym train amemops`` and ``memgym eval amemops`` (paper sections 2-3).

* :func:`train_model` trains one Table 1 model (``model=gdn2 seed=0 steps=24000``) on batches of
  generated streams (:class:`StreamBatches`; read from the generator, or with ``data.source=env``
  recorded from ``memgym/AMemOps-v0`` vector-env rollouts, the same tensors), with AdamW, batch 40, peak lr 1e-3, 300 warm-up
  steps and cosine decay (:class:`~memgym.agents.trainer.Trainer`), into
  ``RUNS/amemops_train/<model>-seed<seed>/`` (resumable; ``step_<N>.pt`` checkpoints).
* :func:`evaluate_models` scores trained checkpoints on held-out streams, one resumable result
  row per (model, seed, checkpoint, stream), and writes Table 2 / Table 3 style markdown and a
  plot into ``RUNS/amemops_eval/<name>/``; ``executor=ray`` scores the streams on Ray workers
  (:class:`CheckpointScorer`, :mod:`memgym.core.executors`) and this process writes the same rows.
* ``inputs=symbolic`` (with ``memgym/configs/amemops_symbolic.yaml``: one layer, one head, 16
  attribute values) runs the same code on the symbolic controls
  (:mod:`memgym.datasets.amemops.symbolic`). Both heads have ``data.stream.attribute_values + 1``
  classes, the last one "none".
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from tqdm import tqdm

from memgym.agents.trainer import TrainConfig, Trainer, init_distributed, load_checkpoint_model, resolve_device
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.errors import ConfigError, RecordError
from memgym.core.executors import executor_field, ray_address_field, run_ordered, worker_gpus_field, workers_field
from memgym.core.results import RunStore
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED
from memgym.datasets.amemops.config import RECORDING_CONTROLS, StreamConfig
from memgym.datasets.amemops.query_conditions import AudioMatches, pitch_differences
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.memory.recurrent.mixers import CORES
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.pipelines.amemops_presets import apply_preset
from memgym.tasks.amemops_breakdowns import (
    contrast_report,
    familiarity_report,
    parse_contrast,
    pitch_difference_report,
    recording_contrast_report,
)
from memgym.tasks.amemops_history import PRIMARY_MODELS, is_history, write_history_report
from memgym.tasks.amemops_interaction import update_interaction_report
from memgym.tasks.amemops_tables import (
    QUERY_TYPES,
    accuracy_table,
    difference_markdown,
    plot_accuracy,
    table_markdown,
)

OPERATION_TO_QUERY_TYPE = {
    "initial": "initial",
    "updated": "post_update",
    "retained": "retained",
    "interference": "interference",
    "absent": "absent",
    "no_update": "no_update",
}
"""Generator ``operation`` annotation -> table query type."""

TRAIN_JOB = "amemops_train"
EVAL_JOB = "amemops_eval"
PAPER_MODELS = ("gdn2", "kda", "gdn", "no_erase", "mamba2", "attention_rope", "attention")


@dataclasses.dataclass(frozen=True)
class ArchConfig:
    """Model sizes (Table 1 defaults; the symbolic controls use one layer and one head)."""

    width: int = dataclasses.field(default=128, metadata={"help": "model width d"})
    layers: int = dataclasses.field(default=2, metadata={"help": "pre-norm blocks"})
    heads: int = dataclasses.field(default=2, metadata={"help": "memory heads per layer"})
    head_dim: int = dataclasses.field(default=64, metadata={"help": "d_k = d_v"})
    mlp_hidden: int = dataclasses.field(default=512, metadata={"help": "SiLU MLP width"})
    chunk_size: int = dataclasses.field(default=64, metadata={"help": "chunk of the parallel form"})
    conv_kernel: int = dataclasses.field(
        default=4,
        metadata={"help": "depthwise causal conv frames (0: no convolution, the ablation)", "min": 0, **ADDED_FIELD},
    )


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """Where training and evaluation streams come from."""

    inputs: Literal["audio", "symbolic"] = dataclasses.field(
        default="audio", metadata={"help": "audio log-mel inputs or the symbolic controls"}
    )
    stream: StreamConfig = dataclasses.field(default_factory=StreamConfig, metadata={"help": "stream generator"})
    pool: int = dataclasses.field(
        default=0, metadata={"help": "0: a fresh stream for every sample; N: cycle a fixed set of N streams"}
    )
    stream_seed: int = dataclasses.field(default=0, metadata={"help": "seed of the generated streams"})
    workers: int = dataclasses.field(
        default=0,
        metadata={"help": "audio featurising worker processes for training (0: in the training process)", **NOT_HASHED},
    )
    cache_dir: str = dataclasses.field(
        default="", metadata={"help": "on-disk cache of featurised training streams", **NOT_HASHED}
    )
    source: Literal["direct", "env"] = dataclasses.field(
        default="direct",
        metadata={
            "help": "training batches from the stream generator (direct) or from rollouts of memgym/AMemOps-v0 "
            "vector envs (env; audio only; the same batches)",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    vectorization: Literal["sync", "async"] = dataclasses.field(
        default="sync",
        metadata={
            "help": "source=env: gymnasium.make_vec mode (async: one worker process per stream)",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    block_frames: int = dataclasses.field(
        default=32, metadata={"help": "source=env: frames per formation step", "min": 1, **NOT_HASHED, **ADDED_FIELD}
    )

    def __post_init__(self) -> None:
        if self.source == "env" and self.inputs != "audio":
            raise ConfigError(
                "data.source=env plays memgym/AMemOps-v0, whose observations are audio: "
                "set data.inputs=audio or data.source=direct"
            )
        if self.block_frames < self.stream.query_frames:
            raise ConfigError(
                f"data.block_frames={self.block_frames} must hold a whole query "
                f"(data.stream.query_frames={self.stream.query_frames})"
            )


@dataclasses.dataclass(frozen=True)
class AMemOpsTrainConfig:
    """``memgym train amemops ...``."""

    model: str = dataclasses.field(default="gdn2", metadata={"help": f"memory core: {', '.join(CORES)}"})
    seed: int = dataclasses.field(
        default=0, metadata={"help": "training seed (initialisation, stream order)", "min": 0}
    )
    steps: int = dataclasses.field(default=24000, metadata={"help": "optimizer steps", "min": 1})
    batch_size: int = dataclasses.field(default=40, metadata={"help": "streams per step", "min": 1})
    lr: float = dataclasses.field(default=1e-3, metadata={"help": "peak learning rate"})
    warmup_steps: int = dataclasses.field(default=300, metadata={"help": "linear warm-up steps", "min": 0})
    min_lr_ratio: float = dataclasses.field(default=0.0, metadata={"help": "final / peak lr", "min": 0.0, "max": 1.0})
    weight_decay: float = dataclasses.field(default=0.01, metadata={"help": "AdamW weight decay"})
    grad_clip: float = dataclasses.field(default=1.0, metadata={"help": "gradient norm clip (0: off)"})
    checkpoint_steps: tuple[int, ...] = dataclasses.field(
        default=(12000, 24000), metadata={"help": "steps kept as step_<N>.pt for evaluation", "min": 1}
    )
    save_every: int = dataclasses.field(default=200, metadata={"help": "steps between resume checkpoints", "min": 1})
    log_every: int = dataclasses.field(default=10, metadata={"help": "steps between metrics.csv rows", "min": 1})
    data: DataConfig = dataclasses.field(default_factory=DataConfig, metadata={"help": "training streams"})
    arch: ArchConfig = dataclasses.field(default_factory=ArchConfig, metadata={"help": "model sizes"})
    device: str = dataclasses.field(
        default="cpu",
        metadata={"help": "torch device (cpu, cuda, cuda:1; under torchrun cuda is cuda:<LOCAL_RANK>)", **NOT_HASHED},
    )
    threads: int = dataclasses.field(
        default=0,
        metadata={"help": "torch CPU threads (0: torch default; 1 avoids thrashing on a busy machine)", **NOT_HASHED},
    )
    name: str = dataclasses.field(default="", metadata={"help": "run folder name (default <model>-seed<seed>)"})

    def __post_init__(self) -> None:
        if self.model not in CORES:
            raise ConfigError(f"model='{self.model}' is not a memory core; choose one of {', '.join(CORES)}")

    def run_name(self) -> str:
        return self.name or f"{self.model}-seed{self.seed}"

    def trainer_config(self) -> TrainConfig:
        return TrainConfig(
            steps=self.steps,
            batch_size=self.batch_size,
            lr=self.lr,
            warmup_steps=self.warmup_steps,
            min_lr_ratio=self.min_lr_ratio,
            weight_decay=self.weight_decay,
            grad_clip=self.grad_clip,
            checkpoint_steps=self.checkpoint_steps,
            save_every=self.save_every,
            log_every=self.log_every,
        )


BREAKDOWNS = ("pitch_difference",)
"""Names accepted by ``AMemOpsEvalConfig.breakdowns``."""
EXCLUSION_TEXT = {
    "training_audio": "queries whose own or earlier same-source audio matches training audio",
    "duplicate_notes": "streams with duplicate notes",
}
"""Names accepted by ``AMemOpsEvalConfig.exclude`` and what they drop."""


def model_core(name: str) -> str:
    """The memory core of an eval model name: ``gdn2``, or a variant such as ``gdn2@noconv``
    (trained with ``name=gdn2@noconv-seed<seed>``, e.g. ``arch.conv_kernel=0``)."""
    return name.split("@", 1)[0]


@dataclasses.dataclass(frozen=True)
class AMemOpsEvalConfig:
    """``memgym eval amemops ...``."""

    models: tuple[str, ...] = dataclasses.field(default=PAPER_MODELS, metadata={"help": "trained cores to evaluate"})
    seeds: tuple[int, ...] = dataclasses.field(
        default=(0, 1, 2), metadata={"help": "training seeds to average", "min": 0}
    )
    checkpoints: tuple[int, ...] = dataclasses.field(default=(12000, 24000), metadata={"help": "checkpoint steps"})
    streams: int = dataclasses.field(default=48, metadata={"help": "held-out streams", "min": 1})
    data: DataConfig = dataclasses.field(
        default_factory=lambda: DataConfig(stream=StreamConfig(split="eval"), stream_seed=1000),
        metadata={"help": "evaluation streams (split eval)"},
    )
    stream_set: str = dataclasses.field(
        default="",
        metadata={"help": "evaluate on a saved stream set (memgym generate amemops ...; e.g. matched histories)"},
    )
    train_dir: str = dataclasses.field(
        default="", metadata={"help": "folder of train runs (default RUNS/amemops_train)"}
    )
    weighting: Literal["query", "stream"] = dataclasses.field(
        default="query", metadata={"help": "query-weighted (Table 2) or per-stream (Table 3) accuracy"}
    )
    device: str = dataclasses.field(default="cpu", metadata={"help": "torch device", **NOT_HASHED})
    threads: int = dataclasses.field(default=0, metadata={"help": "torch CPU threads (0: torch default)", **NOT_HASHED})
    form: Literal["chunked", "step"] = dataclasses.field(
        default="chunked", metadata={"help": "chunked form, or step form through the registered Memory (slower)"}
    )
    name: str = dataclasses.field(default="", metadata={"help": "eval run folder name (default: config hash)"})
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()
    worker_gpus: float = worker_gpus_field()
    bootstrap_resamples: int = dataclasses.field(
        default=10_000, metadata={"help": "bootstrap resamples of the paired model differences (0: none)", **NOT_HASHED}
    )
    history_contrasts: tuple[str, ...] = dataclasses.field(
        default=PRIMARY_MODELS,
        metadata={
            "help": "matched histories: reference model, then the baselines of the primary contrasts",
            **NOT_HASHED,
        },
    )
    exclude: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "also tabulate without: training_audio (queries whose own or earlier same-source recording "
            "matches training audio, first-second cosine > 0.9999), duplicate_notes (streams holding two "
            "recordings of the same audio)",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    recording_contrasts: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "paired differences between recording controls, 'A:B' = A minus B (e.g. [fixed:original,"
            "cycle2:cycle4]); each control named is evaluated on the same streams",
            **ADDED_FIELD,
        },
    )
    eval_sets: tuple[int, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "instrument sets (data.stream.library.instrument_set) to evaluate on, each on its own "
            "streams; the main tables use the first",
            **ADDED_FIELD,
        },
    )
    familiarity: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "[reference,baseline] cores: the training-familiarity interaction (Fig. 2b) over models "
            "<core>@<training set> evaluated on eval_sets",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    contrasts: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "model contrasts 'A:B' (A minus B; a side of several models joined by '+' is their mean, e.g. "
            "gdn2:attention+attention_rope averages over RoPE settings), written to contrasts.md with CIs",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    breakdowns: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": f"extra tables with CIs and plots: {', '.join(BREAKDOWNS)}",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    update_interactions: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "model contrasts 'A:B' (as contrasts) reported on post-update and initial queries and as the "
            "update-specific interaction (their difference), with per-operation accuracy, in update_interaction.md",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    train: bool = dataclasses.field(
        default=False,
        metadata={
            "help": "with preset=NAME: first train every model x seed whose checkpoints are missing, with the "
            "preset's train settings (finished runs are skipped, interrupted ones resume)",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )

    def __post_init__(self) -> None:
        unknown = [m for m in self.models if model_core(m) not in CORES]
        if unknown:
            raise ConfigError(
                f"models: '{unknown[0]}' is not a memory core or <core>@<variant>; cores: {', '.join(CORES)}"
            )
        unknown = [m for m in self.history_contrasts if m not in CORES]
        if unknown:
            raise ConfigError(f"history_contrasts: '{unknown[0]}' is not a memory core; choose from {', '.join(CORES)}")
        unknown = [b for b in self.breakdowns if b not in BREAKDOWNS]
        if unknown:
            raise ConfigError(f"breakdowns: '{unknown[0]}' is unknown; choose from {', '.join(BREAKDOWNS)}")
        for contrast in self.recording_contrasts:
            pair = contrast.split(":")
            if len(pair) != 2 or pair[0] == pair[1] or any(p not in RECORDING_CONTROLS for p in pair):
                raise ConfigError(
                    f"recording_contrasts: '{contrast}' must be 'A:B' with two different recording controls "
                    f"from {', '.join(RECORDING_CONTROLS)}"
                )
        if self.eval_sets and (self.recording_contrasts or self.stream_set):
            raise ConfigError("eval_sets cannot be combined with recording_contrasts or stream_set")
        if self.familiarity and (len(self.familiarity) != 2 or any(c not in CORES for c in self.familiarity)):
            raise ConfigError(f"familiarity must be [reference,baseline] memory cores, got {list(self.familiarity)}")
        if self.familiarity and (len(self.eval_sets) < 2 or self.bootstrap_resamples <= 0):
            raise ConfigError(
                "familiarity needs eval_sets with two or more instrument sets and bootstrap_resamples > 0"
            )
        if self.recording_contrasts and self.bootstrap_resamples <= 0:
            raise ConfigError("recording_contrasts report bootstrap intervals: set bootstrap_resamples > 0")
        if self.recording_contrasts and self.stream_set:
            raise ConfigError(
                "recording_contrasts regenerate streams under each control; a stream_set holds its own "
                "recordings conditions (see history_contrasts.md)"
            )
        for key, contrast in [("contrasts", c) for c in self.contrasts] + [
            ("update_interactions", c) for c in self.update_interactions
        ]:
            try:
                plus, minus = parse_contrast(contrast)
            except ValueError as exc:
                raise ConfigError(f"{key}: {exc}") from None
            missing = [m for m in (*plus, *minus) if m not in self.models]
            if missing:
                raise ConfigError(f"{key}: '{contrast}' names '{missing[0]}', which is not in models")
        if (self.contrasts or self.update_interactions) and self.bootstrap_resamples <= 0:
            raise ConfigError("contrasts report bootstrap intervals: set bootstrap_resamples > 0")
        unknown = [e for e in self.exclude if e not in EXCLUSION_TEXT]
        if unknown:
            raise ConfigError(f"exclude: '{unknown[0]}' is unknown; choose from {', '.join(EXCLUSION_TEXT)}")

    def contrast_pairs(self) -> list[tuple[str, str]]:
        """``recording_contrasts`` as ``(A, B)`` pairs (A minus B)."""
        return [tuple(c.split(":")) for c in self.recording_contrasts]  # type: ignore[misc]

    def evaluations(self) -> list[tuple[str, DataConfig]]:
        """``(key tag, data)`` of every evaluation: one untagged for a plain run; one per recording
        control (``data.stream.recordings`` first, then those the contrasts name); or one per
        instrument set of ``eval_sets``."""
        stream = self.data.stream
        if self.eval_sets:
            return [
                (
                    f"set{k}|",
                    dataclasses.replace(
                        self.data,
                        stream=dataclasses.replace(
                            stream, library=dataclasses.replace(stream.library, instrument_set=k)
                        ),
                    ),
                )
                for k in dict.fromkeys(self.eval_sets)
            ]
        if not self.recording_contrasts:
            return [("", self.data)]
        names = [stream.recordings, *(n for pair in self.contrast_pairs() for n in pair)]
        return [
            (f"{n}|", dataclasses.replace(self.data, stream=dataclasses.replace(stream, recordings=n)))
            for n in dict.fromkeys(names)
        ]


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
        """The library the set's streams were generated from (opened on first use)."""
        return _open_library(self.data.stream.library)

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
    """``batch_fn(step, rank, world)`` for :class:`~memgym.agents.trainer.Trainer`.

    Step ``s`` uses streams ``s·B .. s·B+B-1`` (``B`` = batch size; modulo ``data.pool`` when a
    fixed pool is set, shuffled per epoch by ``seed``); rank ``r`` of ``W`` takes its contiguous
    share, so batches are a pure function of (config, seed, step).
    """

    def __init__(self, tensors: StreamTensors, batch_size: int, seed: int) -> None:
        self.tensors = tensors
        self.batch_size = batch_size
        self.seed = seed

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
    """The :data:`~memgym.agents.trainer.Batch` of equally long streams' ``(features, gain, pan)``."""
    return {
        "features": torch.from_numpy(np.stack([a[0] for a in arrays])),
        "gain_labels": torch.from_numpy(np.stack([a[1] for a in arrays])),
        "pan_labels": torch.from_numpy(np.stack([a[2] for a in arrays])),
    }


def build_model(config: AMemOpsTrainConfig, input_dim: int, n_classes: int) -> AMemOpsModel:
    """The Table 1 model for ``config``; audio inputs have their log-mel columns standardised with
    the fixed :data:`~memgym.sensors.log_mel.LOG_MEL_MEAN` / ``LOG_MEL_STD`` (symbolic ones are one-hot)."""
    from memgym.sensors.log_mel import LOG_MEL_MEAN, LOG_MEL_STD, N_MELS

    arch = config.arch
    audio = config.data.inputs == "audio"
    return AMemOpsModel(
        ModelConfig(
            core=config.model,
            input_dim=input_dim,
            width=arch.width,
            layers=arch.layers,
            heads=arch.heads,
            head_dim=arch.head_dim,
            mlp_hidden=arch.mlp_hidden,
            chunk_size=arch.chunk_size,
            conv_kernel=arch.conv_kernel,
            n_gain=n_classes,
            n_pan=n_classes,
            standardised_inputs=2 * N_MELS if audio else 0,
            input_mean=LOG_MEL_MEAN if audio else 0.0,
            input_std=LOG_MEL_STD if audio else 1.0,
        )
    )


# ----- jobs ----------------------------------------------------------------------------------
def train_model(config: AMemOpsTrainConfig, runs_dir: Path, *, progress: bool = True) -> Path:
    """Train (or resume) one model; returns its run folder."""
    if config.threads > 0:
        torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    dist_env = init_distributed(device)
    folder = Path(runs_dir) / TRAIN_JOB / config.run_name()
    if dist_env.is_main:  # one process creates (or checks) the run folder, the others wait for it
        folder = RunStore.open(runs_dir, TRAIN_JOB, config, name=config.run_name(), seeds=[config.seed]).folder
    if dist_env.world_size > 1:
        torch.distributed.barrier()
    tensors = stream_tensors(config.data)
    torch.manual_seed(config.seed)
    model = build_model(config, tensors.input_dim, tensors.n_classes)
    trainer = Trainer(model, config.trainer_config(), folder, dist_env=dist_env, device=device, progress=progress)
    return trainer.fit(StreamBatches(tensors, config.batch_size, config.seed))


def train_config(args: JobArgs) -> AMemOpsTrainConfig:
    """The config of ``memgym train amemops`` (``preset=NAME``: :mod:`~memgym.pipelines.amemops_presets`,
    trained as the variant ``<model>@NAME`` unless ``name=`` is given)."""
    overrides, preset = apply_preset(args.overrides, "train")
    config = load_config(AMemOpsTrainConfig, path=args.config_path, overrides=overrides)
    if preset and not config.name:
        config = dataclasses.replace(config, name=f"{config.model}@{preset}-seed{config.seed}")
    return config


def train_job(args: JobArgs) -> Path:
    """``memgym train amemops key=value ...`` (see :func:`train_config`)."""
    return train_model(train_config(args), args.runs_dir, progress=args.progress)


def _step_form_logits(model: AMemOpsModel, features: np.ndarray, frames: set[int]) -> dict[int, dict[str, np.ndarray]]:
    """Gain/pan probabilities at ``frames`` from the registered memory observing one frame at a time."""
    from memgym.memory.recurrent.core_memory import CORE_MEMORIES

    memory = CORE_MEMORIES[model.config.core](model)
    read = {}
    for t, frame in enumerate(features):
        memory.observe(frame)
        if t in frames:
            answer = memory.retrieve()
            read[t] = {"gain": answer["gain_probs"], "pan": answer["pan_probs"]}
    return read


def score_stream(
    model: AMemOpsModel,
    stream: AMemOpsStream,
    arrays,
    device: str = "cpu",
    *,
    form: Literal["chunked", "step"] = "chunked",
) -> list[dict[str, Any]]:
    """Per-query results of ``model`` on one stream: the chunked form over the whole stream, or the
    step form (the model as a memgym ``Memory``, one ``observe`` per frame; same numbers, slower)."""
    labels = {"gain": arrays[1], "pan": arrays[2]}
    if form == "step":
        outputs = _step_form_logits(model, arrays[0], {item.annotations["end_frame"] for item in stream.items})
    else:
        with torch.no_grad():
            out = model(torch.from_numpy(arrays[0])[None].to(device))
    rows = []
    for item in stream.items:
        attribute = item.annotations["attribute"]
        frame = item.annotations["end_frame"]
        if form == "step":
            prediction = int(np.argmax(outputs[frame][attribute]))
        else:
            prediction = int(out[attribute][0, frame].argmax())
        answer = int(labels[attribute][frame])
        rows.append(
            {
                "query": item.item_id,
                "query_type": OPERATION_TO_QUERY_TYPE[item.annotations["operation"]],
                "attribute": attribute,
                "answer": answer,
                "prediction": prediction,
                "correct": int(prediction == answer),
                "previous_value": int(prediction == item.annotations.get("previous_index", -1)),
                **{k: item.annotations.get(k) for k in ("operation", "delay_s", "load", "earlier", "template")},
                "recordings": stream.recordings,
                **({"joint": True} if item.annotations.get("joint") else {}),
            }
        )
    return rows


def eval_streams(data: DataConfig, stream_set: str, streams: int) -> tuple[StreamTensors | StreamSetTensors, int]:
    """The evaluation streams: a saved set when ``stream_set`` is set, else ``streams`` generated ones."""
    if stream_set:
        tensors = StreamSetTensors(stream_set, data)
        return tensors, len(tensors)
    return stream_tensors(data), streams


def checkpoint_jobs(config: Any, runs_dir: Path) -> list[tuple[str, int, int, Path]]:
    """``(model, seed, step, path)`` of every checkpoint an eval config (``models``, ``seeds``,
    ``checkpoints``, ``train_dir``) asks for.

    Raises:
        RecordError: a checkpoint is missing (names the train command that makes it).
    """
    train_dir = Path(config.train_dir) if config.train_dir else Path(runs_dir) / TRAIN_JOB
    jobs = []
    for model_name in config.models:
        for seed in config.seeds:
            for step in config.checkpoints:
                path = train_dir / f"{model_name}-seed{seed}" / f"step_{step}.pt"
                if not path.exists():
                    raise RecordError(
                        f"missing checkpoint {path}: run 'memgym train amemops model={model_core(model_name)} "
                        f"seed={seed}{'' if model_core(model_name) == model_name else f' name={path.parent.name}'}' "
                        f"with {step} in checkpoint_steps, or set train_dir/checkpoints"
                    )
                jobs.append((model_name, seed, step, path))
    return jobs


def check_checkpoint_core(path: Path, model_name: str) -> None:
    """Refuse a checkpoint whose memory core is not the one ``model_name`` names.

    Raises:
        RecordError: e.g. ``models=[gdn2]`` reading a folder trained with ``model=no_erase``.
    """
    state = torch.load(path, map_location="cpu", weights_only=False)
    core = state.get("model_config", {}).get("core")
    if core != model_core(model_name):
        raise RecordError(
            f"{path}: checkpoint holds a '{core}' model, but models names '{model_name}' "
            f"(core '{model_core(model_name)}'); point train_dir at {model_name}'s runs or fix the folder"
        )


def load_eval_model(path: Path, tensors: StreamTensors | StreamSetTensors, device: str) -> AMemOpsModel:
    """A trained checkpoint in eval mode on ``device``, checked against the streams' input size."""
    model = load_checkpoint_model(path, lambda c: AMemOpsModel(ModelConfig(**c))).to(device).eval()
    if model.config.input_dim != tensors.input_dim:
        raise RecordError(
            f"{path}: model expects {model.config.input_dim} input features but data.inputs="
            f"{tensors.data.inputs} gives {tensors.input_dim}"
        )
    return model


class CheckpointScorer:
    """Scores one stream with one checkpoint: ``(model, seed, step, checkpoint path, evaluation tag,
    its data config, stream index)`` -> the result row (``queries`` from :func:`score_stream`).
    Keeps the streams of the last evaluation and the last checkpoint loaded."""

    def __init__(self, config: AMemOpsEvalConfig) -> None:
        if config.threads > 0:
            torch.set_num_threads(config.threads)
        self.config = config
        self.tag: str | None = None
        self.path: Path | None = None

    def __call__(self, job: tuple[str, int, int, Path, str, DataConfig, int]) -> dict[str, Any]:
        model_name, seed, step, path, tag, data, index = job
        config = self.config
        if tag != self.tag:
            self.tensors, _ = eval_streams(data, config.stream_set, config.streams)
            self.tag, self.path = tag, None
        if path != self.path:
            self.model = load_eval_model(path, self.tensors, config.device)
            self.path = path
        stream = self.tensors.stream(index)
        queries = score_stream(self.model, stream, self.tensors.arrays(index), config.device, form=config.form)
        if config.eval_sets:
            queries = [q | {"eval_set": data.stream.library.instrument_set} for q in queries]
        return {"model": model_name, "seed": seed, "checkpoint": step, "stream": stream.episode_id, "queries": queries}


def evaluate_models(config: AMemOpsEvalConfig, runs_dir: Path, *, progress: bool = True) -> Path:
    """Score every (model, seed, checkpoint) on the held-out streams; write tables and a plot."""
    if config.threads > 0:
        torch.set_num_threads(config.threads)
    jobs = checkpoint_jobs(config, runs_dir)
    for model_name, _, _, path in jobs:
        check_checkpoint_core(path, model_name)
    store = RunStore.open(runs_dir, EVAL_JOB, config, name=config.name or None, seeds=list(config.seeds))
    done = store.done_keys()
    work = []
    for tag, data in config.evaluations():
        _, n_streams = eval_streams(data, config.stream_set, config.streams)
        for model_name, seed, step, path in jobs:
            for index in range(n_streams):
                key = f"{model_name}|{seed}|{step}|{tag}{index}"
                if key not in done:
                    work.append((key, (model_name, seed, step, path, tag, data, index)))
    scored = run_ordered(config, functools.partial(CheckpointScorer, config), work)
    for key, row in tqdm(scored, total=len(work), desc="amemops eval", disable=not progress):
        store.append(key, row)
    evaluations = config.evaluations()
    every = query_rows(store.rows())
    # the main tables, breakdowns and exclusions: the first evaluation (all rows of a saved set)
    data = evaluations[0][1]
    rows = [
        r
        for r in every
        if config.stream_set
        or (r["recordings"] == data.stream.recordings and r.get("eval_set") == (config.eval_sets or [None])[0])
    ]
    tensors, n_streams = eval_streams(data, config.stream_set, config.streams)
    if config.breakdowns or config.exclude:
        rows = annotate_conditions(rows, tensors, n_streams, config)
    write_tables(store, rows, config)
    if config.recording_contrasts:
        recording_contrast_report(
            every,
            config.models,
            config.contrast_pairs(),
            store.folder,
            n_resamples=config.bootstrap_resamples,
        )
    if config.familiarity:
        reference, baseline = config.familiarity
        familiarity_report(
            familiar_rows(every, config, runs_dir),
            reference,
            baseline,
            store.folder,
            n_resamples=config.bootstrap_resamples,
        )
    return store.folder


def familiar_rows(rows: list[dict[str, Any]], config: AMemOpsEvalConfig, runs_dir: Path) -> list[dict[str, Any]]:
    """``rows`` with the labels of :func:`~memgym.tasks.amemops_breakdowns.familiarity_interaction`:
    each model's training set read from its run's ``config.yaml`` (library kind and instrument
    set), ``seen`` when the evaluated set is that one, and a stream key unique across sets."""
    trained: dict[tuple[str, Any], tuple[str, int]] = {}
    for model_name, seed, _, path in checkpoint_jobs(config, runs_dir):
        if (model_name, seed) not in trained:
            library = load_config(AMemOpsTrainConfig, path=path.parent / "config.yaml").data.stream.library
            trained[model_name, seed] = (library.kind, library.instrument_set)
    kind = config.data.stream.library.kind
    out = []
    for r in rows:
        train_kind, train_set = trained[r["model"], r["seed"]]
        out.append(
            r
            | {
                "core": model_core(r["model"]),
                "train_set": f"{train_kind}-set{train_set}",
                "seen": train_kind == kind and train_set == r["eval_set"],
                "stream_key": f"set{r['eval_set']}/{r['stream']}",
            }
        )
    return out


def annotate_conditions(
    rows: list[dict[str, Any]], tensors: StreamTensors | StreamSetTensors, n_streams: int, config: AMemOpsEvalConfig
) -> list[dict[str, Any]]:
    """Per-query conditions the breakdowns and exclusions need, from the (regenerated) streams:
    ``pitch_difference``, ``training_match`` (the query's or an earlier same-source recording
    matches training audio) and ``duplicate_notes`` (its stream holds two recordings of the same
    audio); see :mod:`memgym.datasets.amemops.query_conditions`."""
    streams = {s.episode_id: s for s in (tensors.stream(i) for i in range(n_streams))}
    matches = AudioMatches(tensors.library)
    conditions: dict[str, dict[str, dict[str, Any]]] = {}
    for episode_id in sorted({str(r["stream"]) for r in rows}):
        stream = streams[episode_id]
        per_query: dict[str, dict[str, Any]] = {q.query_id: {} for q in stream.queries()}
        if "pitch_difference" in config.breakdowns:
            for query, value in pitch_differences(stream, tensors.library).items():
                per_query[query]["pitch_difference"] = value
        if "training_audio" in config.exclude:
            for query, value in matches.training_matches(stream).items():
                per_query[query]["training_match"] = value
        if "duplicate_notes" in config.exclude:
            duplicate = matches.has_duplicate_notes(stream)
            for values in per_query.values():
                values["duplicate_notes"] = duplicate
        # items of a joint query share its query event (named by the first item's id)
        conditions[episode_id] = {
            item.item_id: per_query[item.annotations.get("query_event", item.item_id)] for item in stream.items
        }
    return [r | conditions[str(r["stream"])][r["query"]] for r in rows]


def excluded(row: dict[str, Any], exclude: tuple[str, ...]) -> bool:
    """Whether ``exclude`` drops this annotated query row."""
    return ("training_audio" in exclude and row["training_match"]) or (
        "duplicate_notes" in exclude and row["duplicate_notes"]
    )


def query_rows(stream_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flatten per-stream result rows into per-query rows for the tables."""
    return [{k: r[k] for k in ("model", "seed", "checkpoint", "stream")} | q for r in stream_rows for q in r["queries"]]


def _accuracy_markdown(
    rows: list[dict[str, Any]], config: AMemOpsEvalConfig, types: tuple[str, ...]
) -> tuple[str, list[dict[str, Any]]]:
    """Accuracy by query type and by query type × attribute, and the paired differences against
    the first model; returns the markdown and the by-type table."""
    label = "Query-weighted" if config.weighting == "query" else "Mean per-stream"
    by_type = accuracy_table(rows, weighting=config.weighting, model_order=config.models, query_types=types)
    by_attribute = accuracy_table(
        rows, weighting=config.weighting, by_attribute=True, model_order=config.models, query_types=types
    )
    n_streams = len({r["stream"] for r in rows})
    text = (
        table_markdown(by_type, title=f"{label} accuracy (%) on {n_streams} streams, mean over seeds")
        + "\n"
        + table_markdown(by_attribute, title=f"{label} accuracy (%) by query type and attribute")
    )
    models_present = [m for m in config.models if any(r["model"] == m for r in rows)]
    if len(models_present) >= 2 and config.bootstrap_resamples > 0:
        text += "\n" + difference_markdown(
            rows,
            models_present,
            rng=np.random.default_rng(0),
            query_types=types,
            n_resamples=config.bootstrap_resamples,
        )
    return text, by_type


def _write_exclusions(store: RunStore, rows: list[dict[str, Any]], config: AMemOpsEvalConfig, types) -> str:
    """``table_excluded.md`` and ``accuracy_excluded.png``: the tables on the rows ``exclude`` keeps."""
    kept = [r for r in rows if not excluded(r, config.exclude)]
    first = rows[0]["model"], rows[0]["seed"], rows[0]["checkpoint"]  # counts of one model/seed/checkpoint
    one = [r for r in rows if (r["model"], r["seed"], r["checkpoint"]) == first]
    kept_one = [r for r in one if not excluded(r, config.exclude)]
    updates = sum(r["query_type"] == "post_update" for r in kept_one)
    text = (
        f"# Tables without {' and '.join(EXCLUSION_TEXT[e] for e in config.exclude)}\n\n"
        f"Kept {len(kept_one)} of {len(one)} queries per model, seed and checkpoint ({updates} post-update) "
        f"in {len({r['stream'] for r in kept_one})} of {len({r['stream'] for r in one})} streams.\n\n"
    )
    if not kept:
        store.write_text("table_excluded.md", text + "Nothing is left to tabulate.\n")
        return text
    body, by_type = _accuracy_markdown(kept, config, types)
    store.write_text("table_excluded.md", text + body)
    plot_accuracy(by_type, store.folder / "accuracy_excluded.png", query_types=types)
    return text


def write_tables(store: RunStore, rows: list[dict[str, Any]], config: AMemOpsEvalConfig) -> str:
    """Write ``table.md`` (by query type, and by query type × attribute) and ``accuracy.png``,
    plus the reports of ``breakdowns`` and ``exclude`` (rows annotated by :func:`annotate_conditions`)."""
    types = (*QUERY_TYPES, "no_update") if any(r["query_type"] == "no_update" for r in rows) else QUERY_TYPES
    text, by_type = _accuracy_markdown(rows, config, types)
    if is_history(rows):
        write_history_report(
            store,
            rows,
            model_order=config.models,
            primary_models=config.history_contrasts,
            n_resamples=config.bootstrap_resamples,
        )
        text += "\nMatched histories: update gaps and primary contrasts in `history_contrasts.md`.\n"
    if "pitch_difference" in config.breakdowns:
        pitch_difference_report(rows, config.models, store.folder, n_resamples=config.bootstrap_resamples)
        text += "\nAccuracy by pitch difference (Fig. 2a): `pitch_difference.md`, `pitch_difference.png`.\n"
    if config.contrasts:
        contrast_report(rows, config.contrasts, store.folder, n_resamples=config.bootstrap_resamples)
        text += "\nModel contrasts (e.g. the width control, Fig. 4a): `contrasts.md`, `contrasts.png`.\n"
    if config.update_interactions:
        update_interaction_report(
            rows, config.models, config.update_interactions, store.folder, n_resamples=config.bootstrap_resamples
        )
        text += "\nPer-operation accuracy and the update-specific interaction: `update_interaction.md`.\n"
    if config.exclude:
        counts = _write_exclusions(store, rows, config, types).strip().splitlines()[-1]
        text += f"\nExclusions: `table_excluded.md`, `accuracy_excluded.png`. {counts}\n"
    store.write_text("table.md", text)
    plot_accuracy(by_type, store.folder / "accuracy.png", query_types=types)
    return text


def eval_job(args: JobArgs) -> Path:
    """``memgym eval amemops key=value ...`` (or ``preset=NAME``, with ``train=true`` training the
    missing runs first: :func:`~memgym.pipelines.amemops_suite.train_missing`); prints the tables."""
    from memgym.pipelines.amemops_suite import split_train_keys, train_missing

    overrides, preset = apply_preset(args.overrides, "eval")
    overrides, train_only = split_train_keys(overrides)
    config = load_config(AMemOpsEvalConfig, path=args.config_path, overrides=overrides)
    if config.train:
        train_missing(config, preset, args)
    elif train_only:
        raise ConfigError(f"command line: '{train_only[0]}' is a training key; it needs train=true")
    folder = evaluate_models(config, args.runs_dir, progress=args.progress)
    print((folder / "table.md").read_text(encoding="utf-8"))
    return folder


# ----- quickstart ------------------------------------------------------------------------------
QUICKSTART_MODELS = ("gdn2", "kda", "gdn", "no_erase", "mamba2", "attention_rope")
QUICKSTART_STEPS = 40
QUICKSTART_STREAM = (
    "data.stream.frames=384",
    "data.stream.n_initial=3",
    "data.stream.n_update=3",
    "data.stream.n_interference=0",
    "data.stream.n_absent=1",
    "data.stream.distractors=[2]",
    "data.stream.offset_seconds=[2,6]",
)
QUICKSTART_TRAIN = (
    f"steps={QUICKSTART_STEPS}",
    "batch_size=8",
    "lr=0.003",
    "warmup_steps=5",
    f"checkpoint_steps=[{QUICKSTART_STEPS}]",
    "save_every=20",
    "log_every=5",
    "data.pool=32",
    "arch.width=64",
    "arch.head_dim=32",
    "arch.mlp_hidden=128",
    "threads=1",
)
QUICKSTART_NOTE = (
    f"Six models (width 64, two heads of 32) trained for {QUICKSTART_STEPS} steps of 8 streams on 32 "
    "short (384-frame) synthetic streams without interference queries, evaluated on 16 held-out "
    "streams: a smoke test of the pipeline, not the paper's numbers (those need "
    "`memgym train amemops` at 24k steps, batch 40)."
)


def quickstart_models(runs_dir: Path, *, progress: bool = True, eval_streams: int = 16) -> tuple[Path, str]:
    """Train the six models briefly on a small stream set (:data:`QUICKSTART_NOTE`) and evaluate
    them on ``eval_streams`` held-out streams.

    Returns the eval folder and its markdown tables. Everything is resumable under ``runs_dir``.
    """
    cache = f"data.stream.library.cache_dir={Path(runs_dir) / 'library_cache'}"
    for model in QUICKSTART_MODELS:
        overrides = (f"model={model}", "seed=0", *QUICKSTART_TRAIN, *QUICKSTART_STREAM, cache)
        train_job(JobArgs(overrides=overrides, runs_dir=Path(runs_dir), progress=progress))
    overrides = (
        f"models=[{','.join(QUICKSTART_MODELS)}]",
        "seeds=[0]",
        f"checkpoints=[{QUICKSTART_STEPS}]",
        f"streams={eval_streams}",
        "name=quickstart",
        "threads=1",
        *QUICKSTART_STREAM,
        "data.stream.split=eval",
        cache,
    )
    config = load_config(AMemOpsEvalConfig, overrides=overrides)
    folder = evaluate_models(config, Path(runs_dir), progress=progress)
    return folder, (folder / "table.md").read_text(encoding="utf-8")
