"""The AMemOps "Memory models" part of ``memgym run quickstart``."""

from __future__ import annotations

from pathlib import Path

from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
from memgym.pipelines.amemops.evaluate import evaluate_models
from memgym.pipelines.amemops.train import train_job

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
