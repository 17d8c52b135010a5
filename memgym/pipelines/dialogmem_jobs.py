"""``memgym generate dialogmem`` and ``memgym eval dialogmem``: the dataset and its evaluation.

Generate (resumable): for each scene (27 generated houses by default, or HM3D scene folders with
GOAT-style annotations) sample a traversal and build a DialogMem episode; every finished episode
is appended to ``OUT.partial`` so an interrupted run continues where it stopped; at the end the
episodes are written to ``OUT`` (JSONL), with ``OUT.stats.md`` (dataset statistics) beside it.

Eval (resumable through :class:`~memgym.core.results.RunStore`): for each memory of
``memories=[...]`` (or the one ``memory=``), plays each episode in
:class:`~memgym.envs.dialogmem_env.DialogMemEnv` with that registered memory and a
:class:`~memgym.agents.reasoner_agent.ReasonerAgent`; one result row per item, appended as it
finishes. Formation frames are rendered 16 poses to a ray cast through a frame cache
(:mod:`memgym.sensors.frame_cache`), so the memories after the first reuse them: within the
process while they fit in its 512 MiB, or across memories and runs from ``frame_cache=DIR``.
A reasoner or judge failure, an episode with dangling ids or a duplicated episode id
becomes an ``error`` row and the run goes on; a re-run retries the items that failed. Once the
tables are written, the CLI ends an eval in which every item of a memory failed with an error and
one in which some failed with a warning line (:mod:`memgym.core.outcome`). Layout of ``RUNS/eval-dialogmem/NAME/`` (``NAME``:
``name=`` or the hash of the config without the memory names)::

    <memory>/           one RunStore per memory: results.jsonl, results.md (tables by task and
                        content type), config.yaml (with memory=<memory>), judge_cache.jsonl,
                        links.json (snapshot memories: link counts per episode, :class:`LinkLog`),
                        map.json (object memories: instance merges/splits per episode, :func:`measure_map`),
                        memory.jsonl (``save_memory=true``: what the memory held after each
                        episode's formation, :mod:`memgym.pipelines.dialogmem_memory_contents`)
    comparison.md       every memory side by side, with bootstrap intervals
    comparison.csv      the same, long form
    comparison.png      grouped bars per memory (navigation; QA per content type)

``executor=ray`` (``ray_address=``, ``workers=``) builds the episodes of generate and plays the
episodes of eval on Ray workers (:mod:`memgym.core.executors`, docs/scaling.md); this process
writes the same files in the same order. ``sweep=link_quality`` runs the linking diagnosis instead
(:mod:`memgym.pipelines.dialogmem_sweep`). Each memory's store is hashed without the list of memories, so adding a memory to the list and
running again evaluates only the new one. Result rows carry the item annotations as columns
(``content_type``, ``verbalised`` and ``updated`` for QA; ``content_type``, ``cue_updated`` and
``updated`` (= ``cue_updated``) for navigation); see :mod:`memgym.pipelines.dialogmem_comparison`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

from memgym.backends.config import ReasonerConfig, build_reasoner
from memgym.backends.errors import ReasonerError
from memgym.backends.throughput import record_counts, take_throughput
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config, yaml_text
from memgym.core.episode import Dataset, TaskItem
from memgym.core.errors import ConfigError, RecordError
from memgym.core.executors import executor_field, ray_address_field, run_ordered, worker_gpus_field, workers_field
from memgym.core.outputs import prepare_output_file, write_text_atomic
from memgym.core.paths import require_file, require_folder
from memgym.core.records import from_json, write_jsonl
from memgym.core.registry import MEMORIES
from memgym.core.results import RunStore, aggregate, to_markdown
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED, config_hash, episode_rng
from memgym.core.textfiles import complete_jsonl_lines, text_lines
from memgym.datasets.dialogmem.episode import ConstructionConfig, DialogMemEpisode, build_episode
from memgym.datasets.dialogmem.realise import LLMRealiser, TemplateRealiser
from memgym.datasets.dialogmem.residents import profiles_from_reasoner
from memgym.datasets.dialogmem.statistics import dataset_statistics
from memgym.datasets.dialogmem.validation import GroundingAuditor
from memgym.datasets.traversal import TraversalConfig, generate_traversal
from memgym.memory.embodied.ground_truth import LinkCounts
from memgym.memory.embodied.perception_errors import PerceptionNoise
from memgym.pipelines.dialogmem_comparison import comparison_rows, write_comparison
from memgym.pipelines.dialogmem_memory_contents import memory_contents
from memgym.scenes.procedural import HouseConfig
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig

DEFAULT_CLUTTER = "hm3d_v2"
"""``house.clutter`` of generated DialogMem houses unless set: repeats of common categories after
HM3D-Semantics (:mod:`memgym.scenes.clutter`; ``hm3d_v2`` is denser than the first default,
``hm3d``, which the scene specs of datasets built with it still name), with ``construction.unique_cues=true`` (items drawn
among the cues that single their target out of its repeated category). Both are added fields: at
these defaults the config keeps the hash it had before they existed; ``house.clutter=none
construction.unique_cues=false`` rebuilds the datasets made before."""


@dataclasses.dataclass(frozen=True)
class DialogMemGenerateConfig:
    """``memgym generate dialogmem`` settings."""

    source: Literal["procedural", "hm3d"] = field(
        default="procedural", metadata={"help": "generated houses, or HM3D scenes read from hm3d_path"}
    )
    scenes: int = field(
        default=27, metadata={"help": "number of scenes (first N HM3D scenes, sorted)", "min": 1, "max": 10000}
    )
    first_house_seed: int = field(default=0, metadata={"help": "procedural: house seeds start here"})
    episodes_per_scene: int = field(default=1, metadata={"help": "traversals (episodes) per scene", "min": 1})
    seed: int = field(default=0, metadata={"help": "run seed; episode generators derive from it"})
    hm3d_path: str = field(default="", metadata={"help": "hm3d: folder holding <id>/<name>.glb scenes"})
    goat_path: str = field(
        default="",
        metadata={"help": "hm3d: folder of GOAT-style <name>.json(.gz) annotations (default: beside each scene)"},
    )
    house: HouseConfig = field(
        default_factory=lambda: HouseConfig(clutter=DEFAULT_CLUTTER),
        metadata={"help": f"procedural houses (clutter defaults to {DEFAULT_CLUTTER}; none: the houses before it)"},
    )
    traversal: TraversalConfig = field(default_factory=TraversalConfig, metadata={"help": "traversals"})
    camera: CameraConfig = field(default_factory=CameraConfig, metadata={"help": "camera stored with traversals"})
    construction: ConstructionConfig = field(
        default_factory=lambda: ConstructionConfig(unique_cues=True),
        metadata={"help": "dialogue and items (unique_cues defaults to true; false: as before clutter)"},
    )
    realiser: Literal["template", "llm"] = field(default="template", metadata={"help": "utterance writer"})
    profiles: Literal["pools", "llm"] = field(
        default="pools", metadata={"help": "resident profiles from name/style pools or from the writer LLM"}
    )
    audit: bool = field(default=False, metadata={"help": "LLM grounding audit of utterances (uses writer)"})
    writer: ReasonerConfig = field(default_factory=ReasonerConfig, metadata={"help": "model for realiser=llm / audit"})
    out: str = field(default="data/dialogmem/episodes.jsonl", metadata={"help": "output JSONL (--out overrides)"})
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()
    worker_gpus: float = worker_gpus_field()


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
    memory: str = field(default="dialogue", metadata={"help": "registered memory (one; see memories)"})
    memories: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "registered memories compared on the same items, e.g. [dialogue,oracle] (default: [memory])",
            **NOT_HASHED,
        },
    )
    reasoner: ReasonerConfig = field(default_factory=ReasonerConfig, metadata={"help": "the reasoner reading evidence"})
    qa_scorer: Literal["token_f1", "llm_match"] = field(
        default="token_f1", metadata={"help": "llm_match needs judge.*; token_f1 is the offline fallback"}
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

    def memory_names(self) -> list[str]:
        """The memories to evaluate: ``memories``, or ``[memory]`` when it is empty."""
        names = list(self.memories) or [self.memory]
        if self.memories and self.memory != "dialogue":
            raise ConfigError("give the memories to compare as memories=[...] or one as memory=..., not both")
        if len(set(names)) != len(names):
            raise ConfigError(f"memories lists a memory twice: {names}")
        for name in names:
            embodied_memory(name)
        return names


def embodied_memory(name: str) -> type:
    """The memory class registered as ``name``, if it reads DialogMem episodes; an unknown name, or a
    spoken (VoxMem) or recurrent-core (AMemOps) memory, is a one-line error naming the ones it takes."""
    from memgym.memory.recurrent.core_memory import CoreMemory
    from memgym.memory.spoken.base import SpokenMemory

    cls = MEMORIES.get(name)  # an unknown name is a one-line error naming the registered ones
    if issubclass(cls, (SpokenMemory, CoreMemory)):
        raise ConfigError(
            f"memory '{name}' reads {'spoken histories' if issubclass(cls, SpokenMemory) else 'audio streams'}, "
            f"not DialogMem episodes; DialogMem takes: {', '.join(embodied_memory_names())}"
        )
    return cls


def embodied_memory_names() -> list[str]:
    """Every registered memory that reads DialogMem episodes (imports every memory module)."""
    from memgym.memory.recurrent.core_memory import CoreMemory
    from memgym.memory.spoken.base import SpokenMemory

    return [n for n in MEMORIES.names() if not issubclass(MEMORIES.get(n), (SpokenMemory, CoreMemory))]


# ----- generate ---------------------------------------------------------------------------------


def scene_specs(config: DialogMemGenerateConfig) -> list[SceneSpec]:
    """The scenes to traverse, in order."""
    if config.source == "procedural":
        house = dataclasses.asdict(config.house)
        if house["clutter"] == "none":  # the scene specs of datasets built before clutter existed
            del house["clutter"]
        return [
            SceneSpec(backend="procedural", seed=config.first_house_seed + i, options={"house": house})
            for i in range(config.scenes)
        ]
    if not config.hm3d_path:
        raise ConfigError("source=hm3d needs hm3d_path=<folder of HM3D scenes>")
    root = require_folder(config.hm3d_path, "hm3d_path", "a folder of HM3D scenes", error=ConfigError)
    meshes = (p for p in root.glob("**/*.glb") if not p.name.endswith(".semantic.glb"))
    # X.glb and X.basis.glb are the same scene (the reader prefers X.glb)
    stems = sorted({p.with_name(p.name.removesuffix(".glb").removesuffix(".basis")) for p in meshes})
    if not stems:
        raise ConfigError(f"hm3d_path {root} holds no <name>.glb or <name>.basis.glb scene files")
    specs = []
    for stem in stems[: config.scenes]:
        options: dict[str, Any] = {}
        if config.goat_path:
            scene_name = stem.name  # "TEEsavR23oF" for TEEsavR23oF.glb / TEEsavR23oF.basis.glb
            candidates = [Path(config.goat_path) / f"{scene_name}{ext}" for ext in (".json.gz", ".json")]
            found = next((c for c in candidates if c.is_file()), None)
            if found is None:
                raise ConfigError(f"goat_path {config.goat_path} has no {scene_name}.json.gz or {scene_name}.json")
            options["annotations"] = str(found)
        specs.append(SceneSpec(backend="hm3d", path=str(stem), options=options))
    return specs


def generate(args: JobArgs) -> Path:
    """Build the dataset (module docstring); returns the JSONL path."""
    config = load_config(DialogMemGenerateConfig, path=args.config_path, overrides=args.overrides)
    out = prepare_output_file(args.out or config.out)
    partial = out.with_name(out.name + ".partial")
    digest = config_hash(config)
    header = {"config_hash": digest, **({"house_clutter": config.house.clutter} if _clutter_counts(config) else {})}
    done = {e.episode_id: e for e in list(_read_partial(partial, header))}
    _writers_needed(config)  # before any work
    specs = scene_specs(config)
    jobs = [(s, spec, k) for s, spec in enumerate(specs) for k in range(config.episodes_per_scene)]
    pending = [(_episode_id(s, k), (s, spec, k)) for s, spec, k in jobs if _episode_id(s, k) not in done]
    with partial.open("a", encoding="utf-8") as handle:
        if partial.stat().st_size == 0:
            handle.write(json.dumps(header) + "\n")
        built = run_ordered(config, functools.partial(EpisodeBuilder, config), pending)
        for episode_id, episode in tqdm(
            built, total=len(pending), desc="dialogmem episodes", disable=not args.progress
        ):
            handle.write(episode.to_json() + "\n")
            handle.flush()
            done[episode_id] = episode
    episodes = [done[_episode_id(s, k)] for s, _, k in jobs]
    write_jsonl(out, episodes)
    stats = dataset_statistics(episodes)
    text = "\n".join(f"## {name}\n\n{to_markdown(table)}" for name, table in stats.items())
    write_text_atomic(out.with_name(out.stem + ".stats.md"), text)
    print(_shortcut_line(stats["summary"][0]))
    write_text_atomic(out.with_name(out.stem + ".config.yaml"), yaml_text(config))
    partial.unlink()
    return out


def _episode_id(scene_index: int, k: int) -> str:
    return f"dialogmem-{scene_index:03d}-{k}"


def _clutter_counts(config: DialogMemGenerateConfig) -> bool:
    """Whether ``house.clutter`` changes the houses of this job (procedural houses with clutter)."""
    return config.source == "procedural" and config.house.clutter != "none"


def episode_digest(config: DialogMemGenerateConfig) -> str:
    """The config hash episode generators derive from: ``house.clutter`` and
    ``construction.unique_cues`` left out (as at their defaults), so the draws do not depend on them
    and ``house.clutter=none construction.unique_cues=false`` draws what datasets built before they
    existed drew."""
    house = dataclasses.replace(config.house, clutter=DEFAULT_CLUTTER)
    construction = dataclasses.replace(config.construction, unique_cues=True)
    return config_hash(dataclasses.replace(config, house=house, construction=construction))


def _shortcut_line(summary: dict[str, Any]) -> str:
    """One printed line: how much of navigation the category (and room) alone decides."""

    def share(key: str) -> str:
        return "-" if summary[key] is None else f"{summary[key]:.1f}%"

    return (
        f"navigation items: {summary['navigation_items']}; target the only observed object of its category: "
        f"{share('navigation_category_unique_%')}; solvable by category + room: "
        f"{share('navigation_category_room_unique_%')}; observed objects / categories per episode: "
        f"{summary['observed_objects_per_episode'] or 0:.1f} / {summary['observed_categories_per_episode'] or 0:.1f}"
    )


class EpisodeBuilder:
    """Builds one episode of a generate job from ``(scene index, scene spec, k)`` (its ``k``-th
    traversal of the scene), with the job's realiser, auditor and writer model; the generator of
    episode ``scene index * episodes_per_scene + k`` depends only on the config, seed and index."""

    def __init__(self, config: DialogMemGenerateConfig) -> None:
        self.config = config
        self.digest = episode_digest(config)
        self.realiser, self.auditor, self.writer = _writers(config)

    def __call__(self, job: tuple[int, SceneSpec, int]) -> DialogMemEpisode:
        scene_index, spec, k = job
        config = self.config
        rng = episode_rng(self.digest, config.seed, scene_index * config.episodes_per_scene + k)
        scene = load_scene(spec)
        traversal = generate_traversal(scene, spec, rng, config.traversal, config.camera)
        residents = None
        if config.profiles == "llm":
            count = int(rng.integers(config.construction.residents_min, config.construction.residents_max + 1))
            residents = profiles_from_reasoner(self.writer, [r.name for r in scene.regions], count, rng)
        return build_episode(
            episode_id=_episode_id(scene_index, k),
            objects=scene.objects,
            traversal=traversal,
            rng=rng,
            config=config.construction,
            realiser=self.realiser,
            auditor=self.auditor,
            residents=residents,
        )


def _writers_needed(config: DialogMemGenerateConfig) -> bool:
    """Whether the job needs the writer model.

    Raises:
        ConfigError: it does and ``writer.backend`` is not a language model.
    """
    needs_model = config.realiser == "llm" or config.audit or config.profiles == "llm"
    if needs_model and config.writer.backend == "structured":
        raise ConfigError(
            "realiser=llm, profiles=llm and audit=true need writer.backend=hf or openai (a language model)"
        )
    return needs_model


def _writers(config: DialogMemGenerateConfig):
    needs_model = _writers_needed(config)
    model = build_reasoner(config.writer) if needs_model else None
    realiser = LLMRealiser(model) if config.realiser == "llm" else TemplateRealiser()
    return realiser, (GroundingAuditor(model) if config.audit else None), model


def _read_partial(path: Path, expected: dict[str, str]) -> Iterator[DialogMemEpisode]:
    if not path.exists():
        return
    lines = complete_jsonl_lines(path)  # the episode in flight when the run stopped is built again
    if lines:
        header = json.loads(lines[0][1])
        if header != expected:  # the hash, and the clutter (its default kept the hash of older files)
            raise RecordError(f"{path} was written by another config; delete it to start over")
    for number, line in lines[1:]:
        yield from_json(line, where=f"{path}:{number}")


# ----- eval -------------------------------------------------------------------------------------


def load_episodes(path: Path) -> tuple[list[DialogMemEpisode], list[tuple[str, dict[str, Any]]]]:
    """Episodes of a dataset file plus error rows for unusable ones (duplicates, dangling ids)."""
    require_file(path, "dataset", "a .jsonl file", hint="run 'memgym generate dialogmem' first", error=RecordError)
    episodes, errors, seen = [], [], set()
    for number, line in text_lines(path):
        if not line.strip():
            continue
        episode = from_json(line, where=f"{path}:{number}")
        if not isinstance(episode, DialogMemEpisode):
            errors.append((f"line{number}", {"error": f"{path}:{number}: not a dialogmem.episode record"}))
            continue
        if episode.episode_id in seen:
            errors.append(
                (
                    f"{episode.episode_id}@line{number}",
                    {"episode_id": episode.episode_id, "error": f"{path}:{number}: duplicated episode id"},
                )
            )
            continue
        seen.add(episode.episode_id)
        try:
            episode.check()
        except RecordError as exc:
            errors += [
                (i.item_id, {"episode_id": episode.episode_id, "item_id": i.item_id, "error": str(exc)})
                for i in episode.items
            ]
            continue
        episodes.append(episode)
    if not episodes and not errors:
        raise RecordError(f"dataset {path} holds no episodes")
    return episodes, errors


def item_key(episode: DialogMemEpisode, item: TaskItem) -> str:
    """Result key of an item: ``episode_id|item_id`` (unique even if item ids repeat across episodes)."""
    return f"{episode.episode_id}|{item.item_id}"


def evaluate(args: JobArgs) -> Path:
    """Evaluate each memory with the reasoner on a dataset and compare them (module docstring);
    returns the run folder (``RUNS/eval-dialogmem/NAME``)."""
    config = load_config(DialogMemEvalConfig, path=args.config_path, overrides=args.overrides)
    if config.sweep:
        from memgym.pipelines.dialogmem_sweep import run_sweep

        return run_sweep(config, args)
    names = config.memory_names()
    episodes, errors = load_episodes(Path(config.dataset))
    if config.max_episodes:
        episodes = episodes[: config.max_episodes]
    shared = dataclasses.replace(config, memory="", memories=())
    folder_name = config.name or config_hash(shared)
    rows, stores = {}, []
    for name in names:
        # each memory is its own resumable store, hashed without the list: adding a memory to
        # memories=[...] later reuses the results of the others
        memory_config = store_config(dataclasses.replace(config, memory=name, memories=()))
        store = RunStore.open(args.runs_dir, "eval-dialogmem", memory_config, name=f"{folder_name}/{name}")
        evaluate_memory(memory_config, store, episodes, errors, args.progress)
        rows[name] = store.rows()
        stores.append(store)
    folder = Path(args.runs_dir) / "eval-dialogmem" / folder_name
    maps = {name: EpisodeTable(store.folder / MAP_FILE).load() for name, store in zip(names, stores)}
    write_comparison(folder, rows, seed=config.bootstrap_seed, n_resamples=config.bootstrap_resamples, maps=maps)
    links = {name: LinkLog(store.folder / "links.json").total() for name, store in zip(names, stores)}
    lines = [f"- {n}: {c.quality or 0.0:.1f}% ({c.correct} of {c.linkable})" for n, c in links.items() if c.turns]
    if lines:  # snapshot memories: the share of linkable turns linked to a snapshot showing their object
        with (folder / "comparison.md").open("a", encoding="utf-8") as handle:
            handle.write("\nLink quality (linkable turns linked to a snapshot showing an object they refer to):\n\n")
            handle.write("\n".join(lines) + "\n")
    return folder


def store_config(config: DialogMemEvalConfig) -> DialogMemEvalConfig:
    """``config`` as the run store of ``config.memory`` records it: a visual memory's default
    perception (``''``) written out as ``simulated``, so its results are not filed under the hash of
    the runs made before simulated perception existed (those used exact perception); the configs
    of other memories are unchanged."""
    from memgym.memory.embodied.visual_memory import VisualMemory

    if config.visual.perception or not issubclass(embodied_memory(config.memory), VisualMemory):
        return config
    return dataclasses.replace(config, visual=dataclasses.replace(config.visual, perception="simulated"))


def build_memory(config: DialogMemEvalConfig) -> Any:
    """``config.memory`` built with the options it takes: a visual memory gets ``config.visual`` and
    the formation camera's field of view, height and depth clip; other memories take none."""
    from memgym.memory.embodied.frames import FramesMemory
    from memgym.memory.embodied.object_memory import ObjectMemory
    from memgym.memory.embodied.snapshots import LinkedSnapshotMemory
    from memgym.memory.embodied.visual_memory import VisualMemory

    cls = embodied_memory(config.memory)
    if not issubclass(cls, VisualMemory):
        return cls()
    visual, camera = config.visual, config.camera
    options: dict[str, Any] = {
        "detector": visual.detector,
        "perception": visual.perception or "simulated",
        "noise": visual.noise,
        "encoder_model": visual.encoder_model or None,
        "hfov": camera.hfov,
        "sensor_height": camera.sensor_height,
        "max_depth": camera.max_depth,
        "stride": visual.stride,
        "voxel": visual.voxel,
        "device": visual.device,
    }
    if issubclass(cls, FramesMemory):
        options["num_frames"] = visual.num_frames
    if issubclass(cls, ObjectMemory):
        options["threshold"] = visual.threshold
    if issubclass(cls, LinkedSnapshotMemory):
        options["link"] = dataclasses.asdict(config.link)
    return cls(**options)


