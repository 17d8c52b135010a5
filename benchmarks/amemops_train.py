"""AMemOps training speed: chunked parallel form vs step loop per core, and attention vs GDN2.

One training step (forward, query cross-entropy at every 64th frame, backward) of the Table 1
model on random features. For each delta-rule core the chunked form is timed against the step
loop (the same model run frame by frame inside each layer) in the same run, at ``T = 2,048``,
batch 8; then matched attention (RoPE) against GDN2's chunked form at ``T = 4,096``. Each timing
runs in a fresh spawned process so its peak resident memory (``ru_maxrss``) is that step's own.

    python -m benchmarks amemops_train [--length 2048] [--batch 8] [--long 4096] [--cores gdn2,kda]
        [--step-length 512]   # time the (slow) step loop on fewer frames
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time

from benchmarks.harness import Timing, report


def _train_step_worker(
    core: str, step: bool, batch: int, length: int, repeats: int, threads: int
) -> tuple[float, float]:
    """Best seconds per training step and peak RSS in MiB (runs inside a fresh process)."""
    import torch

    from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig, query_loss

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = AMemOpsModel(ModelConfig(core=core))
    x = torch.randn(batch, length, 131)
    labels = torch.full((batch, length), -100)
    labels[:, 63::64] = torch.randint(0, 5, labels[:, 63::64].shape)
    warm = min(length, 128)  # first calls pay one-off allocation and dispatch costs: not timed
    query_loss(model(x[:, :warm], step=step), labels[:, :warm], labels[:, :warm]).backward()
    best = float("inf")
    for _ in range(repeats):
        model.zero_grad()
        start = time.perf_counter()
        loss = query_loss(model(x, step=step), labels, labels)
        loss.backward()
        best = min(best, time.perf_counter() - start)
    return best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(
    label: str, core: str, step: bool, batch: int, length: int, repeats: int, threads: int
) -> tuple[Timing, float]:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        seconds, peak = pool.apply(_train_step_worker, (core, step, batch, length, repeats, threads))
    return Timing(label, seconds, batch * length, "tokens"), peak


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks amemops_train", description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=2048, help="frames per stream for chunked vs step")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--long", type=int, default=4096, help="frames per stream for attention vs GDN2")
    parser.add_argument("--cores", default="gdn2,kda,gdn,no_erase,mamba2", help="comma-separated delta-rule cores")
    parser.add_argument("--repeats", type=int, default=2, help="timed chunked steps (best kept)")
    parser.add_argument(
        "--step-length",
        type=int,
        default=0,
        help="frames for the step loop (default: --length; its tokens/s is flat in T)",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads per timed process (both forms alike)")
    args = parser.parse_args(argv)
    for core in args.cores.split(","):
        chunked, chunked_peak = _measure(
            f"{core} chunked (C=64)", core, False, args.batch, args.length, args.repeats, args.threads
        )
        step_length = args.step_length or args.length
        stepped, step_peak = _measure(
            f"{core} step loop (T={step_length})", core, True, args.batch, step_length, 1, args.threads
        )
        report(
            f"amemops_train: {core}, T={args.length}, batch {args.batch}, forward+backward",
            chunked,
            stepped,
            [f"peak RSS: chunked {chunked_peak:.0f} MiB, step loop {step_peak:.0f} MiB"],
        )
    gdn2, gdn2_peak = _measure("gdn2 chunked (C=64)", "gdn2", False, args.batch, args.long, args.repeats, args.threads)
    attention, attention_peak = _measure(
        "attention_rope (SDPA)", "attention_rope", False, args.batch, args.long, args.repeats, args.threads
    )
    report(
        f"amemops_train: attention vs GDN2, T={args.long}, batch {args.batch}, forward+backward",
        attention,
        gdn2,
        [f"peak RSS: attention {attention_peak:.0f} MiB, gdn2 {gdn2_peak:.0f} MiB"],
    )
