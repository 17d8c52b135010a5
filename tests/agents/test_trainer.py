"""Trainer: lr schedule, checkpoints, metrics log and bit-identical resume after an interruption."""

from __future__ import annotations

import csv
import dataclasses

import pytest
import torch

from memgym.core.errors import ConfigError
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.memory.recurrent.trainer import TrainConfig, Trainer, load_checkpoint_model, lr_factor

SMALL = {"input_dim": 6, "width": 16, "heads": 1, "head_dim": 8, "mlp_hidden": 16, "layers": 1, "chunk_size": 8}


def small_model(core: str = "gdn2", seed: int = 0) -> AMemOpsModel:
    torch.manual_seed(seed)
    return AMemOpsModel(ModelConfig(core=core, **SMALL))


def batch_fn(step: int, rank: int, world: int, *, batch: int = 4, length: int = 20):
    """Recall task: the gain label at the last frame is the class shown at frame 2."""
    gen = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(batch, length, 6, generator=gen) * 0.1
    cls = torch.randint(0, 4, (batch,), generator=gen)
    x[torch.arange(batch), 2, cls] += 3.0
    x[:, -1, 5] = 1.0
    gain = torch.full((batch, length), -100)
    gain[:, -1] = cls
    return {"features": x, "gain_labels": gain, "pan_labels": torch.full((batch, length), -100)}


def test_lr_schedule_warms_up_then_decays_to_the_floor():
    config = TrainConfig(steps=1000, warmup_steps=100, min_lr_ratio=0.1)
    assert lr_factor(0, config) == pytest.approx(0.01)
    assert lr_factor(99, config) == pytest.approx(1.0)
    assert lr_factor(550, config) == pytest.approx(0.55)
    assert lr_factor(1000, config) == pytest.approx(0.1)


def test_training_writes_checkpoints_and_metrics(tmp_path):
    config = TrainConfig(steps=6, batch_size=4, warmup_steps=2, checkpoint_steps=(3,), save_every=2, log_every=2)
    Trainer(small_model(), config, tmp_path, progress=False).fit(batch_fn)
    assert {p.name for p in tmp_path.glob("*.pt")} == {"last.pt", "step_3.pt", "step_6.pt"}
    rows = list(csv.DictReader((tmp_path / "metrics.csv").open()))
    assert [int(r["step"]) for r in rows] == [2, 4, 6]
    assert all(float(r["loss"]) > 0 for r in rows)
    model = load_checkpoint_model(tmp_path / "step_6.pt", lambda c: AMemOpsModel(ModelConfig(**c)))
    assert model.config.width == 16


