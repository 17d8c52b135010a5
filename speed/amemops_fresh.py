"""Where a ``preset=cpu-audio-fresh`` training step spends its CPU: fresh streams vs the model.

In one process at one torch thread, CPU seconds (user + system, so other jobs on the machine do
not count) of: synthesising one clip of the embedded environmental library; one fresh training
stream of the preset (``StreamBatches`` indices of seed 0) split into generating its record,
mixing the excerpts, the noise and the log-mel front end, first with the library's default
in-memory cache (1,024 of its 2,000 clips, so random streams keep re-synthesising evicted clips)
and then with every clip held (``data.clip_cache=2000``, what the preset sets); and one optimiser
step (forward, backward, AdamW) of the preset's model per core on a batch of 16 such streams.

Usage: ``python -m speed amemops_fresh [STREAMS] [STEPS]`` (default 400 streams per cache setting,
5 timed steps per core after one untimed).
"""

from __future__ import annotations

import time

import torch

from memgym.core.benchmark import JobArgs
from memgym.datasets.amemops.audio import StreamRenderer, noise_for
from memgym.datasets.amemops.features import stream_features
from memgym.memory.recurrent.model import query_loss
from memgym.pipelines.amemops.streams import StreamBatches, StreamTensors
from memgym.pipelines.amemops.train import build_model, train_config

PARTS = ("record", "mix", "noise", "log-mel")


def _cpu() -> float:
    return time.process_time()


def _streams(tensors: StreamTensors, indices: list[int]) -> dict[str, float]:
    """Mean CPU seconds per stream of each of :data:`PARTS` over ``indices``."""
    renderer = StreamRenderer(tensors.library)
    spent = dict.fromkeys(PARTS, 0.0)
    for index in indices:
        start = _cpu()
        stream = tensors.stream(index)
        mixed = _cpu()
        audio = renderer.render(stream, noise=False)
        noised = _cpu()
        audio += noise_for(stream)
        featurised = _cpu()
        stream_features(stream, audio)
        for part, seconds in zip(PARTS, (mixed - start, noised - mixed, featurised - noised, _cpu() - featurised)):
            spent[part] += seconds
    return {part: seconds / len(indices) for part, seconds in spent.items()}


def _step_seconds(core: str, steps: int) -> float:
    """Mean CPU seconds of one optimiser step of ``core`` on a batch of 16 preset streams."""
    config = train_config(JobArgs(overrides=("preset=cpu-audio-fresh", f"model={core}")))
    batches = StreamBatches(StreamTensors(config.data), config.batch_size, 0)
    batch = batches(0, 0, 1)
    torch.manual_seed(0)
    model = build_model(config, batches.tensors.input_dim, batches.tensors.n_classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    spent = 0.0
    for step in range(steps + 1):
        start = _cpu()
        loss = query_loss(model(batch["features"]), batch["gain_labels"], batch["pan_labels"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        spent += (_cpu() - start) if step else 0.0
    return spent / steps


def main(argv: list[str]) -> None:
    streams = int(argv[0]) if argv else 400
    steps = int(argv[1]) if len(argv) > 1 else 5
    torch.set_num_threads(1)
    config = train_config(JobArgs(overrides=("preset=cpu-audio-fresh",)))
    tensors = StreamTensors(config.data)
    library = tensors.library
    batches = StreamBatches(tensors, config.batch_size, 0)  # the preset's indices; raises the cache
    held = library._cache_size
    library._cache_size = 1024  # the default, for the first measurement
    library._cache.clear()
    train_ids = [info.recording_id for info in library.all_infos() if info.split == "train"]
    start = _cpu()
    for recording_id in train_ids[:20]:
        library._load_uncached(library.info(recording_id))
    print(f"clip synthesis: {(_cpu() - start) / 20 * 1000:.1f} ms CPU a clip ({len(train_ids)} training clips)")
    indices = [batches.index(i) for i in range(2 * streams)]
    _streams(tensors, indices[:streams])  # warms the 1,024-clip cache
    default = _streams(tensors, indices[streams:])
    library.keep_in_memory(held)
    start = _cpu()
    for recording_id in train_ids:
        library.load(recording_id)
    print(f"holding every training clip: {_cpu() - start:.1f} s CPU once")
    every = _streams(tensors, indices[:streams])
    for label, spent in (("default cache (1,024 clips)", default), (f"data.clip_cache={held}", every)):
        parts = ", ".join(f"{p} {s * 1000:.1f}" for p, s in spent.items())
        print(f"fresh stream, {label}: {sum(spent.values()) * 1000:.1f} ms CPU ({parts})", flush=True)
    for core in ("gdn2", "kda", "no_erase"):
        print(f"training step, {core}, batch {config.batch_size}: {_step_seconds(core, steps):.3f} s CPU", flush=True)
