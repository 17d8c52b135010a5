"""``memgym eval dialogmem`` settings: the eval config, the options of the visual and linked
memories, and which registered memories DialogMem takes (those that read only what its episodes
give, :data:`DIALOGMEM_READS`, decided from the plugin table without importing them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Literal

from memgym.backends.config import ReasonerConfig
from memgym.core.benchmark import benchmark_info
from memgym.core.driver import select_memories
from memgym.core.errors import ConfigError
from memgym.core.executors import executor_field, ray_address_field, worker_gpus_field, workers_field
from memgym.core.registry import MEMORIES
from memgym.core.scoring import scorer_class
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED
from memgym.memory import memories_reading, memory_reads
from memgym.memory.embodied.perception_errors import PerceptionNoise
from memgym.sensors.camera import CameraConfig


@dataclasses.dataclass(frozen=True)
class VisualMemoryOptions:
    """Options of the visual memories (``frames``, ``conceptgraph``, ``3dmem`` and their ``+dialogue``
    forms); the camera model they back-project with is the eval's ``camera``."""

    detector: str = field(
        default="gt", metadata={"help": "gt (semantic image), none, or a zero-shot detection model folder / hub id"}
    )
    perception: Literal["", "simulated", "exact"] = field(
        default="",
        metadata={
            "help": "simulated (the default, ''): detector misses, label confusion, mask and instance errors "
            "(detector=gt), depth noise and odometry drift; exact: the perfect-perception probe",
            **ADDED_FIELD,
        },
    )
    noise: PerceptionNoise = field(
        default_factory=PerceptionNoise,
        metadata={"help": "error rates of perception=simulated (docs/dialogmem.md)", **ADDED_FIELD},
    )
    encoder_model: str = field(
        default="", metadata={"help": "CLIP model folder / hub id for crops (empty: labels only)"}
    )
    num_frames: int = field(default=16, metadata={"help": "frames: uniformly sampled frames shown", "min": 1})
    stride: int = field(default=2, metadata={"help": "back-projection pixel step", "min": 1})
    voxel: float = field(default=0.05, metadata={"help": "point-cloud voxel size, m", "min": 0.001})
    threshold: float = field(default=1.1, metadata={"help": "conceptgraph/3dmem: association score to merge"})
    top_k_categories: int = field(
        default=10,
        metadata={
            "help": "conceptgraph/3dmem: most categories retrieval keeps of those the reasoner names "
            "(3D-Mem's prefiltering, 10 as released)",
            "min": 1,
            **ADDED_FIELD,
        },
    )
    snapshot_relations: Literal["", "image", "graph"] = field(
        default="",
        metadata={
            "help": "3dmem: on/near facts name only objects detected in the snapshot's image (image, the "
            "default '') or any instance (graph: the 3D relations conceptgraph reads)",
            **ADDED_FIELD,
        },
    )
    device: str = field(default="cpu", metadata={"help": "torch device of detector and encoder", **NOT_HASHED})


@dataclasses.dataclass(frozen=True)
class LinkOptions:
    """Options of the linked memories (``3dmem+clip``, ``3dmem+vlm``, ``3dmem+controlled``, ``3dmem+linked``)."""

    linker: str = field(
        default="",
        metadata={"help": "3dmem+linked: registered linker name (memgym list; plugins add them)", **ADDED_FIELD},
    )
    clip_model: str = field(default="", metadata={"help": "clip linker: CLIP model folder / hub id"})
    top_k: int = field(default=1, metadata={"help": "clip linker: snapshots linked per turn", "min": 1})
    quality: float = field(
        default=100.0,
        metadata={"help": "controlled linker: % of linkable turns linked correctly", "min": 0, "max": 100},
    )
    mode: Literal["missing", "wrong"] = field(
        default="missing", metadata={"help": "controlled linker: the other turns unlinked (missing) or wrongly linked"}
    )
    seed: int = field(default=0, metadata={"help": "controlled linker: seed of its choices"})


ANSWER_TOKENS = {"qa": 16, "navigation": 24}
"""Default answer budgets (tokens): reference QA answers are 1-4 words; a navigation reply names one
memory entry id (SmolLM2's tokenizer spends up to about 12 tokens on ``OBJECT bathroom_sink_48``)."""


