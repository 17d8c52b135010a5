"""``memgym train amemops``: one Table 1 model trained on generated streams (paper section 2).

:func:`train_model` trains (or resumes) ``model=gdn2 seed=0 ...`` on batches of generated streams
(:class:`~memgym.pipelines.amemops.streams.StreamBatches`; with ``data.source=env`` recorded from
``memgym/AMemOps-v0`` vector-env rollouts, the same tensors) with the
:class:`~memgym.memory.recurrent.trainer.Trainer` (AdamW, warm-up and cosine decay, DDP under
torchrun) into ``RUNS/amemops_train/<model>-seed<seed>/`` (``step_<N>.pt`` checkpoints).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import torch

from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.errors import RecordError
from memgym.core.results import RunStore
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.memory.recurrent.trainer import Trainer, init_distributed, resolve_device
from memgym.pipelines.amemops.configs import TRAIN_JOB, AMemOpsTrainConfig, model_core
from memgym.pipelines.amemops.presets import PRESETS, apply_preset
from memgym.pipelines.amemops.streams import StreamBatches, stream_tensors


def build_model(config: AMemOpsTrainConfig, input_dim: int, n_classes: int) -> AMemOpsModel:
    """The Table 1 model for ``config``; audio inputs have their log-mel columns standardised with
    the fixed :data:`~memgym.sensors.log_mel.LOG_MEL_MEAN` / ``LOG_MEL_STD`` (symbolic ones are one-hot)."""
    from memgym.sensors.log_mel import LOG_MEL_MEAN, LOG_MEL_STD, N_MELS

    audio = config.data.inputs == "audio"
    return AMemOpsModel(
        ModelConfig(
            **dataclasses.asdict(config.arch),
            core=config.model,
            input_dim=input_dim,
            n_gain=n_classes,
            n_pan=n_classes,
            standardised_inputs=2 * N_MELS if audio else 0,
            input_mean=LOG_MEL_MEAN if audio else 0.0,
            input_std=LOG_MEL_STD if audio else 1.0,
        )
    )


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
    trainer = Trainer(model, config, folder, dist_env=dist_env, device=device, progress=progress)
    return trainer.fit(StreamBatches(tensors, config.batch_size, config.seed))


def train_config(args: JobArgs) -> AMemOpsTrainConfig:
    """The config of ``memgym train amemops`` (``preset=NAME``: :mod:`~memgym.pipelines.amemops.presets`,
    trained as the variant ``<model>@NAME`` unless ``name=`` is given)."""
    overrides, preset = apply_preset(args.overrides, "train")
    config = load_config(AMemOpsTrainConfig, path=args.config_path, overrides=overrides)
    if preset and not config.name:
        config = dataclasses.replace(config, name=f"{config.model}@{preset}-seed{config.seed}")
    return config


def train_job(args: JobArgs) -> Path:
    """``memgym train amemops key=value ...`` (see :func:`train_config`)."""
    return train_model(train_config(args), args.runs_dir, progress=args.progress)


def _train_command(model_name: str, seed: int, folder: str) -> str:
    """The ``memgym train`` command that makes ``model_name``'s run ``folder``: with the preset when
    the model's variant is one (``kda@cpu-tiny``: ``preset=cpu-tiny``, which names the folder)."""
    core, variant = model_core(model_name), model_name.partition("@")[2]
    if variant in PRESETS and folder == f"{core}@{variant}-seed{seed}":
        return f"memgym train amemops preset={variant} model={core} seed={seed}"
    return f"memgym train amemops model={core} seed={seed}{'' if core == model_name else f' name={folder}'}"


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
                        f"missing checkpoint {path}: run '{_train_command(model_name, seed, path.parent.name)}' "
                        f"with {step} in checkpoint_steps, or set train_dir/checkpoints"
                    )
                jobs.append((model_name, seed, step, path))
    return jobs
