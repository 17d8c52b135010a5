"""Two gloo processes (as under torchrun) train to the same weights as one process on the whole batch."""

from __future__ import annotations

import os
import socket

import pytest
import torch
import torch.multiprocessing as mp

from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.memory.recurrent.trainer import TrainConfig, Trainer, init_distributed

SMALL = {"input_dim": 6, "width": 16, "heads": 1, "head_dim": 8, "mlp_hidden": 16, "layers": 1, "chunk_size": 8}
CONFIG = TrainConfig(steps=3, batch_size=4, warmup_steps=1, checkpoint_steps=(), save_every=3, log_every=1)


def global_batch(step: int, rank: int, world: int):
    gen = torch.Generator().manual_seed(step)
    x = torch.randn(4, 12, 6, generator=gen)
    labels = torch.full((4, 12), -100)
    labels[:, -1] = torch.randint(0, 4, (4,), generator=gen)
    share = slice(rank * 4 // world, (rank + 1) * 4 // world)
    return {"features": x[share], "gain_labels": labels[share], "pan_labels": labels[share]}


def model() -> AMemOpsModel:
    torch.manual_seed(0)
    return AMemOpsModel(ModelConfig(core="gdn2", **SMALL))


def _worker(rank: int, port: int, folder: str) -> None:
    os.environ.update(WORLD_SIZE="2", RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    env = init_distributed()
    trainer = Trainer(model(), CONFIG, folder, dist_env=env, progress=False)
    trainer.fit(global_batch)
    torch.save(trainer.model.state_dict(), f"{folder}/rank{rank}.pt")
    torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_ddp_matches_single_process(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    mp.spawn(_worker, args=(port, str(tmp_path / "ddp")), nprocs=2, join=True)
    single = Trainer(model(), CONFIG, tmp_path / "single", progress=False)
    single.fit(global_batch)
    rank0 = torch.load(tmp_path / "ddp" / "rank0.pt")
    rank1 = torch.load(tmp_path / "ddp" / "rank1.pt")
    for name, weight in single.model.state_dict().items():
        assert torch.equal(rank0[name], rank1[name])
        torch.testing.assert_close(rank0[name], weight, rtol=1e-5, atol=1e-6)
    assert (tmp_path / "ddp" / "last.pt").exists() and (tmp_path / "ddp" / "metrics.csv").exists()
