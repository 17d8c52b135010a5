"""``memgym generate voxmem``, and ``memgym eval voxmem``.

    memgym generate voxmem items=30 budgets=[8k,16k,32k,64k] out=runs/voxmem/dataset
    memgym generate voxmem tts.kind=openai tts.base_url=http://127.0.0.1:8000/v1 tts.voices=[alloy,echo,fable]
    memgym generate voxmem items=15 qc_model=offline   # QC-1 model pass: recogniser + signal measurements
    memgym generate voxmem library.kind=esc50 library.root=/data/ESC-50 filler_path=/data/InstructS2S
    memgym eval voxmem dataset=runs/voxmem/dataset models=[structured] memories=[cascaded,oracle_tags]
    memgym train voxmem out=runs/voxmem_audio_lm    # the small audio LM; then models=[hf_audio:runs/voxmem_audio_lm/model]
    memgym generate voxmem preset=decisive && memgym eval voxmem preset=decisive   # docs/voxmem_eval.md

Re-running a command reuses every audio file already in the folder (content-hashed names).
"""

from __future__ import annotations

from pathlib import Path

from memgym.core.benchmark import Benchmark, JobArgs, benchmark_info
from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.core.outputs import make_writable_folder
from memgym.core.registry import REASONERS, register_benchmark
from memgym.core.scoring import task_scorer_names
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.pipelines.voxmem.presets import apply_preset


@register_benchmark("voxmem")
class VoxMemBenchmark(Benchmark):
    """VoxMem: spoken multi-session memory (speech, speaker, paralinguistic, sound x IE/MSR/TET/AR)."""

    name = "voxmem"
    description = "spoken multi-session memory histories (15 cells, 8K-64K token budgets)"
    info = benchmark_info("voxmem")

    def job_configs(self, job: str) -> dict[str, type]:
        if job == "generate":
            return {"": VoxMemConfig}
        if job == "eval":
            from memgym.pipelines.voxmem.evaluation import VoxMemEvalConfig

            return {"": VoxMemEvalConfig}
        if job == "train":
            from memgym.pipelines.voxmem.audio_lm.config import AudioLMTrainConfig

            return {"": AudioLMTrainConfig}
        return {}

    def accepted_names(self, job: str) -> dict[str, list[str]]:
        """Eval takes the VoxMem memories, reasoners (``models=[...]`` specs name one) and the
        scorers of ``spoken_qa`` items (``scorer=``); generate takes reasoners for writing and QC (``reasoner=``, ``qc_reasoner=``)."""
        if job == "generate":
            return {"reasoners (reasoner=, qc_reasoner=)": REASONERS.names()}
        if job != "eval":
            return {}
        from memgym.pipelines.voxmem.evaluation import voxmem_memory_names

        return {
            "memories (memory= or memories=[...])": voxmem_memory_names(),
            "reasoners (models=[...])": REASONERS.names(),
            "scorers (scorer=)": task_scorer_names("spoken_qa"),
        }

    def generate(self, args: JobArgs) -> Path:
        values = {"out": str(args.out)} if args.out else None
        overrides, _ = apply_preset(args.overrides, "generate")
        config = load_config(VoxMemConfig, path=args.config_path, overrides=overrides, values=values)
        if config.executor != "local":
            raise ConfigError(
                "executor: 'memgym generate voxmem' runs locally only (each item reuses sessions of earlier "
                "items and AR items edit their source's history, so items cannot be built apart); 'memgym eval "
                "voxmem' takes executor=ray"
            )
        make_writable_folder(Path(config.out), f"output folder {config.out}")  # before any synthesis
        qc_model = None
        if config.qc_model not in ("", "offline"):  # an audio LM listens to the evidence sessions
            from memgym.pipelines.voxmem.models import build_model

            qc_model = build_model(config.qc_model, device=config.tts.device)
        return VoxMemBuilder(config, qc_model=qc_model, progress=args.progress).build()

    def train(self, args: JobArgs) -> Path:
        """The small audio LM (Whisper tiny.en + SmolLM2-135M) for ``hf_audio:<out>/model``
        (:mod:`memgym.pipelines.voxmem.audio_lm.train`); returns the model folder."""
        from memgym.pipelines.voxmem.audio_lm.config import AudioLMTrainConfig
        from memgym.pipelines.voxmem.audio_lm.train import train

        values = {"out": str(args.out)} if args.out else None
        config = load_config(AudioLMTrainConfig, path=args.config_path, overrides=args.overrides, values=values)
        return train(config, progress=args.progress)

    def eval(self, args: JobArgs) -> Path:
        """Models x memories x budgets (see :mod:`memgym.pipelines.voxmem.evaluation`); returns the run folder."""
        from memgym.pipelines.voxmem.evaluation import evaluate

        return evaluate(args)
