"""Training batches recorded from ``memgym/AMemOps-v0`` vector-env rollouts equal the direct ones."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from memgym.agents.stream_rollouts import make_stream_envs, rollout_streams
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.core.seeding import config_hash
from memgym.pipelines.amemops.configs import AMemOpsTrainConfig
from memgym.pipelines.amemops.streams import StreamBatches, stream_tensors
from memgym.pipelines.amemops.train import train_job

STREAM = (
    "data.stream.frames=256",
    "data.stream.n_initial=2",
    "data.stream.n_update=2",
    "data.stream.n_interference=0",
    "data.stream.n_absent=1",
    "data.stream.distractors=[1]",
    "data.stream.offset_seconds=[2,3]",
    "data.stream.library.kind=tones",
)
TINY = ("arch.width=16", "arch.heads=1", "arch.head_dim=8", "arch.mlp_hidden=16", "arch.layers=1")


def _config(*extra: str) -> AMemOpsTrainConfig:
    return load_config(AMemOpsTrainConfig, overrides=(*STREAM, "batch_size=3", "data.block_frames=24", *extra))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_env_rollout_batches_equal_the_direct_batches(mode):
    torch.set_num_threads(2)  # async workers fork after torch has started its thread pool
    torch.ones(256, 256) @ torch.ones(256, 256)
    config = _config("data.source=env", f"data.vectorization={mode}")
    direct = StreamBatches(stream_tensors(load_config(AMemOpsTrainConfig, overrides=STREAM).data), 3, seed=5)
    env = StreamBatches(stream_tensors(config.data), 3, seed=5)
    queries = {len(direct.tensors.stream(i).items) for step in (2, 3, 4) for i in direct.indices(step, 0, 1)}
    assert len(queries) > 1  # the sub-envs finish their streams at different steps
    batches = env.iterate(2, rank=0, world=1)
    for step in (2, 3, 4):
        got, want = next(batches), direct(step, 0, 1)
        assert got.keys() == want.keys()
        for key in want:
            assert got[key].dtype == want[key].dtype and torch.equal(got[key], want[key]), (step, key)
    batches.close()


def test_each_rank_records_its_own_share():
    config = _config("data.source=env", "batch_size=4")
    direct = StreamBatches(stream_tensors(load_config(AMemOpsTrainConfig, overrides=STREAM).data), 4, seed=0)
    env = StreamBatches(stream_tensors(config.data), 4, seed=0)
    batches = env.iterate(0, rank=1, world=2)
    assert torch.equal(next(batches)["features"], direct(0, 1, 2)["features"])
    batches.close()


def test_a_finite_plan_yields_each_of_its_batches_once():
    tensors = stream_tensors(load_config(AMemOpsTrainConfig, overrides=STREAM).data)
    envs = make_stream_envs(tensors.data.stream, 2, run_seed=0, library=tensors.library)
    plan = [[4, 1], [2, 3], [0, 5]]
    try:
        batches = list(rollout_streams(envs, plan))
    finally:
        envs.close()
    assert len(batches) == 3
    for indices, streams in zip(plan, batches, strict=True):
        for index, arrays in zip(indices, streams, strict=True):
            assert all(np.array_equal(a, b) for a, b in zip(arrays, tensors.arrays(index), strict=True))


def test_training_on_env_rollouts_gives_the_direct_weights_in_the_same_run_folder(tmp_path):
    args = ("model=gdn2", "steps=2", "batch_size=2", "warmup_steps=1", "checkpoint_steps=[2]", *STREAM, *TINY)
    direct = train_job(JobArgs(overrides=args, runs_dir=tmp_path / "direct", progress=False))
    env = train_job(JobArgs(overrides=(*args, "data.source=env"), runs_dir=tmp_path / "env", progress=False))
    assert direct.name == env.name
    assert config_hash(_config("data.source=env", "data.vectorization=async")) == config_hash(_config())
    want = torch.load(direct / "step_2.pt", weights_only=False)["model"]
    got = torch.load(env / "step_2.pt", weights_only=False)["model"]
    assert all(torch.equal(got[k], want[k]) for k in want)


def test_env_source_needs_audio_inputs_and_whole_query_blocks():
    with pytest.raises(ConfigError, match="data.source=env"):
        load_config(AMemOpsTrainConfig, overrides=("data.source=env", "data.inputs=symbolic"))
    with pytest.raises(ConfigError, match="data.block_frames=8 must hold a whole query"):
        _config("data.block_frames=8")


def test_the_documented_training_loop_runs():
    text = (Path(__file__).parents[2] / "docs" / "amemops_models.md").read_text(encoding="utf-8")
    snippet = re.search(r"<!-- env-training-loop -->\n```python\n(.*?)```", text, re.S).group(1)
    sizes = "STEPS, BATCH = 1000, 8\nstream = StreamConfig()\n"
    assert sizes in snippet
    tiny = (
        "STEPS, BATCH = 2, 2\nstream = StreamConfig(frames=256, n_initial=2, n_update=2, n_interference=0, "
        "n_absent=1, distractors=(1,), offset_seconds=(2, 3), library=LibraryConfig(kind='tones'))\n"
    )
    namespace: dict = {}
    exec(
        "from memgym.datasets.sources.factory import LibraryConfig\n" + snippet.replace(sizes, tiny),
        namespace,
    )
    assert namespace["step"] == 2 and np.isfinite(namespace["loss"].item())


def test_async_workers_share_one_clip_cache_removed_with_the_env():
    """Synthesised clips go to one temporary folder for every worker (each recording once), and the
    batches still equal the direct ones, whose clips were synthesised in memory."""
    synthetic = (*STREAM[:-1], "data.stream.library.kind=synthetic_env", "data.stream.distractors=[0]")
    tensors = stream_tensors(load_config(AMemOpsTrainConfig, overrides=synthetic).data)
    envs = make_stream_envs(tensors.data.stream, 2, run_seed=0, mode="async")
    (folder,) = {library.cache_dir for library in envs.get_attr("library")}
    try:
        (streams,) = list(rollout_streams(envs, [[0, 1]]))
    finally:
        envs.close()
    recordings = {e.recording_id for i in (0, 1) for e in tensors.stream(i).events}
    assert {path.stem for path in folder.rglob("*.npy")} == recordings
    for index, arrays in zip((0, 1), streams, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(arrays, tensors.arrays(index), strict=True))
    del envs
    assert not folder.exists()
