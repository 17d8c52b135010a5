"""Configs of ``memgym train amemops`` and ``memgym eval amemops`` (every key of both jobs)."""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.core.driver import select_memories
from memgym.core.errors import ConfigError
from memgym.core.executors import executor_field, ray_address_field, worker_gpus_field, workers_field
from memgym.core.field_checks import check_fields, checked, each, members, requires
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED, setting
from memgym.datasets.amemops.config import RECORDING_CONTROLS, StreamConfig
from memgym.memory.recurrent.mixers import CORES
from memgym.memory.recurrent.model import ArchConfig
from memgym.memory.recurrent.trainer import TrainConfig
from memgym.tasks.amemops.breakdowns import (
    parse_contrast,
)
from memgym.tasks.amemops.history import PRIMARY_MODELS

TRAIN_JOB = "amemops_train"
EVAL_JOB = "amemops_eval"
PAPER_MODELS = ("gdn2", "kda", "gdn", "no_erase", "mamba2", "attention_rope", "attention")


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """Where training and evaluation streams come from."""

    inputs: Literal["audio", "symbolic"] = setting("audio", "audio log-mel inputs or the symbolic controls")
    stream: StreamConfig = dataclasses.field(default_factory=StreamConfig, metadata={"help": "stream generator"})
    pool: int = setting(0, "0: a fresh stream for every sample; N: cycle a fixed set of N streams")
    stream_seed: int = setting(0, "seed of the generated streams")
    workers: int = setting(
        0, "audio featurising worker processes for training (0: in the training process)", hashed=False
    )
    cache_dir: str = setting("", "on-disk cache of featurised training streams", hashed=False)
    source: Literal["direct", "env"] = setting(
        "direct",
        "training batches from the stream generator (direct) or from rollouts of memgym/AMemOps-v0 vector envs "
        "(env; audio only; the same batches)",
        hashed=False,
        added=True,
    )
    vectorization: Literal["sync", "async"] = setting(
        "sync", "source=env: gymnasium.make_vec mode (async: one worker process per stream)", hashed=False, added=True
    )
    block_frames: int = setting(32, "source=env: frames per formation step", hashed=False, added=True, min=1)
    clip_cache: int = setting(
        0,
        "recordings the library keeps in memory while training (0: its default; at least the split's "
        "recordings, so fresh streams never re-synthesise or re-read an evicted clip)",
        hashed=False,
        added=True,
        min=0,
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
class AMemOpsTrainConfig(TrainConfig):
    """``memgym train amemops ...``: the trainer's settings (:class:`TrainConfig`: ``steps``,
    ``batch_size``, ``lr``, ...; the job config *is* the trainer's config, so nothing is copied),
    the memory core, the training streams and the model sizes (``arch``, the sizes part of the
    :class:`~memgym.memory.recurrent.model.ModelConfig` that :func:`build_model` completes)."""

    model: str = dataclasses.field(default="gdn2", metadata={"help": f"memory core: {', '.join(CORES)}"})
    seed: int = dataclasses.field(
        default=0, metadata={"help": "training seed (initialisation, stream order)", "min": 0}
    )
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
        super().__post_init__()
        if self.model not in CORES:
            raise ConfigError(f"model='{self.model}' is not a memory core; choose one of {', '.join(CORES)}")

    def run_name(self) -> str:
        return self.name or f"{self.model}-seed{self.seed}"


BREAKDOWNS = ("pitch_difference", "intervening")
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


def _bootstraps(config: AMemOpsEvalConfig) -> bool:
    """Whether the eval resamples (contrasts and interactions report bootstrap intervals)."""
    return config.bootstrap_resamples > 0


def _recording_pair_problem(name: str, contrast: str, config: AMemOpsEvalConfig) -> str | None:
    """What is wrong with one ``recording_contrasts`` entry (two different recording controls 'A:B')."""
    pair = contrast.split(":")
    if len(pair) != 2 or pair[0] == pair[1] or any(p not in RECORDING_CONTROLS for p in pair):
        return (
            f"{name}: '{contrast}' must be 'A:B' with two different recording controls "
            f"from {', '.join(RECORDING_CONTROLS)}"
        )
    return None


def _familiarity_problem(name: str, cores: tuple[str, ...], config: AMemOpsEvalConfig) -> str | None:
    """``familiarity`` is empty or two memory cores, [reference,baseline]."""
    if cores and (len(cores) != 2 or any(c not in CORES for c in cores)):
        return f"familiarity must be [reference,baseline] memory cores, got {list(cores)}"
    return None


def _contrast_problem(name: str, contrast: str, config: AMemOpsEvalConfig) -> str | None:
    """What is wrong with one model contrast 'A:B' (its syntax, or a side naming no evaluated model)."""
    try:
        plus, minus = parse_contrast(contrast)
    except ValueError as exc:
        return f"{name}: {exc}"
    missing = [m for m in (*plus, *minus) if m not in config.models]
    return f"{name}: '{contrast}' names '{missing[0]}', which is not in models" if missing else None


@dataclasses.dataclass(frozen=True)
class AMemOpsEvalConfig:
    """``memgym eval amemops ...``."""

    models: tuple[str, ...] = dataclasses.field(
        default=PAPER_MODELS,
        metadata={
            "help": "trained cores to evaluate",
            **checked(members(CORES, "is not a memory core or <core>@<variant>; cores: {choices}", key=model_core)),
        },
    )
    memories: tuple[str, ...] = setting(
        (), "the same as models=[...], the key every eval takes (the trained cores are the memories)", added=True
    )
    memory: str = setting("", "one trained core: memory=NAME is models=[NAME]", added=True)
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
    scorer: str = setting(
        "attribute_query", "registered scorer of attribute_query items (memgym list scorers)", added=True
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
            **checked(members(CORES, "is not a memory core; choose from {choices}")),
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
            **checked(members(EXCLUSION_TEXT)),
        },
    )
    recording_contrasts: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "paired differences between recording controls, 'A:B' = A minus B (e.g. [fixed:original,"
            "cycle2:cycle4]); each control named is evaluated on the same streams",
            **ADDED_FIELD,
            **checked(
                each(_recording_pair_problem),
                requires(_bootstraps, "recording_contrasts report bootstrap intervals: set bootstrap_resamples > 0"),
                requires(
                    lambda c: not c.stream_set,
                    "recording_contrasts regenerate streams under each control; a stream_set holds its own "
                    "recordings conditions (see history_contrasts.md)",
                ),
            ),
        },
    )
    eval_sets: tuple[int, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "instrument sets (data.stream.library.instrument_set) to evaluate on, each on its own "
            "streams; the main tables use the first",
            **ADDED_FIELD,
            **checked(
                requires(
                    lambda c: not (c.recording_contrasts or c.stream_set),
                    "eval_sets cannot be combined with recording_contrasts or stream_set",
                )
            ),
        },
    )
    familiarity: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "[reference,baseline] cores: the training-familiarity interaction (Fig. 2b) over models "
            "<core>@<training set> evaluated on eval_sets",
            **NOT_HASHED,
            **ADDED_FIELD,
            **checked(
                _familiarity_problem,
                requires(
                    lambda c: len(c.eval_sets) >= 2 and _bootstraps(c),
                    "familiarity needs eval_sets with two or more instrument sets and bootstrap_resamples > 0",
                ),
            ),
        },
    )
    contrasts: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "model contrasts 'A:B' (A minus B; a side of several models joined by '+' is their mean, e.g. "
            "gdn2:attention+attention_rope averages over RoPE settings), written to contrasts.md with CIs",
            **NOT_HASHED,
            **ADDED_FIELD,
            **checked(
                each(_contrast_problem),
                requires(_bootstraps, "contrasts report bootstrap intervals: set bootstrap_resamples > 0"),
            ),
        },
    )
    breakdowns: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": f"extra tables with CIs and plots: {', '.join(BREAKDOWNS)}",
            **NOT_HASHED,
            **ADDED_FIELD,
            **checked(members(BREAKDOWNS)),
        },
    )
    update_interactions: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "model contrasts 'A:B' (as contrasts) reported on post-update and initial queries and as the "
            "update-specific interaction (their difference), with per-operation accuracy, in update_interaction.md",
            **NOT_HASHED,
            **ADDED_FIELD,
            **checked(
                each(_contrast_problem),
                requires(_bootstraps, "contrasts report bootstrap intervals: set bootstrap_resamples > 0"),
            ),
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

    def _fold_memory_keys(self) -> None:
        """``memory=X`` and ``memories=[...]`` name the models, as in the other evals: folded into
        ``models`` (:func:`~memgym.core.driver.select_memories`; the same config, hash and run folder
        as ``models=[...]``)."""
        models = select_memories(self.memory, self.memories, (), synonym=("models", self.models, PAPER_MODELS))
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "memory", "")
        object.__setattr__(self, "memories", ())

    def __post_init__(self) -> None:
        self._fold_memory_keys()
        check_fields(self)

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
