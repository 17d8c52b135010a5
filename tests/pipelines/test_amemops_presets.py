"""``preset=cpu-small``: the CPU-sized reproduction's train and eval settings, overridable."""

from __future__ import annotations

import pytest
import yaml

from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.pipelines.amemops_models import AMemOpsEvalConfig, eval_job, train_job
from memgym.pipelines.amemops_presets import CPU_SMALL_STEPS, apply_preset

TINY = (
    "steps=2",
    "checkpoint_steps=[2]",
    "batch_size=2",
    "data.pool=2",
    "data.stream.n_update=2",
    "arch.width=16",
    "arch.head_dim=8",
    "arch.mlp_hidden=16",
    "arch.layers=1",
)


def test_cpu_small_trains_a_variant_that_the_eval_preset_reads(tmp_path):
    for model in ("gdn2", "no_erase"):
        folder = train_job(
            JobArgs(overrides=("preset=cpu-small", f"model={model}", *TINY), runs_dir=tmp_path, progress=False)
        )
        assert folder.name == f"{model}@cpu-small-seed0" and (folder / "step_2.pt").exists()
    stored = yaml.safe_load((folder / "config.yaml").read_text())
    assert stored["data"]["inputs"] == "symbolic" and stored["arch"]["width"] == 16  # the command line wins
    assert stored["lr"] == 0.003 and stored["data"]["stream"]["frames"] == 384  # the preset's values
    overrides = (
        "preset=cpu-small",
        "models=[gdn2@cpu-small,no_erase@cpu-small]",
        "contrasts=[gdn2@cpu-small:no_erase@cpu-small]",
        "checkpoints=[2]",
        "streams=2",
        "bootstrap_resamples=100",
        "data.stream.n_update=2",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    assert "| gdn2@cpu-small:no_erase@cpu-small | 2 | all |" in (out / "contrasts.md").read_text()


def test_cpu_small_eval_contrasts_erasing_cores_with_no_erase():
    config = load_config(AMemOpsEvalConfig, overrides=apply_preset(("preset=cpu-small",), "eval")[0])
    assert config.checkpoints == (CPU_SMALL_STEPS,) and config.streams == 192 and config.data.stream.split == "eval"
    assert "gdn2@cpu-small+kda@cpu-small+gdn@cpu-small:no_erase@cpu-small" in config.contrasts
    assert apply_preset(("seed=1",), "train") == (("seed=1",), "")


def test_unknown_or_repeated_presets_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="preset='gpu-huge' is unknown; choose from cpu-small"):
        train_job(JobArgs(overrides=("preset=gpu-huge",), runs_dir=tmp_path, progress=False))
    with pytest.raises(ConfigError, match="preset is given 2 times"):
        apply_preset(("preset=cpu-small", "preset=cpu-small"), "eval")
