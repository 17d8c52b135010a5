"""The ``dialogmem`` benchmark plug-in: embodied jobs of the CLI.

* ``memgym render dialogmem [episodes=FILE episode_id=ID | house_seed=N seed=S] [--out X.mp4]``
  writes a trajectory video (first-person RGB beside the top-down map) of a stored episode or
  of a freshly generated traversal.
* ``memgym generate dialogmem [key=value ...] [--out FILE]`` builds the dataset (27 generated
  houses by default, or ``source=hm3d hm3d_path=... goat_path=...``); see
  :mod:`memgym.pipelines.dialogmem.generation`.
* ``memgym eval dialogmem memories=[dialogue,oracle] reasoner.backend=... [qa_scorer=llm_match judge.*]``
  evaluates each memory with the reasoner on the same items, resumably, into
  ``RUNS/eval-dialogmem/NAME/<memory>/`` and compares them in ``RUNS/eval-dialogmem/NAME/comparison.*``
  (``memory=dialogue`` evaluates one; :mod:`memgym.pipelines.dialogmem.evaluation`);
  ``sweep=link_quality`` runs the linking diagnosis instead (:mod:`memgym.pipelines.dialogmem.link_sweep`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memgym.core.benchmark import Benchmark, JobArgs, benchmark_info
from memgym.core.config import load_config
from memgym.core.episode import Dataset
from memgym.core.errors import MemgymError
from memgym.core.outputs import prepare_output_file
from memgym.core.registry import REASONERS, register_benchmark
from memgym.core.scoring import task_scorer_names
from memgym.core.seeding import config_hash, episode_rng
from memgym.datasets.embodied import EmbodiedEpisode
from memgym.datasets.traversal import Traversal, TraversalConfig, generate_traversal
from memgym.pipelines.dialogmem import evaluation, generation, link_sweep
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig, embodied_memory_names
from memgym.pipelines.trajectory_video import trajectory_frames, write_video
from memgym.scenes.procedural import HouseConfig
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig


@dataclasses.dataclass(frozen=True)
class RenderConfig:
    """``memgym render dialogmem`` keys."""

    episodes: str = dataclasses.field(default="", metadata={"help": "episodes JSONL; empty: generate a traversal"})
    episode_id: str = dataclasses.field(default="", metadata={"help": "episode to render (default: the first)"})
    house_seed: int = dataclasses.field(default=0, metadata={"help": "generated house when no episodes file is given"})
    seed: int = dataclasses.field(default=0, metadata={"help": "traversal seed when generating"})
    house: HouseConfig = dataclasses.field(default_factory=HouseConfig, metadata={"help": "house generation"})
    traversal: TraversalConfig = dataclasses.field(default_factory=TraversalConfig, metadata={"help": "traversal"})
    camera: CameraConfig = dataclasses.field(default_factory=CameraConfig, metadata={"help": "camera"})
    fps: int = dataclasses.field(default=8, metadata={"help": "video frames per second"})
    stride: int = dataclasses.field(default=1, metadata={"help": "render every n-th formation frame"})
    format: str = dataclasses.field(default="mp4", metadata={"help": "mp4 or gif (when --out is not given)"})


@register_benchmark("dialogmem")
class DialogMemBenchmark(Benchmark):
    """DialogMem: dialogue-grounded embodied memory in 3D houses (seed 003)."""

    name = "dialogmem"
    description = "embodied traversals (RGB-D + pose) with dialogue; navigation and QA from memory"
    info = benchmark_info("dialogmem")

    def job_configs(self, job: str) -> dict[str, type]:
        configs = {
            "generate": generation.DialogMemGenerateConfig,
            "eval": DialogMemEvalConfig,
            "render": RenderConfig,
        }
        return {"": configs[job]} if job in configs else {}

    def accepted_names(self, job: str) -> dict[str, list[str]]:
        """Eval takes the memories that read only what DialogMem gives (no audio; the plugin table's
        reads column), reasoners (``reasoner.backend=``, ``judge.backend=``) and the scorers of
        ``qa`` items (``qa_scorer=``)."""
        if job != "eval":
            return {}
        return {
            "memories (memory=, memories=[...])": embodied_memory_names(),
            "reasoners (reasoner.backend=)": REASONERS.names(),
            "scorers (qa_scorer=)": task_scorer_names("qa"),
        }

    def generate(self, args: JobArgs) -> Path:
        """Build the DialogMem dataset (:func:`memgym.pipelines.dialogmem.generation.generate`)."""
        return generation.generate(args)

    def eval(self, args: JobArgs) -> Path:
        """Evaluate and compare memories with a reasoner (:func:`memgym.pipelines.dialogmem.evaluation.evaluate`),
        or with ``sweep=link_quality`` run the linking diagnosis (:func:`memgym.pipelines.dialogmem.link_sweep.run_sweep`)."""
        config = load_config(DialogMemEvalConfig, path=args.config_path, overrides=args.overrides)
        return link_sweep.run_sweep(config, args) if config.sweep else evaluation.evaluate(args, config)

    def render(self, args: JobArgs) -> Path:
        config = load_config(RenderConfig, path=args.config_path, overrides=args.overrides)
        if config.format not in ("mp4", "gif"):
            raise MemgymError(f"format must be mp4 or gif, got {config.format!r}")
        if args.out is not None:
            prepare_output_file(args.out)  # before the traversal is generated
        traversal, name = self._traversal_to_render(config, args.progress)
        scene = load_scene(traversal.scene)
        out = prepare_output_file(args.out or Path(args.runs_dir) / "dialogmem" / "render" / f"{name}.{config.format}")
        frames = trajectory_frames(scene, traversal, stride=config.stride)  # the camera it was recorded with
        total = len(traversal.frames[:: max(1, config.stride)])
        path = write_video(frames, Path(out), fps=config.fps, total=total, progress=args.progress)
        print(f"wrote {path} ({total} frames)")
        return path

    def _traversal_to_render(self, config: RenderConfig, progress: bool) -> tuple[Traversal, str]:
        if config.episodes:
            dataset = Dataset.load(config.episodes)
            if not len(dataset):
                raise MemgymError(f"{config.episodes} holds no episodes")
            episode = dataset.by_id(config.episode_id) if config.episode_id else dataset[0]
            if not isinstance(episode, EmbodiedEpisode):
                raise MemgymError(f"{config.episodes}: episode '{episode.episode_id}' has no traversal to render")
            return episode.traversal, episode.episode_id
        spec = SceneSpec(
            backend="procedural", seed=config.house_seed, options={"house": dataclasses.asdict(config.house)}
        )
        rng = episode_rng(config_hash({"traversal": config.traversal, "camera": config.camera}), config.seed, 0)
        traversal = generate_traversal(load_scene(spec), spec, rng, config.traversal, config.camera, progress=progress)
        return traversal, f"house{config.house_seed}-seed{config.seed}"