def test_resume_after_interruption_is_bit_identical(tmp_path):
    config = TrainConfig(steps=6, batch_size=4, warmup_steps=2, checkpoint_steps=(), save_every=3, log_every=1)
    reference = Trainer(small_model(), config, tmp_path / "ref", progress=False)
    reference.fit(batch_fn)

    def interrupted(step, rank, world):
        if step == 4:
            raise KeyboardInterrupt
        return batch_fn(step, rank, world)

    with pytest.raises(KeyboardInterrupt):
        Trainer(small_model(), config, tmp_path / "run", progress=False).fit(interrupted)
    resumed = Trainer(small_model(), config, tmp_path / "run", progress=False)
    resumed.fit(batch_fn)
    assert resumed.step == 6
    for a, b in zip(reference.model.state_dict().values(), resumed.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    steps = [int(r["step"]) for r in csv.DictReader((tmp_path / "run" / "metrics.csv").open())]
    assert steps == [1, 2, 3, 4, 5, 6]


def test_stop_step_stops_on_the_full_schedule_and_a_rerun_without_it_continues(tmp_path):
    """``stop_step`` saves and stops part-way (the lr still follows ``steps``' cosine); the same run
    without the key resumes to ``steps``, bit-identical to an uninterrupted run."""
    config = TrainConfig(steps=6, batch_size=4, warmup_steps=2, checkpoint_steps=(3,), save_every=5, log_every=2)
    reference = Trainer(small_model(), config, tmp_path / "ref", progress=False)
    reference.fit(batch_fn)
    stopped = Trainer(small_model(), dataclasses.replace(config, stop_step=4), tmp_path / "run", progress=False)
    stopped.fit(batch_fn)
    assert stopped.step == 4 and {p.name for p in (tmp_path / "run").glob("*.pt")} == {"last.pt", "step_3.pt"}
    assert stopped.scheduler.get_last_lr()[0] == pytest.approx(config.lr * lr_factor(4, config))
    resumed = Trainer(small_model(), config, tmp_path / "run", progress=False)
    resumed.fit(batch_fn)
    for a, b in zip(reference.model.state_dict().values(), resumed.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match=r"stop_step must lie in \[0, steps=6\], got 7"):
        TrainConfig(steps=6, stop_step=7)


def test_batch_must_split_over_processes(tmp_path):
    from memgym.memory.recurrent.trainer import DistEnv

    with pytest.raises(ConfigError, match="batch_size=5"):
        Trainer(small_model(), TrainConfig(batch_size=5), tmp_path, dist_env=DistEnv(0, 2))


@pytest.mark.slow
def test_short_training_learns_the_recall_task_pooled_over_seeds(tmp_path):
    """Model seeds 0-2, 100 steps each (under a second): held-out recall accuracy, mean over the
    seeds, well above chance (0.25). Measured in session 22, one thread: 1.0 for each of seeds 0-4
    after 100 steps on the default path and under ``ATEN_CPU_CAPABILITY=default`` (after 150 steps
    also under ``ATEN_CPU_CAPABILITY=avx2``); after 60 steps 0.94-1.0."""
    config = TrainConfig(steps=100, batch_size=4, lr=3e-3, warmup_steps=10, checkpoint_steps=(), save_every=100)
    batch = batch_fn(10_000, 0, 1, batch=64)
    accuracies = []
    for seed in (0, 1, 2):
        trainer = Trainer(small_model(seed=seed), config, tmp_path / str(seed), progress=False)
        trainer.fit(lambda s, r, w: batch_fn(s, r, w, batch=16))
        with torch.no_grad():
            pred = trainer.model(batch["features"])["gain"][:, -1].argmax(-1)
        accuracies.append((pred == batch["gain_labels"][:, -1]).float().mean().item())
    assert sum(accuracies) / len(accuracies) > 0.9, accuracies


def _node(monkeypatch, *, gpus: int, world: int | None = None, local_rank: int | None = None) -> None:
    """A fake node: ``gpus`` CUDA devices, and torchrun's variables when ``world`` is given."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    for key, value in (("WORLD_SIZE", world), ("LOCAL_RANK", local_rank)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, str(value))


def test_each_torchrun_rank_trains_on_its_local_rank_gpu(monkeypatch):
    from memgym.memory.recurrent.trainer import resolve_device

    _node(monkeypatch, gpus=4, world=8, local_rank=2)  # two nodes of four GPUs: rank 6 is local rank 2
    assert resolve_device("cuda") == torch.device("cuda", 2)
    assert resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(ConfigError, match="names one GPU for all 8 torchrun processes"):
        resolve_device("cuda:1")
    _node(monkeypatch, gpus=2, world=4, local_rank=3)
    with pytest.raises(ConfigError, match="cuda:3 does not exist: this node has 2 CUDA device"):
        resolve_device("cuda")
    _node(monkeypatch, gpus=2)
    assert resolve_device("cuda") == torch.device("cuda") and resolve_device("cuda:1") == torch.device("cuda", 1)
    _node(monkeypatch, gpus=0)
    with pytest.raises(ConfigError, match="CUDA is not available"):
        resolve_device("cuda")
    with pytest.raises(ConfigError, match="device='gpu' is not a torch device"):
        resolve_device("gpu")


@pytest.mark.parametrize(("device", "backend"), [("cuda:2", "nccl"), ("cpu", "gloo")])
def test_the_process_group_backend_follows_the_device(monkeypatch, device, backend):
    import torch.distributed as dist

    from memgym.memory.recurrent.trainer import init_distributed

    _node(monkeypatch, gpus=4, world=4, local_rank=2)
    calls = []
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    monkeypatch.setattr(dist, "init_process_group", lambda name: calls.append(("group", name)))
    monkeypatch.setattr(dist, "get_rank", lambda: 2)
    monkeypatch.setattr(dist, "get_world_size", lambda: 4)
    monkeypatch.setattr(torch.cuda, "set_device", lambda d: calls.append(("set_device", torch.device(d))))
    env = init_distributed(device)
    assert (env.rank, env.world_size) == (2, 4)
    want = [("group", backend)] if backend == "gloo" else [("set_device", torch.device("cuda", 2)), ("group", "nccl")]
    assert calls == want
