"""``preset=cpu-small``: the CPU-sized reproduction's train and eval settings, overridable."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch
import yaml

from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.errors import ConfigError, MemgymError, RecordError
from memgym.core.seeding import config_hash
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig
from memgym.pipelines.amemops.evaluate import eval_job
from memgym.pipelines.amemops.presets import CPU_SMALL_STEPS, apply_preset
from memgym.pipelines.amemops.train import train_config, train_job
from scripts.amemops_interaction_level import interaction_tables

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


AEQ3GU = (  # the AEQ3GU command of docs/amemops_models.md, as its runs were trained
    "preset=cpu-audio-fresh",
    "data.stream.n_initial=3",
    "data.stream.n_update=6",
    "data.stream.n_interference=0",
    "data.stream.n_absent=0",
    "data.stream.distractors=[0]",
    "data.stream.offset_seconds=[0.4,0.6]",
    "data.stream.query_offset_seconds=[1,2]",
    "data.stream.value_repeats=[3,3]",
    "data.stream.excerpt_frames=[8,8]",
    "data.stream.frames=640",
    "data.stream.placement_attempts=100",
    "data.stream.gap_distractors=3",
    "data.stream.gap_distractor_draw=uniform",
    "data.stream.distractor_similarity=dissimilar",
)


def test_cpu_audio_update_control_trains_the_documented_aeq3gu_runs_to_their_judged_step(tmp_path):
    """The preset is the docs' AEQ3GU command with ``stop_step=2000``: the same hashed config (so
    the same weights, and a later run without ``stop_step`` continues to 3,000 steps), and its eval
    reads that checkpoint on the same streams (split eval)."""
    documented = train_config(JobArgs(overrides=(*AEQ3GU, "model=kda", "seed=6"), runs_dir=tmp_path))
    preset = train_config(
        JobArgs(overrides=("preset=cpu-audio-update-control", "model=kda", "seed=6"), runs_dir=tmp_path)
    )
    assert preset.stop_step == 2000 and preset.steps == 3000 and 2000 in preset.checkpoint_steps
    assert preset.name == "kda@cpu-audio-update-control-seed6"
    assert config_hash(dataclasses.replace(preset, name=documented.name)) == config_hash(documented)
    overrides = apply_preset(("preset=cpu-audio-update-control",), "eval")[0]
    evaluation = load_config(AMemOpsEvalConfig, overrides=overrides)
    assert evaluation.checkpoints == (2000,) and evaluation.breakdowns == ("intervening",)
    assert evaluation.data.stream == dataclasses.replace(documented.data.stream, split="eval")


KEPT_RUNS = Path(__file__).resolve().parents[3] / "results" / "amemops" / "aeq3gu-2k-s610" / "amemops_train"


def test_the_kept_aeq3gu_checkpoints_are_runs_of_the_preset_the_train_command_continues(tmp_path):
    """``results/amemops/aeq3gu-2k-s610`` (the pre-registered test's checkpoints, kept across
    machines) holds run folders of ``cpu-audio-update-control`` under the documented names: the
    same config hash (so restoring them into ``runs/`` and rerunning the train command continues
    them instead of refusing the folder), at step 2,000 or, unfinished, with a resumable ``last.pt``."""
    folders = sorted(KEPT_RUNS.iterdir())
    assert folders, KEPT_RUNS
    for folder in folders:
        model, seed = folder.name.split("@AEQ3GU-seed")
        overrides = ("preset=cpu-audio-update-control", f"model={model}", f"seed={seed}", f"name={folder.name}")
        expected = config_hash(train_config(JobArgs(overrides=overrides, runs_dir=tmp_path)))
        assert json.loads((folder / "manifest.json").read_text())["config_hash"] == expected, folder.name
        final = folder / "step_2000.pt"
        state = torch.load(final if final.exists() else folder / "last.pt", map_location="cpu", weights_only=False)
        assert state["step"] == 2000 if final.exists() else {"optimizer", "scheduler"} <= set(state), folder.name


def test_unknown_or_repeated_presets_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="preset='gpu-huge' is unknown; choose from cpu-small"):
        train_job(JobArgs(overrides=("preset=gpu-huge",), runs_dir=tmp_path, progress=False))
    with pytest.raises(ConfigError, match="preset is given 2 times"):
        apply_preset(("preset=cpu-small", "preset=cpu-small"), "eval")


def _cli(capsys, *argv: str) -> tuple[int, str]:
    """Exit status and stderr of ``memgym ...``."""
    from memgym.cli import main

    status = main(list(argv))
    return status, capsys.readouterr().err


def test_bad_presets_seeds_and_checkpoints_of_another_core_are_one_line_errors(tmp_path, capsys):
    runs = ("--runs-dir", str(tmp_path), "--no-progress")
    status, err = _cli(capsys, "train", *runs, "amemops", "preset=gpu-huge")
    assert (
        status == 2
        and err
        == "memgym: error: preset='gpu-huge' is unknown; choose from cpu-small, cpu-tiny, cpu-update-control, cpu-audio, "
        "cpu-audio-fresh, cpu-update-isolation, cpu-audio-update-control\n"
    )
    status, err = _cli(capsys, "train", *runs, "amemops", "preset=cpu-audio", "seed=-1")
    assert (
        status == 2
        and err == f"memgym: error: command line: 'seed' = -1 is too small; expected a value from 0 to {2**64 - 1}\n"
    )
    status, err = _cli(capsys, "eval", *runs, "amemops", "preset=cpu-audio", "seeds=[0,-2]")
    assert (
        status == 2
        and err.startswith("memgym: error: command line: 'seeds[1]' = -2 is too small")
        and err.count("\n") == 1
    )
    train_job(JobArgs(overrides=("preset=cpu-small", "model=no_erase", *TINY), runs_dir=tmp_path, progress=False))
    folder = tmp_path / "amemops_train"
    (folder / "no_erase@cpu-small-seed0").rename(folder / "gdn2@cpu-small-seed0")  # a folder of another core
    status, err = _cli(
        capsys,
        "eval",
        *runs,
        "amemops",
        "preset=cpu-small",
        "models=[gdn2@cpu-small]",
        "contrasts=[]",
        "checkpoints=[2]",
        "streams=2",
    )
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("memgym: error: ") and "holds a 'no_erase' model, but models names 'gdn2@cpu-small'" in err


def test_train_true_trains_missing_runs_and_skips_finished_ones(tmp_path, capsys):
    overrides = (
        "preset=cpu-small",
        "train=true",
        "models=[gdn2@cpu-small,no_erase@cpu-small]",
        "seeds=[0,1]",
        "contrasts=[]",
        "update_interactions=[gdn2@cpu-small:no_erase@cpu-small]",
        "breakdowns=[intervening]",
        "checkpoints=[2]",
        "streams=2",
        "bootstrap_resamples=50",
        *TINY,
    )
    args = JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False)
    out = eval_job(args)
    folders = sorted((tmp_path / "amemops_train").iterdir())
    assert [f.name for f in folders] == [f"{m}@cpu-small-seed{s}" for m in ("gdn2", "no_erase") for s in (0, 1)]
    stored = yaml.safe_load((folders[0] / "config.yaml").read_text())
    assert stored["steps"] == 2 and stored["arch"]["width"] == 16 and stored["data"]["stream"]["split"] == "train"
    assert "| gdn2@cpu-small:no_erase@cpu-small | 2 | all |" in (out / "update_interaction.md").read_text()
    assert interaction_tables([out], 0.95) == (out / "update_interaction.md").read_text()  # the script's recomputation
    assert interaction_tables([out], 0.95, intervening=True) == (out / "intervening.md").read_text()
    plain = tuple(o for o in overrides if o != "train=true" and (o not in TINY or o.startswith("data.stream.")))
    single = [eval_job(dataclasses.replace(args, overrides=(*plain, f"seeds=[{s}]", f"name=s{s}"))) for s in (0, 1)]
    assert interaction_tables(single, 0.95, intervening=True) == (out / "intervening.md").read_text()  # pooled
    with pytest.raises(MemgymError, match="share seeds"):
        interaction_tables([single[0], single[0]], 0.95)
    stamps = {f.name: (f / "step_2.pt").stat().st_mtime_ns for f in folders}
    for name in ("step_2.pt", "last.pt"):  # no_erase seed 1 interrupted before its first save
        (folders[3] / name).unlink()
    capsys.readouterr()
    eval_job(args)
    printed = capsys.readouterr().out
    assert printed.count("is trained; skipped") == 3 and "no_erase@cpu-small-seed1 is trained" not in printed
    assert all((f / "step_2.pt").stat().st_mtime_ns == stamps[f.name] for f in folders[:3])
    assert (folders[3] / "step_2.pt").exists()
    with pytest.raises(RecordError, match="different config"):  # finished runs of other settings
        eval_job(JobArgs(overrides=(*overrides, "lr=0.01"), runs_dir=tmp_path, progress=False))
    with pytest.raises(ConfigError, match="'lr=0.01' is a training key; it needs train=true"):
        eval_job(JobArgs(overrides=("preset=cpu-small", "lr=0.01"), runs_dir=tmp_path, progress=False))


@pytest.mark.parametrize("preset", ["cpu-tiny", "cpu-audio"])
def test_every_preset_loads_and_its_eval_reads_its_own_variants(preset):
    from memgym.pipelines.amemops.configs import AMemOpsTrainConfig
    from memgym.pipelines.amemops.presets import PRESETS

    train = load_config(AMemOpsTrainConfig, overrides=PRESETS[preset]["train"])
    config = load_config(AMemOpsEvalConfig, overrides=apply_preset((f"preset={preset}",), "eval")[0])
    assert config.checkpoints == train.checkpoint_steps == (train.steps,)
    assert all(m.endswith(f"@{preset}") for m in config.models) and "no_erase@" + preset in config.models
    assert config.update_interactions and config.data.stream.split == "eval"
    assert config.data.inputs == train.data.inputs and config.data.stream.frames == train.data.stream.frames


def test_memory_and_memories_name_the_models_as_in_every_eval():
    def loaded(*overrides: str) -> AMemOpsEvalConfig:
        return load_config(AMemOpsEvalConfig, overrides=apply_preset(overrides, "eval")[0])

    by_models = loaded("models=[gdn2,kda]", "contrasts=[]")
    by_memories = loaded("memories=[gdn2,kda]", "contrasts=[]")
    assert by_memories == by_models and config_hash(by_memories) == config_hash(by_models)
    assert loaded("memory=gdn2", "contrasts=[]").models == ("gdn2",)
    # a preset's own models give way to memory= / memories=, as they do to models=
    preset = loaded("preset=cpu-tiny", "memory=gdn2@cpu-tiny", "contrasts=[]", "update_interactions=[]")
    assert preset.models == ("gdn2@cpu-tiny",)
    for twice in (("memory=gdn2", "models=[kda]"), ("memory=gdn2", "memories=[kda]")):
        with pytest.raises(ConfigError, match="to evaluate once: models="):
            loaded(*twice, "contrasts=[]")


def test_update_control_streams_have_the_structure_that_isolates_updates():
    """``cpu-update-control``: more identities than key channels, updates close to the value they
    supersede, queries later than that; train and eval read the same streams (docs/amemops_models.md)."""
    from memgym.datasets.amemops.generator import StreamGenerator
    from memgym.datasets.sources.factory import open_library
    from memgym.pipelines.amemops.configs import AMemOpsTrainConfig

    train = load_config(AMemOpsTrainConfig, overrides=apply_preset(("preset=cpu-update-control",), "train")[0])
    evaluation = load_config(AMemOpsEvalConfig, overrides=apply_preset(("preset=cpu-update-control",), "eval")[0])
    stream = train.data.stream
    assert evaluation.data.stream == dataclasses.replace(stream, split="eval")
    assert evaluation.update_interactions == tuple(
        f"{m}@cpu-update-control:no_erase@cpu-update-control" for m in ("gdn2", "kda")
    )
    assert len(evaluation.seeds) >= 5 and evaluation.checkpoints == (train.steps,)
    library = open_library(stream.library)
    assert train.data.inputs == "symbolic" and len(library.identities()) > train.arch.heads * train.arch.head_dim
    generator = StreamGenerator(stream, library)
    gaps, delays, updated, between = [], [], 0, []
    for index in range(16):
        s = generator.generate(seed=0, index=index)
        for item in s.items:
            if item.annotations["operation"] == "initial":  # other sources' events between the write and its query
                write, query = (e.onset_frame for e in s.events if e.group == item.annotations["group"])
                between.append(sum(write < e.onset_frame < query and e.role != "query" for e in s.events))
            if item.annotations["operation"] != "updated":
                continue
            updated += 1
            events = sorted((e for e in s.events if e.group == item.annotations["group"]), key=lambda e: e.onset_frame)
            gaps.append(events[-2].onset_frame - events[-3].onset_frame)
            delays.append(events[-1].onset_frame - events[-2].onset_frame)
    assert updated >= 16  # about two updated queries a stream
    assert min(gaps) >= 10 and max(gaps) <= 15  # update 0.4-0.6 s after the value it supersedes
    assert min(delays) >= 25 and max(delays) <= 50  # query 1-2 s after the update: 1.7-5 times the gap
    assert stream.distractors == (0,) and stream.n_absent == 0  # no "none" answer competing with a single write
    assert sum(between) / len(between) < 1  # few writes of other sources cross-talk with a single write


def test_update_isolation_is_the_update_control_with_every_source_written_equally_strongly():
    """``cpu-update-isolation`` = ``cpu-update-control`` plus :data:`EQUAL_WRITES` (the EQ3 runs of
    docs/amemops_models.md were made that way): every chain's first value heard three times, every
    excerpt 8 frames; train and eval read the same streams."""
    from memgym.datasets.amemops.generator import StreamGenerator
    from memgym.datasets.sources.factory import open_library
    from memgym.pipelines.amemops.configs import AMemOpsTrainConfig
    from memgym.pipelines.amemops.presets import EQUAL_WRITES

    def preset_config(*keys: str) -> AMemOpsTrainConfig:
        return load_config(AMemOpsTrainConfig, overrides=apply_preset(keys, "train")[0])

    train = preset_config("preset=cpu-update-isolation")
    assert train == preset_config("preset=cpu-update-control", *EQUAL_WRITES)
    evaluation = load_config(AMemOpsEvalConfig, overrides=apply_preset(("preset=cpu-update-isolation",), "eval")[0])
    assert evaluation.data.stream == dataclasses.replace(train.data.stream, split="eval")
    assert evaluation.update_interactions == tuple(
        f"{m}@cpu-update-isolation:no_erase@cpu-update-isolation" for m in ("gdn2", "kda")
    )
    assert len(evaluation.seeds) >= 5 and evaluation.checkpoints == (train.steps,)
    generator = StreamGenerator(train.data.stream, open_library(train.data.stream.library))
    written: list[int] = []
    for index in range(8):
        s = generator.generate(seed=0, index=index)
        assert {e.frames for e in s.events if e.role != "query"} == {8}
        for item in s.items:
            chain = sorted((e for e in s.events if e.group == item.annotations["group"]), key=lambda e: e.onset_frame)
            first = [
                e
                for e in chain
                if e.role != "query"
                and e.attribute_class(item.annotations["attribute"])
                == chain[0].attribute_class(item.annotations["attribute"])
            ]
            if item.annotations["operation"] in ("initial", "updated"):
                written.append(len(first))
    assert written and set(written) == {3}  # the first (initial or superseded) value, three times


def test_a_missing_preset_checkpoint_names_the_preset_train_command(tmp_path, capsys):
    runs = ("--runs-dir", str(tmp_path), "--no-progress")
    status, err = _cli(capsys, "eval", *runs, "amemops", "preset=cpu-update-isolation", "streams=2")
    assert status == 2 and err.count("\n") == 1
    assert "run 'memgym train amemops preset=cpu-update-isolation model=gdn2 seed=0' with 600" in err
