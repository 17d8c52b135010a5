"""Trainer: lr schedule, checkpoints, metrics log and bit-identical resume after an interruption."""

from __future__ import annotations

import csv

import pytest
import torch

from memgym.agents.trainer import TrainConfig, Trainer, load_checkpoint_model, lr_factor
from memgym.core.errors import ConfigError
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig

SMALL = {"input_dim": 6, "width": 16, "heads": 1, "head_dim": 8, "mlp_hidden": 16, "layers": 1, "chunk_size": 8}


def small_model(core: str = "gdn2") -> AMemOpsModel:
    torch.manual_seed(0)
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


def test_batch_must_split_over_processes(tmp_path):
    from memgym.agents.trainer import DistEnv

    with pytest.raises(ConfigError, match="batch_size=5"):
        Trainer(small_model(), TrainConfig(batch_size=5), tmp_path, dist_env=DistEnv(0, 2))


@pytest.mark.slow
def test_short_training_learns_the_recall_task(tmp_path):
    config = TrainConfig(steps=150, batch_size=4, lr=3e-3, warmup_steps=10, checkpoint_steps=(), save_every=150)
    trainer = Trainer(small_model(), config, tmp_path, progress=False)
    trainer.fit(lambda s, r, w: batch_fn(s, r, w, batch=16))
    batch = batch_fn(10_000, 0, 1, batch=64)
    with torch.no_grad():
        pred = trainer.model(batch["features"])["gain"][:, -1].argmax(-1)
    assert (pred == batch["gain_labels"][:, -1]).float().mean() > 0.6  # chance: 0.25
