"""``executor=ray``: the same datasets and run folders as the local executor, written once each,
and resumable after the driver is killed (on the shared 2-CPU Ray of ``ray_cluster``)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from small_houses import SMALL_HOUSES

from memgym.core.benchmark import JobArgs
from memgym.core.executors import release_workers
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.stream_set import StreamSetConfig
from memgym.pipelines.amemops.benchmark import AMemOpsBenchmark
from memgym.pipelines.amemops.interventions import AMemOpsInterventionConfig
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.pipelines.dialogmem.evaluation import evaluate
from memgym.pipelines.dialogmem.generation import DialogMemGenerateConfig, generate
from memgym.pipelines.voxmem import evaluation as voxmem_eval

slow = pytest.mark.slow  # Ray worker processes import memgym (~5 s on 2 busy cores)

SCENES = ("scenes=4", *SMALL_HOUSES)
RAY = ("executor=ray", "workers=2")


@pytest.mark.parametrize(
    "config",
    [
        DialogMemGenerateConfig(),
        DialogMemEvalConfig(),
        voxmem_eval.VoxMemEvalConfig(),
        StreamSetConfig(),
        AMemOpsInterventionConfig(),
    ],
)
def test_executor_settings_leave_config_hashes_alone(config):
    ray = dataclasses.replace(config, executor="ray", ray_address="auto", workers=3, worker_gpus=1.0)
    assert config_hash(ray) == config_hash(config)


@pytest.fixture(scope="module")
def local_dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "episodes.jsonl"
    return generate(JobArgs(overrides=SCENES, out=out, progress=False))


@slow
def test_dialogmem_generate_on_ray_writes_the_local_dataset(ray_cluster, local_dataset, tmp_path):
    out = generate(JobArgs(overrides=(*SCENES, *RAY), out=tmp_path / "episodes.jsonl", progress=False))
    assert out.read_bytes() == local_dataset.read_bytes()
    assert out.with_name("episodes.stats.md").read_bytes() == local_dataset.with_name("episodes.stats.md").read_bytes()


@slow
def test_dialogmem_eval_on_ray_writes_the_local_run_folder(ray_cluster, local_dataset, tmp_path):
    def run(runs: Path, *extra: str) -> Path:
        overrides = (f"dataset={local_dataset}", "memories=[dialogue,3dmem]", "camera.width=32", "camera.height=24")
        overrides += ("save_memory=true",)
        return evaluate(JobArgs(overrides=(*overrides, *extra), runs_dir=runs, progress=False))

    local, distributed = run(tmp_path / "local"), run(tmp_path / "ray", *RAY)
    assert local.name == distributed.name  # executor settings are not hashed
    files = ("dialogue/results.jsonl", "3dmem/results.jsonl", "3dmem/memory.jsonl", "3dmem/links.json", "comparison.md")
    for name in files:
        assert (distributed / name).read_bytes() == (local / name).read_bytes(), name


@slow
def test_voxmem_eval_on_ray_gives_the_local_rows(ray_cluster, vox_dataset, tmp_path):
    def rows(runs: Path, *extra: str) -> list[dict]:
        overrides = (f"dataset={vox_dataset}", "memories=[oracle_tags,full_history]", *extra)
        folder = voxmem_eval.evaluate(JobArgs(overrides=overrides, runs_dir=runs, progress=False))
        lines = (folder / "results.jsonl").read_text().splitlines()
        return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in lines]  # wall time

    local = rows(tmp_path / "local")
    assert local and {r["memory"] for r in local} == {"oracle_tags"}  # structured cannot hear full_history
    assert rows(tmp_path / "ray", *RAY) == local


@slow
def test_amemops_features_on_ray_are_the_local_files(ray_cluster, tmp_path):
    def generate_set(runs: Path, *extra: str) -> Path:
        overrides = ("stream.library.kind=tones", "count=3", "stream.distractors=[4]", *extra)
        return AMemOpsBenchmark().generate(JobArgs(overrides=overrides, runs_dir=runs, progress=False))

    local, distributed = generate_set(tmp_path / "local"), generate_set(tmp_path / "ray", *RAY)
    files = sorted(p.name for p in (local / "features").iterdir())
    assert len(files) == 3 and files == sorted(p.name for p in (distributed / "features").iterdir())
    for name in files:
        assert (distributed / "features" / name).read_bytes() == (local / "features" / name).read_bytes()


@slow
def test_generate_resumes_after_the_driver_is_killed(ray_cluster, local_dataset, tmp_path):
    out = tmp_path / "episodes.jsonl"
    partial = out.with_name("episodes.jsonl.partial")
    command = [sys.executable, "-m", "memgym.cli", "generate", "dialogmem", *SCENES, *RAY,
               f"ray_address={ray_cluster}", "--out", str(out), "--no-progress"]  # fmt: skip
    release_workers()  # this process's actors hold the 2 CPUs the driver's workers need
    driver = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and driver.poll() is None and _lines(partial) < 2:  # header + 1 episode
        time.sleep(0.05)
    assert driver.poll() is None, "the driver finished before it could be killed"
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    written = _lines(partial) - 1
    assert 1 <= written < 4 and not out.exists()
    generate(JobArgs(overrides=(*SCENES, *RAY), out=out, progress=False))
    assert out.read_bytes() == local_dataset.read_bytes()  # every episode once, in order


def _lines(path: Path) -> int:
    return path.read_text().count("\n") if path.is_file() else 0


@slow
def test_amemops_eval_on_ray_writes_the_local_run_folder(ray_cluster, tmp_path):
    from memgym.pipelines.amemops.evaluate import eval_job
    from tests.pipelines.amemops.test_train_eval import STREAM, train

    train(tmp_path, "model=gdn2")
    overrides = ("models=[gdn2]", "seeds=[0]", "checkpoints=[2,3]", "streams=3", *STREAM, "data.stream.split=eval")

    def run(name: str, *extra: str) -> Path:
        return eval_job(JobArgs(overrides=(*overrides, f"name={name}", *extra), runs_dir=tmp_path, progress=False))

    local, distributed = run("local"), run("ray", *RAY)
    for name in ("results.jsonl", "table.md"):
        assert (distributed / name).read_bytes() == (local / name).read_bytes(), name


@slow
def test_amemops_interventions_on_ray_write_the_local_run_folder(ray_cluster, tmp_path):
    from memgym.pipelines.amemops.train import train_job
    from tests.pipelines.amemops.test_interventions import EVAL, STREAM_OVERRIDES, TINY

    tiny = ("model=mamba2", "steps=1", "batch_size=1", "warmup_steps=1", "checkpoint_steps=[1]", "data.pool=1")
    train_job(JobArgs(overrides=(*tiny, *STREAM_OVERRIDES, *TINY), runs_dir=tmp_path, progress=False))

    def run(name: str, *extra: str) -> Path:
        overrides = ("intervention=true", "memory=mamba2", f"name={name}", *EVAL, *extra)
        return AMemOpsBenchmark().eval(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))

    local, distributed = run("local"), run("ray", *RAY)
    for name in ("results.jsonl", "table.md"):
        assert (distributed / name).read_bytes() == (local / name).read_bytes(), name


def test_voxmem_generate_refuses_ray_before_any_work(tmp_path):
    from memgym.core.errors import ConfigError
    from memgym.pipelines.voxmem.benchmark import VoxMemBenchmark

    with pytest.raises(ConfigError, match="runs locally only"):
        VoxMemBenchmark().generate(JobArgs(overrides=("executor=ray",), out=tmp_path / "voxmem", progress=False))
    assert not (tmp_path / "voxmem").exists()
