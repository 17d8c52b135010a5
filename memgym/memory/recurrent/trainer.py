"""Training loop for memory models: resumable, logged, DDP-ready.

:class:`Trainer` runs AdamW with linear warm-up and cosine decay on batches produced by a
``batch_fn(step, rank, world_size) -> Batch`` or a :class:`BatchSource` (AMemOps: streams read
from the generator, or recorded from env rollouts by :mod:`memgym.agents.stream_rollouts`). Because every batch is a pure function of the
step index (the sampler derives its generator from ``(config hash, seed, step, rank)``), a run that
is interrupted and resumed sees exactly the batches it would have seen.

Run folder (written by rank 0 only)::

    last.pt              model, optimizer, scheduler and step (rewritten every ``save_every``)
    step_<N>.pt          model weights at each of ``checkpoint_steps`` (for evaluation)
    metrics.csv          step, loss, query accuracy, learning rate, tokens/s, seconds

Multi-process training: launch the same command with ``torchrun --nproc-per-node N``; when
``WORLD_SIZE`` > 1 the trainer joins the process group (``gloo`` on CPU, ``nccl`` on GPU, where
each process uses ``cuda:<LOCAL_RANK>``: :func:`resolve_device`), wraps
the model in ``DistributedDataParallel`` and gives each rank ``batch_size / world_size`` streams
of every step.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from memgym.core.errors import ConfigError, RecordError
from memgym.core.paths import require_file
from memgym.core.seeding import setting
from memgym.datasets.amemops.config import IGNORE_INDEX
from memgym.memory.recurrent.model import query_loss

Batch = dict[str, torch.Tensor]
"""``{"features": (B, T, F) float32, "gain_labels": (B, T) int64, "pan_labels": (B, T) int64}``
(labels are -100 except at query ends)."""

BatchFn = Callable[[int, int, int], Batch]
"""``batch_fn(step, rank, world_size)``: this rank's share of step ``step``'s batch."""


class BatchSource(Protocol):
    """Yields this rank's share of every batch from ``start_step`` on (e.g. a prefetching DataLoader)."""

    def iterate(self, start_step: int, rank: int, world_size: int) -> Iterator[Batch]: ...


def _batches(source: BatchFn | BatchSource, start: int, rank: int, world: int) -> Iterator[Batch]:
    if hasattr(source, "iterate"):
        yield from source.iterate(start, rank, world)
        return
    step = start
    while True:
        yield source(step, rank, world)
        step += 1


