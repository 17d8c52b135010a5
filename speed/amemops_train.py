"""AMemOps training speed: chunked parallel form vs step loop per core, and attention vs GDN2.

First the bare recurrence shared by every delta-rule core (forward + backward of
``chunked_delta_rule`` vs ``delta_rule_loop``, batch 8, two 64x64 heads, ``T = 2,048``, on
``--kernel-threads 2`` torch threads), and, where
fla-core is installed (``memgym[bench]``), the same call against fla's own pure-PyTorch chunked
references loaded by file path: ``naive_chunk_gdn2`` on the same inputs, and
``naive_chunk_gated_delta_rule`` against ours on GDN gates (one decay and one β per head and
frame). Every form gets one untimed call on 128 frames first; the step loop and fla's GDN-2
(15 s of CPU) are timed once, the others best of ``--repeats``. Then one
training step (forward, query cross-entropy at every 64th frame, backward) of the whole Table 1
model on random features: for each delta-rule core the chunked form against the step loop (the
same model run frame by frame inside each layer), and matched attention (RoPE) against GDN2's
chunked form at ``T = 4,096``. Last, the training data sources: batches/s of
``data.source=env`` (streams recorded from ``memgym/AMemOps-v0`` vector-env rollouts, sync and
async) against ``data.source=direct`` (the generator read in the training process), the same
batches. The model-level ratio is smaller than the recurrence's because the
projections, convolution, MLP and classifiers cost the same in both forms. Each timing
runs in a fresh spawned process so its peak resident memory (``ru_maxrss``) is that step's own,
with ``OMP_WAIT_POLICY=PASSIVE`` unless the environment sets it.

    python -m speed amemops_train [--length 2048] [--batch 8] [--long 4096] [--cores gdn2,kda]
        [--kernel-threads 2] [--parts recurrence]
        [--step-length 256]   # quicker, but flatters the step loop (its per-token cost grows with T)
        [--parts sources] [--source-batch 8] [--source-steps 3] [--source-frames 2048]
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import os
import resource
import time
from pathlib import Path

from speed.harness import Timing, report


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


KERNEL_FORMS = {
    "chunked": "recurrence chunked (C=64)",
    "step": "recurrence step loop",
    "fla_gdn2": "fla naive_chunk_gdn2 (C=64)",
    "chunked_gdn": "GDN gates, ours chunked (C=64)",
    "fla_gdn": "GDN gates, fla naive_chunk_gated_delta_rule",
}


def _kernel_inputs(form: str, batch: int, length: int) -> list:
    """Leaf tensors of one recurrence call: GDN2 gates (per-channel decay, erase and write) or,
    for the ``*gdn`` forms, one decay and one β per head and frame; fla forms in fla's layout."""
    import torch
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(0)
    shape = (batch, 2, length, 64)
    q, k = (F.normalize(torch.randn(shape, generator=gen), dim=-1) for _ in range(2))
    v = torch.randn(shape, generator=gen)
    gate_shape = (*shape[:3], 1) if form.endswith("gdn") else shape
    g = -0.05 * torch.rand(gate_shape, generator=gen)
    gates = [torch.rand(gate_shape, generator=gen) for _ in range(1 if form.endswith("gdn") else 2)]
    leaves = [q, k, v, g, *gates]
    if form.startswith("fla"):
        leaves = [x.transpose(1, 2).contiguous() for x in leaves]
        if form == "fla_gdn":
            leaves[3:] = [x.squeeze(-1) for x in leaves[3:]]
    return [x.requires_grad_() for x in leaves]


def _kernel_function(form: str):
    """The recurrence of ``form``: a function of the leaves returning (outputs, final state)."""
    from memgym.memory.recurrent.delta_rule import chunked_delta_rule, delta_rule_loop
    from memgym.memory.recurrent.fla_reference import load_fla_naive

    def gdn_gates(q, k, v, g, beta):
        return chunked_delta_rule(q, k, v, g.expand_as(q), beta.expand_as(k), beta.expand_as(v))

    if form == "fla_gdn2":
        naive = load_fla_naive("gdn2").naive_chunk_gdn2
    elif form == "fla_gdn":
        naive = load_fla_naive("gated_delta_rule").naive_chunk_gated_delta_rule
    else:
        return {"chunked": chunked_delta_rule, "step": delta_rule_loop, "chunked_gdn": gdn_gates}[form]
    return lambda *leaves: naive(*leaves, output_final_state=True)


def _kernel_worker(form: str, batch: int, length: int, repeats: int, threads: int) -> tuple[float, float]:
    """Best seconds of one recurrence (forward + backward, B x 2 heads x 64 x 64) and peak RSS,
    after one untimed call on 128 frames (one-off allocation and dispatch costs)."""
    import torch

    torch.set_num_threads(threads)
    run = _kernel_function(form)
    best = float("inf")
    for frames in (min(length, 128), *(length,) * repeats):
        leaves = _kernel_inputs(form, batch, frames)
        start = time.perf_counter()
        out, state = run(*leaves)
        (out.square().mean() + state.square().mean()).backward()
        if frames == length:
            best = min(best, time.perf_counter() - start)
    return best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


SOURCES = {
    ("direct", "sync"): "direct (generator, in process)",
    ("env", "sync"): "env rollouts (sync make_vec)",
    ("env", "async"): "env rollouts (async make_vec)",
}


def _cpu_seconds() -> float:
    """CPU seconds used so far by this process and its live child processes (async env workers),
    read from ``/proc`` (Linux)."""
    total = time.process_time()
    for child in multiprocessing.active_children():
        fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return total