def qa_scorers(config: DialogMemEvalConfig, cache_path: Path | None) -> dict[str, Any]:
    """``{"qa": LLM-match scorer}`` for ``qa_scorer=llm_match`` (judge ratings cached at
    ``cache_path``; None: in memory), else ``{}`` (the env's token F1)."""
    from memgym.tasks.llm_match import JudgeCache, LLMMatchScorer

    if config.qa_scorer != "llm_match":
        return {}
    if config.judge.backend == "structured":
        raise ConfigError("qa_scorer=llm_match needs judge.backend=hf or openai with judge.model set")
    judge = build_reasoner(config.judge)
    cache = JudgeCache(cache_path) if cache_path is not None else None
    return {"qa": LLMMatchScorer(judge, config.judge.identity(), cache, config.judge.max_new_tokens)}


def build_env(config: DialogMemEvalConfig, memory: Any, scorers: dict[str, Any]) -> Any:
    """The :class:`~memgym.envs.dialogmem_env.DialogMemEnv` that evaluates ``memory`` (semantic
    frames when its detector reads them)."""
    from memgym.envs.dialogmem_env import DialogMemEnv, DialogMemEnvConfig

    env_config = DialogMemEnvConfig(
        camera=config.camera,
        execute_navigation=config.execute_navigation,
        semantic=getattr(memory, "needs_semantic", False),
        frame_cache=config.frame_cache,
    )
    return DialogMemEnv(env_config, scorers=scorers)