METRIC_FIELDS = ("step", "loss", "query_accuracy", "lr", "tokens_per_s", "elapsed_s")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (defaults: the paper's)."""

    steps: int = dataclasses.field(default=24000, metadata={"help": "optimizer steps", "min": 1})
    batch_size: int = dataclasses.field(
        default=40, metadata={"help": "streams per step (all ranks together)", "min": 1}
    )
    lr: float = dataclasses.field(default=1e-3, metadata={"help": "peak learning rate"})
    warmup_steps: int = dataclasses.field(default=300, metadata={"help": "linear warm-up steps", "min": 0})
    min_lr_ratio: float = dataclasses.field(
        default=0.0, metadata={"help": "final lr / peak lr of the cosine", "min": 0.0, "max": 1.0}
    )
    weight_decay: float = dataclasses.field(default=0.01, metadata={"help": "AdamW weight decay"})
    grad_clip: float = dataclasses.field(default=1.0, metadata={"help": "gradient norm clip (0: off)"})
    checkpoint_steps: tuple[int, ...] = dataclasses.field(
        default=(12000, 24000), metadata={"help": "steps whose weights are kept as step_<N>.pt", "min": 1}
    )
    save_every: int = dataclasses.field(default=200, metadata={"help": "steps between resume checkpoints", "min": 1})
    log_every: int = dataclasses.field(default=10, metadata={"help": "steps between metrics rows", "min": 1})
    stop_step: int = setting(
        0,
        "stop after this step, saved for resuming (0: at steps); the lr schedule still spans steps, "
        "and a later run without the key continues to steps",
        hashed=False,
        added=True,
        min=0,
    )

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or self.save_every < 1 or self.log_every < 1:
            raise ValueError("steps, batch_size, save_every and log_every must be >= 1")
        if self.warmup_steps < 0 or not 0.0 <= self.min_lr_ratio <= 1.0:
            raise ValueError("warmup_steps must be >= 0 and min_lr_ratio in [0, 1]")
        if not 0 <= self.stop_step <= self.steps:
            raise ValueError(f"stop_step must lie in [0, steps={self.steps}], got {self.stop_step}")

    @property
    def end_step(self) -> int:
        """The step this run stops at: ``stop_step``, or ``steps`` when it is 0."""
        return self.stop_step or self.steps


def lr_factor(step: int, config: TrainConfig) -> float:
    """Multiplier of the peak lr at optimizer step ``step`` (0-based): linear warm-up, cosine decay."""
    if step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    span = max(1, config.steps - config.warmup_steps)
    progress = min(1.0, (step - config.warmup_steps) / span)
    return config.min_lr_ratio + (1.0 - config.min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


@dataclasses.dataclass(frozen=True)
class DistEnv:
    """This process's place in a (possibly single-process) training job."""

    rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def resolve_device(device: str) -> torch.device:
    """This process's torch device for a ``device`` setting (``cpu``, ``cuda``, ``cuda:1``).

    Under ``torchrun`` (``LOCAL_RANK`` set, ``WORLD_SIZE`` > 1) a bare ``cuda`` is
    ``cuda:<LOCAL_RANK>``, so each process of a multi-GPU node trains on its own GPU.

    Raises:
        ConfigError: CUDA is asked for but not available, the local rank has no GPU, or one
            explicit GPU index is given to several processes.
    """
    try:
        chosen = torch.device(device)
    except RuntimeError as exc:
        raise ConfigError(f"device='{device}' is not a torch device ({exc})") from None
    if chosen.type != "cuda":
        return chosen
    if not torch.cuda.is_available():
        raise ConfigError(f"device='{device}' but CUDA is not available; use device=cpu")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = os.environ.get("LOCAL_RANK")
    if world > 1 and local_rank is not None:
        if chosen.index is not None:
            raise ConfigError(
                f"device='{device}' names one GPU for all {world} torchrun processes; "
                "use device=cuda (each process takes cuda:<LOCAL_RANK>)"
            )
        chosen = torch.device("cuda", int(local_rank))
    count = torch.cuda.device_count()
    if chosen.index is not None and chosen.index >= count:
        raise ConfigError(f"device {chosen} does not exist: this node has {count} CUDA device(s)")
    return chosen


def init_distributed(device: str | torch.device = "cpu") -> DistEnv:
    """Join the torchrun process group when ``WORLD_SIZE`` > 1 (``nccl`` for a CUDA ``device``,
    which becomes this process's current device, else ``gloo``); otherwise a single process."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistEnv()
    import torch.distributed as dist

    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return DistEnv(rank=dist.get_rank(), world_size=dist.get_world_size())


def query_accuracy(outputs: dict[str, Any], batch: Batch) -> tuple[int, int]:
    """(correct, total) argmax predictions over the labelled frames of both heads."""
    correct = total = 0
    for head in ("gain", "pan"):
        labels = batch[f"{head}_labels"]
        mask = labels != IGNORE_INDEX
        correct += int((outputs[head].argmax(-1)[mask] == labels[mask]).sum())
        total += int(mask.sum())
    return correct, total


class Trainer:
    """Trains ``model`` on ``batch_fn`` batches into ``run_dir``; see the module docstring.

    Args:
        model: the model to train (moved to ``device``).
        config: optimisation settings.
        run_dir: folder for checkpoints and metrics (created).
        dist_env: from :func:`init_distributed`.
        device: torch device.
        progress: show a tqdm bar (rank 0).
    """

    def __init__(
        self,
        model: nn.Module,
        config: TrainConfig,
        run_dir: Path,
        *,
        dist_env: DistEnv | None = None,
        device: str | torch.device = "cpu",
        progress: bool = True,
    ) -> None:
        self.dist = dist_env or DistEnv()
        if config.batch_size % self.dist.world_size:
            raise ConfigError(
                f"train.batch_size={config.batch_size} is not divisible by the {self.dist.world_size} processes"
            )
        self.config = config
        self.run_dir = Path(run_dir)
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.progress = progress
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: lr_factor(s, config))
        self.step = 0
        self.ddp = None
        if self.dist.world_size > 1:
            from torch.nn.parallel import DistributedDataParallel

            self.ddp = DistributedDataParallel(
                self.model, device_ids=None if self.device.type == "cpu" else [self.device]
            )

    @property
    def last_path(self) -> Path:
        return self.run_dir / "last.pt"

    def checkpoint_path(self, step: int) -> Path:
        return self.run_dir / f"step_{step}.pt"

    def resume(self) -> int:
        """Load ``last.pt`` if present; returns the step to continue from."""
        if not self.last_path.exists():
            return 0
        try:
            state = torch.load(self.last_path, map_location=self.device, weights_only=False)
        except Exception as exc:  # a truncated or foreign file
            raise RecordError(f"{self.last_path}: cannot be read as a training checkpoint ({exc})") from None
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = int(state["step"])
        return self.step

    def _save(self, path: Path, *, full: bool) -> None:
        if not self.dist.is_main:
            return
        state: dict[str, Any] = {"model": self.model.state_dict(), "step": self.step}
        if full:
            state |= {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict()}
        if hasattr(self.model, "config"):
            state["model_config"] = dataclasses.asdict(self.model.config)
        tmp = path.with_name(path.name + ".tmp")
        torch.save(state, tmp)
        tmp.replace(path)

    def _metrics_writer(self):
        path = self.run_dir / "metrics.csv"
        rows: list[dict[str, str]] = []
        if path.exists():
            with path.open(newline="", encoding="utf-8") as handle:
                rows = [r for r in csv.DictReader(handle) if int(r["step"]) <= self.step]
        handle = path.open("w", newline="", encoding="utf-8")
        writer = csv.DictWriter(handle, fieldnames=METRIC_FIELDS)
        writer.writeheader()
        writer.writerows(rows)  # rows past the resumed step were never checkpointed: dropped
        handle.flush()
        return handle, writer

    # Over 60 lines on purpose: resume, step, log, checkpoint and save are the order of one
    # training step; kept together so the resume guarantee (same batches after a restart) is visible.
    def _train_step(self, network: nn.Module, raw: dict[str, Any]) -> tuple[float, int, int, int]:
        """One optimizer step on the batch ``raw``; returns its loss, correctly answered and asked
        queries, and frames (all ranks together)."""
        batch = {k: raw[k].to(self.device) for k in ("features", "gain_labels", "pan_labels")}
        outputs = network(batch["features"])
        loss = query_loss(outputs, batch["gain_labels"], batch["pan_labels"])
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        correct, total = query_accuracy(outputs, batch)
        frames = batch["features"].shape[0] * batch["features"].shape[1] * self.dist.world_size
        return float(loss.detach()), correct, total, frames

    def fit(self, batches: BatchFn | BatchSource) -> Path:
        """Train until ``config.end_step`` (resuming if possible) on ``batches``; returns the run folder.

        Only the tensor entries ``features``, ``gain_labels`` and ``pan_labels`` of a batch are used.
        """
        from tqdm import tqdm

        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.resume()
        network = self.ddp or self.model
        network.train()
        handle, writer = self._metrics_writer() if self.dist.is_main else (None, None)
        bar = tqdm(
            total=self.config.steps,
            initial=self.step,
            desc=f"train {self.run_dir.name}",
            disable=not (self.progress and self.dist.is_main),
        )
        start = time.perf_counter()
        window_tokens, window_start = 0, time.perf_counter()
        losses: list[float] = []
        correct = total = 0
        stream = _batches(batches, self.step, self.dist.rank, self.dist.world_size)
        try:
            end = self.config.end_step
            while self.step < end:
                loss, c, t, tokens = self._train_step(network, next(stream))
                losses.append(loss)
                correct, total, window_tokens = correct + c, total + t, window_tokens + tokens
                bar.update(1)
                if self.step % self.config.log_every == 0 or self.step == end:
                    now = time.perf_counter()
                    row = {
                        "step": self.step,
                        "loss": f"{sum(losses) / len(losses):.6f}",
                        "query_accuracy": f"{correct / max(total, 1):.4f}",
                        "lr": f"{self.scheduler.get_last_lr()[0]:.3e}",
                        "tokens_per_s": f"{window_tokens / max(now - window_start, 1e-9):.1f}",
                        "elapsed_s": f"{now - start:.1f}",
                    }
                    if writer is not None:
                        writer.writerow(row)
                        handle.flush()
                    bar.set_postfix(loss=row["loss"], acc=row["query_accuracy"])
                    losses, correct, total, window_tokens, window_start = [], 0, 0, 0, now
                if self.step in self.config.checkpoint_steps or self.step == self.config.steps:
                    self._save(self.checkpoint_path(self.step), full=False)
                if self.step % self.config.save_every == 0 or self.step == end:
                    self._save(self.last_path, full=True)
        finally:
            stream.close()  # stops a batch source's workers (e.g. async vector envs)
            bar.close()
            if handle is not None:
                handle.close()
        return self.run_dir


def load_checkpoint_model(path: Path, model_factory: Callable[[dict[str, Any]], nn.Module]) -> nn.Module:
    """Rebuild a model from ``step_<N>.pt``/``last.pt`` written by :class:`Trainer`."""
    require_file(path, "checkpoint", "a .pt file", hint="train first or check the run folder", error=RecordError)
    state = torch.load(path, map_location="cpu", weights_only=False)
    if "model_config" not in state:
        raise RecordError(f"{path}: checkpoint has no model_config")
    model = model_factory(state["model_config"])
    model.load_state_dict(state["model"])
    return model
