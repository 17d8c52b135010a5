"""AMemOps training speed: chunked parallel form vs step loop per core, and attention vs GDN2.

First the bare recurrence shared by every delta-rule core (forward + backward of
``chunked_delta_rule`` vs ``delta_rule_loop``, batch 8, two 64x64 heads, ``T = 2,048``). Then one
training step (forward, query cross-entropy at every 64th frame, backward) of the whole Table 1
model on random features: for each delta-rule core the chunked form against the step loop (the
same model run frame by frame inside each layer), and matched attention (RoPE) against GDN2's
chunked form at ``T = 4,096``. Last, the training data sources: batches/s of
``data.source=env`` (streams recorded from ``memgym/AMemOps-v0`` vector-env rollouts, sync and
async) against ``data.source=direct`` (the generator read in the training process), the same
batches. The model-level ratio is smaller than the recurrence's because the
projections, convolution, MLP and classifiers cost the same in both forms. Each timing
runs in a fresh spawned process so its peak resident memory (``ru_maxrss``) is that step's own.

    python -m benchmarks amemops_train [--length 2048] [--batch 8] [--long 4096] [--cores gdn2,kda]
        [--step-length 256]   # quicker, but flatters the step loop (its per-token cost grows with T)
        [--parts sources] [--source-batch 8] [--source-steps 3] [--source-frames 2048]
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


def _kernel_worker(chunked: bool, batch: int, length: int, repeats: int, threads: int) -> tuple[float, float]:
    """Best seconds of the bare recurrence (forward + backward, B x 2 heads x 64 x 64) and peak RSS."""
    import torch
    import torch.nn.functional as F

    from memgym.memory.recurrent.delta_rule import chunked_delta_rule, delta_rule_loop

    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    shape = (batch, 2, length, 64)
    q, k = (F.normalize(torch.randn(shape, generator=gen), dim=-1) for _ in range(2))
    v = torch.randn(shape, generator=gen)
    g = -0.05 * torch.rand(shape, generator=gen)
    b, w = torch.rand(shape, generator=gen), torch.rand(shape, generator=gen)
    inputs = [x.requires_grad_() for x in (q, k, v, g, b, w)]
    run = chunked_delta_rule if chunked else delta_rule_loop
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out, state = run(*inputs)
        (out.square().mean() + state.square().mean()).backward()
        best = min(best, time.perf_counter() - start)
    return best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


SOURCES = {
    ("direct", "sync"): "direct (generator, in process)",
    ("env", "sync"): "env rollouts (sync make_vec)",
    ("env", "async"): "env rollouts (async make_vec)",
}


def _source_worker(batch: int, steps: int, frames: int) -> dict[tuple[str, str], float]:
    """Seconds for ``steps`` batches of each data source, timed batch by batch in turn (so a busy
    machine's load drifts onto all alike), after a first untimed batch of each (which opens the
    library and starts the workers). Each source trains its own seed: the streams are disjoint."""
    from memgym.core.config import load_config
    from memgym.pipelines.amemops_models import AMemOpsTrainConfig, StreamBatches, stream_tensors

    iterators = {}
    for seed, (source, vectorization) in enumerate(SOURCES):
        overrides = (f"data.source={source}", f"data.vectorization={vectorization}", f"data.stream.frames={frames}")
        config = load_config(AMemOpsTrainConfig, overrides=overrides)
        iterators[source, vectorization] = StreamBatches(stream_tensors(config.data), batch, seed=seed).iterate(0, 0, 1)
        next(iterators[source, vectorization])
    seconds = dict.fromkeys(SOURCES, 0.0)
    for _ in range(steps):
        for key, batches in iterators.items():
            start = time.perf_counter()
            next(batches)
            seconds[key] += time.perf_counter() - start
    for batches in iterators.values():
        batches.close()
    return seconds


def _sources(args: argparse.Namespace) -> None:
    # a non-daemonic worker process: async vector envs start processes of their own
    import concurrent.futures

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        seconds = pool.submit(_source_worker, args.source_batch, args.source_steps, args.source_frames).result()
    timings = {key: Timing(label, seconds[key], args.source_steps, "batches") for key, label in SOURCES.items()}
    for mode in ("sync", "async"):
        report(
            f"amemops_train: data sources, batch {args.source_batch} of fresh {args.source_frames}-frame streams",
            timings["env", mode],
            timings["direct", "sync"],
        )


def _measure_kernel(label: str, chunked: bool, batch: int, length: int, repeats: int, threads: int):
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        seconds, peak = pool.apply(_kernel_worker, (chunked, batch, length, repeats, threads))
    return Timing(label, seconds, batch * length, "tokens"), peak


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
        help="frames for the step loop (default: --length); shorter is quicker but flatters the step loop",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads per timed process (both forms alike)")
    parser.add_argument("--parts", default="recurrence,cores,attention,sources", help="comma-separated parts to run")
    parser.add_argument("--source-batch", type=int, default=8, help="streams per batch for the data sources")
    parser.add_argument("--source-steps", type=int, default=3, help="timed batches per data source")
    parser.add_argument("--source-frames", type=int, default=2048, help="frames per stream for the data sources")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if "recurrence" in parts:
        _recurrence(args)
    if "cores" in parts:
        _cores(args)
    if "attention" in parts:
        _attention(args)
    if "sources" in parts:
        _sources(args)


def _recurrence(args: argparse.Namespace) -> None:
    kernel_chunked, kernel_chunked_peak = _measure_kernel(
        "recurrence chunked (C=64)", True, args.batch, args.length, args.repeats, args.threads
    )
    kernel_loop, kernel_loop_peak = _measure_kernel(
        "recurrence step loop", False, args.batch, args.length, 1, args.threads
    )
    report(
        f"amemops_train: the delta-rule recurrence alone (every core), T={args.length}, batch {args.batch}, 2 heads 64x64, forward+backward",
        kernel_chunked,
        kernel_loop,
        [f"peak RSS: chunked {kernel_chunked_peak:.0f} MiB, step loop {kernel_loop_peak:.0f} MiB"],
    )


def _cores(args: argparse.Namespace) -> None:
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


def _attention(args: argparse.Namespace) -> None:
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