@dataclasses.dataclass(frozen=True)
class DialogMemEvalConfig:
    """``memgym eval dialogmem`` settings."""

    dataset: str = field(default="data/dialogmem/episodes.jsonl", metadata={"help": "episodes JSONL"})
    memory: str = field(
        default="", metadata={"help": "one registered memory: memory=NAME is memories=[NAME] (neither: dialogue)"}
    )
    memories: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "registered memories compared on the same items, e.g. [dialogue,oracle] (default: [dialogue])",
            **NOT_HASHED,
        },
    )
    reasoner: ReasonerConfig = field(default_factory=ReasonerConfig, metadata={"help": "the reasoner reading evidence"})
    qa_scorer: str = field(
        default="token_f1",
        metadata={
            "help": "registered scorer of qa items (memgym list scorers): token_f1 (offline), exact_match, "
            "llm_match (needs judge.*), or a plugin's"
        },
    )
    judge: ReasonerConfig = field(
        default_factory=lambda: ReasonerConfig(backend="hf", max_new_tokens=4),
        metadata={"help": "LLM-match judge (e.g. judge.model=Qwen/Qwen3-VL-4B-Instruct)"},
    )
    answer_tokens: dict[str, int] = field(
        default_factory=lambda: dict(ANSWER_TOKENS),
        metadata={
            "help": "task -> answer budget in tokens (at most reasoner.max_new_tokens); hf reasoners stop at a line end",
            **ADDED_FIELD,
        },
    )
    execute_navigation: bool = field(default=False, metadata={"help": "also report execution success and SPL"})
    max_episodes: int = field(default=0, metadata={"help": "evaluate only the first N episodes (0 = all)", "min": 0})
    camera: CameraConfig = field(default_factory=CameraConfig, metadata={"help": "formation rendering"})
    frame_cache: str = field(
        default="",
        metadata={
            "help": "folder storing rendered formation frames for every memory and later runs (about 0.7 MB "
            "per 256x256 frame); '' = reuse within this process only, the last 512 MiB",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    visual: VisualMemoryOptions = field(
        default_factory=VisualMemoryOptions, metadata={"help": "options of the visual memories"}
    )
    link: LinkOptions = field(
        default_factory=LinkOptions, metadata={"help": "options of the linked memories", **ADDED_FIELD}
    )
    sweep: Literal["", "link_quality"] = field(
        default="",
        metadata={"help": "link_quality: the linking diagnosis (memories= adds systems to Table 3)", **ADDED_FIELD},
    )
    sweep_step: int = field(
        default=10, metadata={"help": "sweep: link-quality step, percent", "min": 1, "max": 100, **ADDED_FIELD}
    )
    subset_navigation: int = field(
        default=500, metadata={"help": "sweep: navigation items (stratified)", "min": 0, **ADDED_FIELD}
    )
    subset_qa: int = field(default=500, metadata={"help": "sweep: QA items (stratified)", "min": 0, **ADDED_FIELD})
    subset_seed: int = field(default=0, metadata={"help": "sweep: seed of the subset", **ADDED_FIELD})
    save_memory: bool = field(
        default=False,
        metadata={
            "help": "also append what each memory held after formation to <memory>/memory.jsonl (memgym view "
            "shows it; episodes evaluated before are not redone)",
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    name: str = field(default="", metadata={"help": "run folder name (default: config hash)"})
    bootstrap_seed: int = field(default=0, metadata={"help": "seed of the comparison's bootstrap intervals"})
    bootstrap_resamples: int = field(default=2000, metadata={"help": "bootstrap resamples per interval", **NOT_HASHED})
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()
    worker_gpus: float = worker_gpus_field()

    def __post_init__(self) -> None:
        scorer_class(self.qa_scorer, "qa", "qa_scorer")

    def memory_names(self) -> list[str]:
        """The memories to evaluate (:func:`~memgym.core.driver.select_memories`): ``[memory]``, else
        ``memories``, else ``[dialogue]``; each must read only what DialogMem gives."""
        return list(select_memories(self.memory, self.memories, DEFAULT_MEMORIES, check=embodied_memory))


DEFAULT_MEMORIES = ("dialogue",)
"""What ``memgym eval dialogmem`` evaluates given neither ``memory=`` nor ``memories=``."""
DIALOGMEM_READS = benchmark_info("dialogmem").gives
"""What a DialogMem evaluation gives a memory (:data:`memgym.core.protocols.READS`; its registered
:attr:`~memgym.core.benchmark.BenchmarkInfo.gives`): no audio."""


def embodied_memory(name: str) -> None:
    """Check that the memory registered as ``name`` reads only what DialogMem gives; an unknown
    name, or a memory that reads audio (VoxMem's, AMemOps's), is a one-line error naming the
    ones it takes. Imports no memory of memgym's own."""
    extra = memory_reads(name) - DIALOGMEM_READS  # an unknown name: a one-line error naming the registered ones
    if extra:
        raise ConfigError(
            f"memory '{name}' reads {', '.join(sorted(extra))}, which DialogMem episodes do not give; "
            f"DialogMem takes: {', '.join(embodied_memory_names())}"
        )


def embodied_memory_names() -> list[str]:
    """Every registered memory that reads only what DialogMem gives."""
    return memories_reading(DIALOGMEM_READS)


def store_config(config: DialogMemEvalConfig) -> DialogMemEvalConfig:
    """``config`` as the run store of ``config.memory`` records it: the memory's
    :meth:`~memgym.core.protocols.Memory.stored_options` (a visual memory writes out its default
    perception, a snapshot memory its default ``snapshot_relations``); unchanged for the others."""
    return MEMORIES.get(config.memory).stored_options(config)
