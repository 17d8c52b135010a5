"""VoxMem offline cascade speed: the recogniser's audio seconds per wall second (per-turn against
batched, float32 against int8, 30 s against fitted windows, with word error rates), then items/s
across a nested 8K-64K chain, with and without the turn cache, formed through ``memgym/VoxMem-v0``.

The ``cascaded`` memory (ASR + acoustic measurements + sound tags + retrieval) prepares the chat
for one item at each budget of a nested chain: 8K and 16K by default (a few minutes on a busy
2-core machine), 8K, 16K, 32K and 64K with ``--full``. Candidate: the whole chain with one shared
:class:`~memgym.memory.voxmem.cache.TurnCache` (each longer history reuses the shorter one's turn
analyses). Baseline (same run): the same chain with a fresh cache and a fresh recogniser per
budget. The nested chain should cost little more than its 64K history alone, which is printed too.

    python -m speed voxmem_eval                  # builds one item at 8K + 16K and times it
    python -m speed voxmem_eval --full           # one item at 8K-64K (the ASR of ~14 min of audio)
    python -m speed voxmem_eval DATASET [--full] # the dataset's first item (by id)

With a DATASET folder its first item is timed at the dataset's budgets up to 16K (all of them
with ``--full``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from memgym.agents.voxmem_agent import form_memory
from memgym.core.episode import Dataset
from memgym.envs.voxmem_env import VoxMemEnv
from memgym.memory.voxmem.cache import TurnCache
from memgym.memory.voxmem.cascaded import CascadedMemory
from memgym.pipelines.voxmem.evaluation import train_sound_tagger
from memgym.pipelines.voxmem.models import ASRConfig, build_asr
from speed.harness import Timing, report


def fresh_asr():
    """A new recogniser (its own in-memory transcript cache empty)."""
    try:
        from memgym.backends.asr import make_asr_backend

        make_asr_backend.cache_clear()
    except ImportError:
        pass
    return build_asr(ASRConfig())


def chain_seconds(episodes, folder: Path, tagger, *, shared: bool) -> float:
    """Wall seconds to form the memory over every episode (through ``memgym/VoxMem-v0``, as the
    eval does) and prepare its chat, budgets in increasing order."""
    env = VoxMemEnv(dataset=str(folder))
    cache, asr = TurnCache(), fresh_asr()
    total = 0.0
    for episode in episodes:
        if not shared:
            cache, asr = TurnCache(), fresh_asr()
        start = time.perf_counter()
        memory = CascadedMemory(asr, tagger, cache)
        memory.retrieve(form_memory(env, memory, episode))
        total += time.perf_counter() - start
    return total


RECOGNISERS = (
    ("per-turn, float32, 30 s windows (default)", "float32", "full", False),
    ("batched turns, float32, 30 s windows", "float32", "full", True),
    ("batched turns, int8, 30 s windows", "int8", "full", True),
    ("batched turns, int8, fitted windows", "int8", "fit", True),
)
"""(label, compute type, window, batched) of the recognisers timed on the same turns."""


def recogniser_rates(folder: Path, episode, turns: int, threads: int) -> tuple[list[Timing], list[str]]:
    """Audio seconds per wall second of each of :data:`RECOGNISERS` on the first ``turns`` user
    turns of ``episode`` (each with a fresh model and cache), and per recogniser its word error
    rate against the true words and how many transcripts equal the default's."""
    from memgym.backends.asr.faster_whisper import FasterWhisperBackend
    from memgym.datasets.speech.intelligibility import word_errors
    from memgym.datasets.voxmem.audio_files import read_turn_audio

    users = [t for s in episode.sessions for t in s.turns if t.role == "user"][:turns]
    clips = [read_turn_audio(folder / t.audio) for t in users]
    seconds = sum(c.size for c in clips) / 16000
    timings, lines, default = [], [], None
    for label, compute_type, window, batched in RECOGNISERS:
        asr = FasterWhisperBackend(
            compute_type=compute_type, window=window, cpu_threads=threads, batch_turns=8 if batched else 1
        )
        start = time.perf_counter()
        texts = asr.transcribe_batch(clips, 16000) if batched else [asr.transcribe(c, 16000) for c in clips]
        timings.append(Timing(label, time.perf_counter() - start, seconds, "audio s"))
        default = default or texts
        errors = [word_errors(t.text, text) for t, text in zip(users, texts)]
        wer = 100.0 * sum(e for e, _ in errors) / max(sum(n for _, n in errors), 1)
        same = sum(a == b for a, b in zip(texts, default))
        lines.append(f"{label:<44} {timings[-1].rate:8.3g} audio s / wall s   WER {wer:5.1f} %   "
                     f"{same}/{len(texts)} transcripts as the default")  # fmt: skip
    return timings, lines


QUICK_BUDGETS = ("8k", "16k")
FULL_BUDGETS = ("8k", "16k", "32k", "64k")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed voxmem_eval")
    parser.add_argument("dataset", nargs="?", help="VoxMem dataset folder (default: build one item)")
    parser.add_argument("--full", action="store_true", help="the whole 8K-64K chain (default: 8K + 16K)")
    parser.add_argument("--turns", type=int, default=48, help="user turns the recognisers are timed on")
    parser.add_argument("--threads", type=int, default=2, help="recogniser threads (2 = the 2-core target)")
    args = parser.parse_args(argv)
    longest = 64 * 1024 if args.full else 16 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        if args.dataset:
            folder = Path(args.dataset)
        else:
            from memgym.datasets.voxmem.build import VoxMemBuilder
            from memgym.datasets.voxmem.config import VoxMemConfig

            budgets = FULL_BUDGETS if args.full else QUICK_BUDGETS
            config = VoxMemConfig(items=1, cells=("sound/IE",), budgets=budgets, out=f"{tmp}/ds")
            folder = VoxMemBuilder(config).build()
        episodes = [e for e in Dataset.load(folder / "manifest.jsonl") if e.budget <= longest]
        first = min(e.items[0].item_id for e in episodes)
        episodes = sorted((e for e in episodes if e.items[0].item_id == first), key=lambda e: e.budget)
        timings, lines = recogniser_rates(folder, episodes[-1], args.turns, args.threads)
        report(
            f"voxmem_eval: recogniser speed on {args.turns} user turns, {args.threads} threads (audio s per wall s)",
            timings[-1], timings[0], extra=lines,
        )  # fmt: skip
        tagger = train_sound_tagger(folder)
        last = [e for e in episodes if e.budget == max(x.budget for x in episodes)]
        alone = chain_seconds(last, folder, tagger, shared=False)
        uncached = chain_seconds(episodes, folder, tagger, shared=False)
        cached = chain_seconds(episodes, folder, tagger, shared=True)
        n = len(episodes)
        report(
            f"voxmem_eval: cascaded-memory items per second over the nested chain "
            f"{' + '.join(f'{e.budget // 1024}K' for e in episodes)}",
            Timing("shared turn cache", cached, n, "items"),
            Timing("fresh cache per budget", uncached, n, "items"),
            extra=[
                f"items per minute: {60 * n / cached:.2f} with the shared cache, {60 * n / uncached:.2f} with a fresh "
                f"cache per budget",
                f"whole chain with the cache: {cached:.1f} s; fresh cache per budget: {uncached:.1f} s; "
                f"the longest budget alone (fresh cache): {alone:.1f} s",
            ],
        )