def _source_worker(batch: int, steps: int, frames: int) -> tuple[dict, dict]:
    """Wall and CPU seconds (workers included) for ``steps`` batches of each data source, timed
    batch by batch in turn (so a busy machine's load drifts onto all alike), after a first untimed
    batch of each (which opens the library and starts the workers). Each source trains its own
    seed (the streams are disjoint) and opens its own library: no source reuses clips another
    synthesised."""
    from memgym.core.config import load_config
    from memgym.pipelines import amemops_models
    from memgym.pipelines.amemops_models import AMemOpsTrainConfig, StreamBatches, stream_tensors

    iterators = {}
    for seed, (source, vectorization) in enumerate(SOURCES):
        amemops_models._open_library.cache_clear()  # each source its own clip cache, as in a training run
        overrides = (f"data.source={source}", f"data.vectorization={vectorization}", f"data.stream.frames={frames}")
        config = load_config(AMemOpsTrainConfig, overrides=overrides)
        iterators[source, vectorization] = StreamBatches(stream_tensors(config.data), batch, seed=seed).iterate(0, 0, 1)
        next(iterators[source, vectorization])
    seconds, cpu = dict.fromkeys(SOURCES, 0.0), dict.fromkeys(SOURCES, 0.0)
    for _ in range(steps):
        for key, batches in iterators.items():
            start, start_cpu = time.perf_counter(), _cpu_seconds()
            next(batches)
            seconds[key] += time.perf_counter() - start
            cpu[key] += _cpu_seconds() - start_cpu
    for batches in iterators.values():
        batches.close()
    return seconds, cpu


def _sources(args: argparse.Namespace) -> None:
    # a non-daemonic worker process: async vector envs start processes of their own
    import concurrent.futures

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        seconds, cpu = pool.submit(_source_worker, args.source_batch, args.source_steps, args.source_frames).result()
    timings = {key: Timing(label, seconds[key], args.source_steps, "batches") for key, label in SOURCES.items()}
    per_batch = {key: value / args.source_steps for key, value in cpu.items()}
    for mode in ("sync", "async"):
        report(
            f"amemops_train: data sources, batch {args.source_batch} of fresh {args.source_frames}-frame streams",
            timings["env", mode],
            timings["direct", "sync"],
            [
                f"CPU s per batch (worker processes included): {per_batch['env', mode]:.1f} "
                f"vs {per_batch['direct', 'sync']:.1f} for the baseline"
            ],
        )


def _measure_kernel(form: str, batch: int, length: int, repeats: int, threads: int) -> tuple[Timing, float]:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        seconds, peak = pool.apply(_kernel_worker, (form, batch, length, repeats, threads))
    return Timing(KERNEL_FORMS[form], seconds, batch * length, "tokens"), peak


def _measure(
    label: str, core: str, step: bool, batch: int, length: int, repeats: int, threads: int
) -> tuple[Timing, float]:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        seconds, peak = pool.apply(_train_step_worker, (core, step, batch, length, repeats, threads))
    return Timing(label, seconds, batch * length, "tokens"), peak


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed amemops_train", description=__doc__.splitlines()[0])
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
    parser.add_argument(
        "--kernel-threads", type=int, default=2, help="torch threads for the recurrence alone (every form alike)"
    )
    parser.add_argument("--parts", default="recurrence,cores,attention,sources", help="comma-separated parts to run")
    parser.add_argument("--source-batch", type=int, default=8, help="streams per batch for the data sources")
    parser.add_argument("--source-steps", type=int, default=3, help="timed batches per data source")
    parser.add_argument("--source-frames", type=int, default=2048, help="frames per stream for the data sources")
    args = parser.parse_args(argv)
    # every timed process (spawned below) lets idle OpenMP threads sleep instead of spin: spinning
    # threads of a many-op loop (the step form) stall on a loaded machine whenever one is descheduled
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    args.fla = importlib.util.find_spec("fla") is not None
    if not args.fla:
        print("fla-core is not installed (pip install 'memgym[bench]'): its naive chunk references are skipped")
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
    title = f"T={args.length}, batch {args.batch}, 2 heads 64x64, forward+backward, {args.kernel_threads} threads"
    timings = {}
    for form in ("chunked", "step", *(f for f in ("fla_gdn2", "chunked_gdn", "fla_gdn") if args.fla)):
        repeats = 1 if form in ("step", "fla_gdn2") else args.repeats
        timings[form] = _measure_kernel(form, args.batch, args.length, repeats, args.kernel_threads)
    peaks = {form: f"{peak:.0f} MiB" for form, (_, peak) in timings.items()}
    report(
        f"amemops_train: the delta-rule recurrence alone (every core), {title}",
        timings["chunked"][0],
        timings["step"][0],
        [f"peak RSS: chunked {peaks['chunked']}, step loop {peaks['step']}"],
    )
    if not args.fla:
        return
    report(
        f"amemops_train: recurrence vs fla-core's naive chunk GDN-2 (same inputs), {title}",
        timings["chunked"][0],
        timings["fla_gdn2"][0],
        [f"peak RSS: ours {peaks['chunked']}, fla {peaks['fla_gdn2']}"],
    )
    report(
        f"amemops_train: GDN gates vs fla-core's naive chunk gated delta rule, {title}",
        timings["chunked_gdn"][0],
        timings["fla_gdn"][0],
        [f"peak RSS: ours {peaks['chunked_gdn']}, fla {peaks['fla_gdn']}"],
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