def evaluate_memory(
    config: DialogMemEvalConfig,
    store: RunStore,
    episodes: list[DialogMemEpisode],
    errors: list[tuple[str, dict[str, Any]]],
    progress: bool,
    only: set[str] | None = None,
) -> None:
    """Play every pending item of ``episodes`` (those whose :func:`item_key` is in ``only``, when
    given) with ``config.memory`` into ``store`` (on ``config.executor``, one episode per task);
    write its tables. The tokens and seconds of the reasoner's and judge's replies go to the run's
    ``environment.json`` after each episode."""
    for key, row in errors:
        if key not in store.recorded_keys() and (only is None or key in only):
            store.append(key, row)
    done = store.done_keys()
    work = []
    for episode in episodes:
        chosen = [i for i in episode.items if only is None or item_key(episode, i) in only]
        pending = frozenset(i.item_id for i in chosen if item_key(episode, i) not in done)
        if pending:
            work.append((episode.episode_id, (episode, pending)))
    # Ray workers do not write the run folder: their judge ratings are cached in memory only
    cache = store.folder / "judge_cache.jsonl" if config.executor == "local" else None
    links = LinkLog(store.folder / "links.json")
    played = run_ordered(config, functools.partial(EpisodePlayer, config, cache), work)
    for episode_id, results in tqdm(played, total=len(work), desc=f"episodes ({config.memory})", disable=not progress):
        store.append_many(results.rows)
        record_counts(store, results.throughput)
        if results.links is not None:
            links.save(episode_id, results.links)
        if results.map is not None:
            EpisodeTable(store.folder / MAP_FILE).save(episode_id, results.map)
        if results.memory is not None:
            with (store.folder / "memory.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(results.memory) + "\n")
    write_tables(store)


class EpisodeResults:
    """What playing one episode produced: ``rows`` (``(key, row)`` per scored item), the memory's
    ``links`` (snapshot memories), with ``save_memory`` its ``memory`` contents after use, and the
    models' ``throughput`` (:func:`take_throughput`); it stands in for the store and link log of
    :func:`use`."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict[str, Any]]] = []
        self.links: LinkCounts | None = None
        self.map: dict[str, int] | None = None
        self.memory: dict[str, Any] | None = None
        self.throughput: dict[str, dict[str, Any]] = {}

    def append(self, key: str, row: dict[str, Any]) -> None:
        self.rows.append((key, row))

    def record(self, episode: DialogMemEpisode, memory: Any) -> LinkCounts:
        self.links = measure_links(episode, memory)
        return self.links


class EpisodePlayer:
    """Plays ``(episode, item ids to score)`` with ``config.memory`` and the reasoner; returns its
    :class:`EpisodeResults`. Judge ratings are cached in ``judge_cache`` (None: in memory)."""

    def __init__(self, config: DialogMemEvalConfig, judge_cache: Path | None) -> None:
        from memgym.agents.reasoner_agent import ReasonerAgent

        memory = build_memory(config)
        scorers = qa_scorers(config, judge_cache)
        reasoner = build_reasoner(config.reasoner)
        self.save_memory = config.save_memory
        self.env = build_env(config, memory, scorers)
        self.agent = ReasonerAgent(memory, reasoner, config.reasoner.max_new_tokens, config.answer_tokens)
        self.models = {"reasoner": reasoner, "judge": getattr(scorers.get("qa"), "judge", None)}

    def __call__(self, job: tuple[DialogMemEpisode, frozenset[str]]) -> EpisodeResults:
        episode, pending = job
        results = EpisodeResults()
        observation, info = form(self.env, self.agent, episode, set(pending))
        results.map = measure_map(episode, self.agent.memory)
        use(self.env, self.agent, episode, set(pending), results, results, observation, info)
        if self.save_memory:  # after use: snapshot memories are linked by then
            results.memory = {"episode_id": episode.episode_id, **memory_contents(self.agent.memory)}
        results.throughput = take_throughput(self.models)
        return results


def form(env, agent, episode: DialogMemEpisode, pending: set[str]) -> tuple[Any, dict[str, Any]]:
    """Play ``episode``'s formation phase into ``agent``'s memory (scoring only ``pending`` items
    later); returns the first use-phase observation and info."""
    observation, info = env.reset(options={"episode": episode, "score_items": pending})
    agent.reset()
    if hasattr(agent.memory, "bind_episode"):  # ground-truth probes; the gt detector's label table
        agent.memory.bind_episode(episode)
    formation_action = env.formation_action()
    while info["phase"] == "formation":
        agent.act(observation, info, formation_action)
        observation, _, _, _, info = env.step(formation_action)
    return observation, info


def use(
    env, agent, episode: DialogMemEpisode, pending: set[str], store: RunStore, links: LinkLog, observation, info
) -> None:
    """Answer ``episode``'s items from the formed memory; append a row per ``pending`` item to
    ``store`` and the memory's link counts (snapshot memories) to ``links``."""
    if hasattr(agent.memory, "snapshots"):  # link quality, measured from the episode's annotations
        agent.memory.bind_reasoner(agent.reasoner)
        links.record(episode, agent.memory)
    formation_action = env.formation_action()
    located = Localisation(episode, agent.memory)
    for item in episode.items:
        error = None
        action = formation_action
        if item.item_id in pending:
            try:
                action = agent.answer(observation, info)
            except ReasonerError as exc:
                error = str(exc)
        observation, _, _, _, info = env.step(action)
        if item.item_id not in pending:
            continue
        score = dict(info["score"])
        row: dict[str, Any] = {
            "episode_id": episode.episode_id,
            "item_id": item.item_id,
            "task": item.task,
            "prompt": item.prompt,
            "reference": item.answer if item.task == "qa" else item.answer.get("object_id"),
            "prediction": action.get("text", "") if error is None else None,
            **{k: v for k, v in item.annotations.items() if k not in ("evidence_turns",)},
            **score,
        }
        if item.task == "navigation":  # the slices of the comparison: an identifying cue was updated
            row["updated"] = bool(item.annotations.get("cue_updated", False))
        if item.task == "navigation" and error is None:
            row["predicted_position"] = np.asarray(action["position"], float).round(3).tolist()
            row.update(located.of(item, action))
        if error is not None:
            row.update({"error": error, "reward": None})
            for metric in ("geodesic_success", "execution_success", "spl", "token_f1", "llm_match"):
                row.pop(metric, None)
        store.append(item_key(episode, item), row)


class Localisation:
    """How far a navigation answer lands from the target: ``location_error`` (m, 3D distance of the
    answered position to the target's annotated centre; absent when the answer localises nothing)
    and, for a memory of fused instances, ``picked_target`` (whether the entry it picked shows the
    target in most of its views: the location error of those items is the error of the memory's
    3D estimate, not of its choice)."""

    def __init__(self, episode: DialogMemEpisode, memory: Any) -> None:
        from memgym.memory.embodied.ground_truth import SceneTruth

        self.truth = SceneTruth.of(episode)
        self.provenance = getattr(memory, "provenance", None)

    def of(self, item: TaskItem, action: dict[str, Any]) -> dict[str, Any]:
        """The columns of ``item``'s row for the answer ``action``."""
        from memgym.memory.embodied.ground_truth import main_object

        target = item.answer.get("object_id")
        position = np.asarray(action["position"], float)
        if target not in self.truth.positions or not np.all(np.isfinite(position)):
            return {}
        out: dict[str, Any] = {
            "location_error": round(float(np.linalg.norm(position - self.truth.positions[target])), 4)
        }
        if self.provenance:
            entry = str(action.get("text", "")).strip().removeprefix("OBJECT").strip()
            if entry in self.provenance:
                out["picked_target"] = main_object(self.truth, self.provenance, entry) == target
        return out


class EpisodeTable:
    """A JSON file of one record (a mapping) per episode id, replaced when saved again."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, dict[str, int]]:
        """Episode id -> its record."""
        return json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}

    def save(self, episode_id: str, record: Any) -> None:
        """Store one episode's record (a mapping or a dataclass), replacing an earlier one."""
        table = self.load()
        table[episode_id] = dataclasses.asdict(record) if dataclasses.is_dataclass(record) else dict(record)
        write_text_atomic(self.path, json.dumps(table, indent=1, sort_keys=True))


class LinkLog(EpisodeTable):
    """Per-episode link counts of a snapshot memory (``links.json`` in its store), measured outside
    the memory from the episode's annotations (:mod:`memgym.memory.embodied.ground_truth`)."""

    def record(self, episode: DialogMemEpisode, memory: Any) -> LinkCounts:
        """Measure ``memory``'s links after ``episode``'s formation and store them."""
        counts = measure_links(episode, memory)
        self.save(episode.episode_id, counts)
        return counts

    def total(self, episodes: set[str] | None = None) -> LinkCounts:
        """Counts summed over the recorded episodes (those in ``episodes`` when given)."""
        counts = [LinkCounts(**c) for e, c in self.load().items() if episodes is None or e in episodes]
        return sum(counts, LinkCounts())


MAP_FILE = "map.json"
"""Per-episode instance merges and splits of an object memory's map, in its store."""


def measure_map(episode: DialogMemEpisode, memory: Any) -> dict[str, int] | None:
    """Merges and splits of an object ``memory``'s map after ``episode``'s formation
    (:func:`~memgym.memory.embodied.ground_truth.map_errors`); None for other memories or without
    the annotated ids under its masks."""
    from memgym.memory.embodied.ground_truth import SceneTruth, map_errors

    if not getattr(memory, "provenance", None):
        return None
    return map_errors(SceneTruth.of(episode), memory.objects.instances, memory.provenance)


def measure_links(episode: DialogMemEpisode, memory: Any) -> LinkCounts:
    """Link counts of a snapshot ``memory`` after ``episode``'s formation."""
    from memgym.memory.embodied.ground_truth import (
        SceneTruth,
        link_counts,
        match_instances,
        snapshot_contents,
        turn_references,
    )

    snapshots = memory.snapshots()
    references = turn_references(episode, memory.turns)
    contents = snapshot_contents(snapshots, match_instances(SceneTruth.of(episode), memory.objects.instances))
    return link_counts(references, {s.id: s.turns for s in snapshots}, contents)


METRICS = ("geodesic_success", "execution_success", "spl", "llm_match", "token_f1")


def write_tables(store: RunStore) -> Path:
    """``results.md``: metrics by task and content type, and QA by verbalised / updated."""
    rows = [r for r in store.rows() if "task" in r]
    present = [m for m in METRICS if any(r.get(m) is not None for r in rows)]
    percent = [
        {**r, **{m: 100.0 * r[m] if m != "llm_match" and r.get(m) is not None else r.get(m) for m in present}}
        for r in rows
    ]
    errors = sum(1 for r in store.rows() if r.get("error"))
    counts = LinkLog(store.folder / "links.json").total()
    parts = [
        "## overall\n",
        to_markdown(aggregate(percent, ["task"], present)),
        "## by content type\n",
        to_markdown(aggregate(percent, ["task", "content_type"], present)),
    ]
    qa = [r for r in percent if r["task"] == "qa"]
    qa_metrics = [m for m in ("llm_match", "token_f1") if m in present]
    if qa and qa_metrics:
        parts += ["## QA by verbalised / updated\n", to_markdown(aggregate(qa, ["verbalised", "updated"], qa_metrics))]
    if counts.turns:
        parts.append(
            f"\nLink quality: {counts.quality or 0.0:.1f}% ({counts.correct} of {counts.linkable} linkable turns "
            f"linked to a snapshot showing an object they refer to; {counts.linked} of {counts.turns} turns linked).\n"
        )
    parts.append(f"\n{errors} item(s) with errors (see results.jsonl, column 'error'). Scores are percentages.\n")
    return store.write_text("results.md", "\n".join(parts))


# ----- quickstart -------------------------------------------------------------------------------

QUICKSTART_GENERATE = (
    "scenes=2",
    "house.max_rooms=5",
    "traversal.min_goals=3",
    "traversal.max_goals=4",
    "camera.width=64",
    "camera.height=48",
)


def quickstart_generate_eval(report_dir: Path, args: JobArgs) -> tuple[str, tuple[str, ...]]:
    """A small generate -> eval of the ``dialogue`` memory and the ``oracle`` probe with the
    structured reasoner; returns (markdown, plot paths relative to ``report_dir``).

    Writes the dataset under ``report_dir/dialogmem/data`` and the run (one folder per memory
    and the comparison) under ``report_dir/dialogmem/runs/eval-dialogmem/quickstart``; everything
    resumes when run again.
    """
    folder = report_dir / "dialogmem"
    folder.mkdir(parents=True, exist_ok=True)
    dataset = folder / "data" / "episodes.jsonl"
    if not dataset.is_file():
        generate(dataclasses.replace(args, overrides=QUICKSTART_GENERATE, config_path=None, out=dataset))
    overrides = (
        f"dataset={dataset}",
        "memories=[dialogue,oracle]",
        "camera.width=64",
        "camera.height=48",
        "execute_navigation=true",
        "name=quickstart",
    )
    job = dataclasses.replace(args, overrides=overrides, config_path=None, out=None, runs_dir=folder / "runs")
    run = evaluate(job)
    rows = {memory: RunStore(run / memory, config_digest="").rows() for memory in ("dialogue", "oracle")}
    comparison: dict[str, dict[str, Any]] = {}
    for cell in comparison_rows(rows):  # the defaults of DialogMemEvalConfig: as in comparison.md
        if cell["slice"] == "overall":
            comparison.setdefault(cell["memory"], {"memory": cell["memory"]})[f"{cell['task']} {cell['metric']}"] = (
                cell["mean"]
            )
    stats = dataset_statistics(Dataset.load(dataset))
    plot = run / "comparison.png"
    markdown = "\n".join(
        [
            f"Small dataset `{dataset}` (2 generated houses, template dialogue):",
            "",
            to_markdown(stats["summary"]),
            to_markdown(stats["items"]),
            "Evaluation with the offline `structured` reasoner: the `dialogue` memory (raw transcript; it stores "
            "no poses, so it cannot localise) against the `oracle` probe (ground-truth facts and locations, an "
            "upper bound that checks items and scoring). QA by token F1 (no judge model configured), "
            "navigation by geodesic success, execution success and SPL (%):",
            "",
            to_markdown(list(comparison.values()), digits=1),
            f"Per content type, verbalised and updated, with 95% bootstrap intervals (`{run}/comparison.md`):",
            "",
            (run / "comparison.md").read_text(encoding="utf-8").split("\n", 1)[1],
        ]
    )
    return markdown, (str(plot.relative_to(report_dir)),)
