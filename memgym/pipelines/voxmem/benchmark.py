"""``memgym generate voxmem``, ``memgym eval voxmem`` and the VoxMem quickstart.

    memgym generate voxmem items=30 budgets=[8k,16k,32k,64k] out=runs/voxmem/dataset
    memgym generate voxmem tts.kind=openai tts.base_url=http://127.0.0.1:8000/v1 tts.voices=[alloy,echo,fable]
    memgym generate voxmem items=15 qc_model=offline   # QC-1 model pass: recogniser + signal measurements
    memgym generate voxmem library.kind=esc50 library.root=/data/ESC-50 filler_path=/data/InstructS2S
    memgym eval voxmem dataset=runs/voxmem/dataset models=[structured] memories=[cascaded,oracle_tags]

Re-running a command reuses every audio file already in the folder (content-hashed names).
"""

from __future__ import annotations

from pathlib import Path

from memgym.core.benchmark import Benchmark, JobArgs, ReportSection
from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.core.outputs import make_writable_folder
from memgym.core.registry import REASONERS, register_benchmark
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig


@register_benchmark("voxmem")
class VoxMemBenchmark(Benchmark):
    """VoxMem: spoken multi-session memory (speech, speaker, paralinguistic, sound x IE/MSR/TET/AR)."""

    name = "voxmem"
    description = "spoken multi-session memory histories (15 cells, 8K-64K token budgets)"

    def job_configs(self, job: str) -> dict[str, type]:
        if job == "generate":
            return {"": VoxMemConfig}
        if job == "eval":
            from memgym.pipelines.voxmem.evaluation import VoxMemEvalConfig

            return {"": VoxMemEvalConfig}
        return {}

    def accepted_names(self, job: str) -> dict[str, list[str]]:
        """Eval takes the VoxMem memories and reasoners (``models=[...]`` specs name one);
        generate takes reasoners for writing and QC (``reasoner=``, ``qc_reasoner=``)."""
        if job == "generate":
            return {"reasoners (reasoner=, qc_reasoner=)": REASONERS.names()}
        if job != "eval":
            return {}
        from memgym.pipelines.voxmem.evaluation import voxmem_memory_names

        return {
            "memories (memory= or memories=[...])": voxmem_memory_names(),
            "reasoners (models=[...])": REASONERS.names(),
        }

    def generate(self, args: JobArgs) -> Path:
        values = {"out": str(args.out)} if args.out else None
        config = load_config(VoxMemConfig, path=args.config_path, overrides=args.overrides, values=values)
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

    def eval(self, args: JobArgs) -> Path:
        """Models x memories x budgets (see :mod:`memgym.pipelines.voxmem.evaluation`); returns the run folder."""
        from memgym.pipelines.voxmem.evaluation import evaluate

        return evaluate(args)

    def quickstart(self, report_dir: Path, args: JobArgs) -> ReportSection:
        """Build five items (one per evidence type, plus a refusal) at 8K; play one through the env."""
        import json

        from memgym.core.episode import Dataset
        from memgym.envs.voxmem_env import VoxMemEnv

        out = Path(args.runs_dir) / "quickstart" / "voxmem" / "dataset"
        cells = "[semantics/TET,speaker/IE,paralinguistic/MSR,sound/IE,sound/AR]"
        # more redraws than a default build: each evidence type should survive the intelligibility gate
        overrides = ("items=5", f"cells={cells}", "budgets=[8k]", "max_revisions=6", f"out={out}", *args.overrides)
        config = load_config(VoxMemConfig, path=args.config_path, overrides=overrides)
        folder = VoxMemBuilder(config, progress=args.progress).build()
        episodes = Dataset.load(folder / "manifest.jsonl")
        env = VoxMemEnv(dataset=folder)
        played = next((e for e in episodes if e.items[0].answer == "unanswerable"), episodes[0])
        observation, info = env.reset(seed=0, options={"episode": played})
        steps = 0
        while info["phase"] == "formation":
            observation, _, _, _, info = env.step("")
            steps += 1
        _, reward, terminated, _, info = env.step("I can't tell from our conversations.")
        qc = json.loads((folder / "qc_report.json").read_text())
        plots = save_figures(folder, list(episodes), Path(report_dir))
        rows = [
            "| item | cell | subtype | budget | tokens | sessions | question | answer |",
            "| --- | --- | --- | ---: | ---: | ---: | --- | --- |",
        ]
        for e in episodes:
            item = e.items[0]
            rows.append(
                f"| {item.item_id} | {item.annotations['cell']} | {item.annotations['subtype']} | {e.budget} | "
                f"{e.tokens} | {len(e.sessions)} | {item.prompt} | {item.answer} |"
            )
        body = "\n".join(
            [
                f"Built {qc['items_kept']} of {qc['items_planned']} items ({qc['audio_hours'] * 60:.1f} min of audio) "
                f"into `{folder}`; QC report `qc_report.md` kept with the dataset.",
                *_heard_line(qc.get("intelligibility")),
                "",
                *rows,
                "",
                f"`memgym/VoxMem-v0` played {played.episode_id}: {steps} formation turns, then the question; "
                f'answering "I can\'t tell from our conversations." scored {reward:.0f}.',
            ]
        )
        return ReportSection("VoxMem", body, plots)


def _heard_line(heard: dict | None) -> list[str]:
    """One sentence on what the QC recogniser heard in the evidence turns (nothing without the gate)."""
    if not heard:
        return []
    said = heard["answer_turns"]
    return [
        "",
        f"Evidence turns as the offline recogniser hears them: WER {heard['wer']['wer']:.0%}; the stated value "
        f"was heard in {said['recognised']} of {said['said']} turns that say it (items where it was not are "
        "redrawn, then dropped).",
    ]


def save_figures(folder: Path, episodes: list, report_dir: Path) -> tuple[str, ...]:
    """Write the history-layout and cue-pair figures under ``report_dir/voxmem``; relative paths."""
    import matplotlib.pyplot as plt

    from memgym.datasets.voxmem.plots import cue_pair_figure, history_layout_figure

    out = []
    for name, figure in (
        ("history_layout.png", history_layout_figure(episodes)),
        ("cue_pair.png", cue_pair_figure(folder, episodes)),
    ):
        if figure is None:
            continue
        path = Path("voxmem") / name
        (report_dir / path).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(report_dir / path, dpi=110)
        plt.close(figure)
        out.append(str(path))
    return tuple(out)
