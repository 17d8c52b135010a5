"""``memgym eval amemops preset=NAME train=true``: train every model x seed a preset evaluates,
then evaluate them, in one resumable command.

Each ``<core>@<preset>`` model of ``models`` and each of ``seeds`` is trained with the preset's
train settings (``memgym train amemops preset=NAME model=<core> seed=<seed>``) unless every
checkpoint the evaluation reads already exists, so a re-run after an interruption skips the
finished runs and resumes the interrupted one from its ``last.pt`` (same batches, same weights);
a finished run of other settings is refused, as training into its folder would be. Training-only
keys of the command line (``arch.*``, ``steps``, ``lr``, ...) go to training, ``data.*`` keys
other than the eval streams' split and seed to both jobs, evaluation keys (``models``,
``streams``, ...) to the evaluation. With ``data.workers`` > 0 and no ``data.cache_dir`` the featurised training
streams are cached under ``RUNS/amemops_stream_cache`` (shared by every model and seed; not hashed).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memgym.core.benchmark import JobArgs
from memgym.core.errors import ConfigError
from memgym.core.results import RunStore
from memgym.pipelines.amemops.configs import TRAIN_JOB, AMemOpsEvalConfig, AMemOpsTrainConfig, model_core
from memgym.pipelines.amemops.train import train_config, train_model

STREAM_CACHE = "amemops_stream_cache"
_EVAL_ONLY_DATA = ("data.stream.split", "data.stream_seed")


def _train_only(override: str) -> bool:
    top = override.split("=", 1)[0].strip().split(".", 1)[0]
    return top in {f.name for f in dataclasses.fields(AMemOpsTrainConfig)} - {
        f.name for f in dataclasses.fields(AMemOpsEvalConfig)
    }


def split_train_keys(overrides: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(eval overrides, training-only overrides)``: keys of the train config that the eval config
    lacks (``steps``, ``lr``, ``arch.*``, ...) go to training alone."""
    return tuple(o for o in overrides if not _train_only(o)), tuple(o for o in overrides if _train_only(o))


def _train_keys(overrides: tuple[str, ...]) -> tuple[str, ...]:
    """The command-line overrides that configure training: the training-only keys and ``data.*``
    keys other than the eval streams' split and seed."""
    kept = []
    for override in overrides:
        key = override.split("=", 1)[0].strip()
        if key.startswith(_EVAL_ONLY_DATA):
            continue
        if key.startswith("data.") or _train_only(override):
            kept.append(override)
    return tuple(kept)


def train_missing(config: AMemOpsEvalConfig, preset: str, args: JobArgs) -> list[Path]:
    """Train every ``config.models`` x ``config.seeds`` run whose ``config.checkpoints`` are not all
    there; returns the folders trained (or resumed).

    Raises:
        ConfigError: no ``preset=`` (the train settings come from it), a ``train_dir`` (this trains
            into ``RUNS/amemops_train``), or a model that is not a ``<core>@<preset>`` variant.
    """
    if not preset:
        raise ConfigError("train=true trains with a preset's settings: add preset=NAME (e.g. preset=cpu-audio)")
    if config.train_dir:
        raise ConfigError("train=true trains into RUNS/amemops_train: drop train_dir")
    wrong = [m for m in config.models if m != f"{model_core(m)}@{preset}"]
    if wrong:
        raise ConfigError(f"train=true with preset={preset}: model '{wrong[0]}' is not '<core>@{preset}'")
    single = [o for o in args.overrides if o.split("=", 1)[0].strip() in ("model", "seed", "name")]
    if single:
        raise ConfigError(f"train=true trains models x seeds: use models=[...] and seeds=[...], not '{single[0]}'")
    extra = _train_keys(args.overrides)
    if not any(o.startswith("data.cache_dir=") for o in extra):
        extra = (*extra, f"data.cache_dir={Path(args.runs_dir) / STREAM_CACHE}")
    trained = []
    for seed in config.seeds:
        for model in config.models:
            overrides = (f"preset={preset}", f"model={model_core(model)}", f"seed={seed}", *extra)
            train = train_config(dataclasses.replace(args, overrides=overrides, config_path=None))
            folder = Path(args.runs_dir) / TRAIN_JOB / train.run_name()
            if all((folder / f"step_{step}.pt").exists() for step in config.checkpoints):
                # refuses a finished run of other settings (RecordError), as training it would
                RunStore.open(args.runs_dir, TRAIN_JOB, train, name=train.run_name(), seeds=[seed])
                print(f"amemops: {folder.name} is trained; skipped", flush=True)
                continue
            trained.append(train_model(train, args.runs_dir, progress=args.progress))
    return trained
