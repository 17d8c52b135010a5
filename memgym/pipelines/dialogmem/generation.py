"""``memgym generate dialogmem``: the DialogMem dataset.

Resumable: for each scene (27 generated houses by default, or HM3D scene folders with GOAT-style
annotations) sample a traversal and build a DialogMem episode; every finished episode is appended
to ``OUT.partial`` so an interrupted run continues where it stopped; at the end the episodes are
written to ``OUT`` (JSONL), with ``OUT.stats.md`` (dataset statistics) and ``OUT.config.yaml``
beside it. ``executor=ray`` (``ray_address=``, ``workers=``) builds the episodes on Ray workers
(:mod:`memgym.core.executors`, docs/scaling.md); this process writes the same files in the same
order.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from memgym.backends.config import ReasonerConfig, build_reasoner
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config, yaml_text
from memgym.core.errors import ConfigError, RecordError
from memgym.core.executors import executor_field, ray_address_field, run_ordered, worker_gpus_field, workers_field
from memgym.core.outputs import prepare_output_file, write_text_atomic
from memgym.core.paths import require_folder
from memgym.core.records import from_json, write_jsonl
from memgym.core.results import to_markdown
from memgym.core.seeding import config_hash, episode_rng, hashed_dict
from memgym.core.textfiles import complete_jsonl_lines
from memgym.datasets.dialogmem.defaults import DEFAULT_CLUTTER, DEFAULT_ROOMS, default_construction, default_house
from memgym.datasets.dialogmem.episode import ConstructionConfig, DialogMemEpisode, build_episode
from memgym.datasets.dialogmem.realise import LLMRealiser, TemplateRealiser
from memgym.datasets.dialogmem.residents import profiles_from_reasoner
from memgym.datasets.dialogmem.statistics import dataset_statistics
from memgym.datasets.dialogmem.validation import GroundingAuditor
from memgym.datasets.traversal import TraversalConfig, generate_traversal
from memgym.scenes.procedural import HouseConfig
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig


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
        default_factory=default_house,
        metadata={
            "help": f"procedural houses ({DEFAULT_ROOMS[0]}-{DEFAULT_ROOMS[1]} rooms, clutter {DEFAULT_CLUTTER} unless "
            "set; clutter=none: the houses before clutter)"
        },
    )
    traversal: TraversalConfig = field(default_factory=TraversalConfig, metadata={"help": "traversals"})
    camera: CameraConfig = field(default_factory=CameraConfig, metadata={"help": "camera stored with traversals"})
    construction: ConstructionConfig = field(
        default_factory=default_construction,
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
    existed drew; ``construction.max_sighting_gap`` left out too (it changes which ``times_seen``
    words the annotation writes, not the traversals or draws: ``construction.max_sighting_gap=0``
    draws what datasets built before it existed drew, under the earlier hash's draws)."""
    house = dataclasses.replace(config.house, clutter=DEFAULT_CLUTTER)
    construction = dataclasses.replace(config.construction, unique_cues=True)
    data = hashed_dict(dataclasses.replace(config, house=house, construction=construction))
    del data["construction"]["max_sighting_gap"]
    return config_hash(data)


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
