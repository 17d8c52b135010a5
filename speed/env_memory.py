"""``memgym/VoxMem-v0`` memory per step: observations sized by the turn against the zero-padded
waveform every observation used to carry (480,000 float32 samples, 1.92 MB, whatever the turn).

Candidate: the env as it is (``audio`` in 10 ms rows of the turn). Baseline (same run): the same
env under :class:`memgym.wrappers.PadAudio`, which rebuilds the padded form. Both play the
formation phase of the same episodes; per step the script reports the observation's bytes (its
arrays' ``nbytes``, mean and largest), the peak memory allocated during the step
(``tracemalloc``) and the steps per second.

    python -m speed env_memory             # builds a one-item dataset at 3K and 8K tokens
    python -m speed env_memory DATASET     # the dataset's first 4 episodes
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

import gymnasium
import numpy as np

from memgym.core.episode import Dataset
from memgym.envs.voxmem_env import VoxMemEnv
from memgym.wrappers import PadAudio
from speed.harness import Timing, report

EPISODES = 4


def observation_bytes(observation: dict) -> int:
    """Bytes of the arrays in one observation (text keys count their characters)."""
    return sum(np.asarray(v).nbytes if not isinstance(v, str) else len(v) for v in observation.values())


def play(env: gymnasium.Env, episodes: int) -> tuple[Timing, list[str]]:
    """Formation of ``episodes`` episodes (seeds 0..): per-step observation bytes and peak allocation."""
    sizes, peaks, steps, seconds = [], [], 0, 0.0
    for seed in range(episodes):
        obs, info = env.reset(seed=seed)
        while info["phase"] == "formation":
            tracemalloc.start()
            start = time.perf_counter()
            obs, _, _, _, info = env.step("")
            seconds += time.perf_counter() - start
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            sizes.append(observation_bytes(obs))
            steps += 1
    label = type(env).__name__
    lines = [
        f"  {label:<12} observation bytes/step: mean {np.mean(sizes) / 1e3:,.1f} kB, max {max(sizes) / 1e3:,.1f} kB; "
        f"peak allocation/step: mean {np.mean(peaks) / 1e3:,.1f} kB, max {max(peaks) / 1e3:,.1f} kB ({steps} steps)"
    ]
    return Timing(f"{label} formation steps", seconds, steps, "steps"), lines


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed env_memory")
    parser.add_argument("dataset", nargs="?", help="VoxMem dataset folder (default: build a one-item one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.dataset) if args.dataset else build_dataset(Path(tmp))
        episodes = min(EPISODES, len(Dataset.load(folder / "manifest.jsonl")))
        candidate, lines = play(VoxMemEnv(dataset=str(folder)), episodes)
        baseline, more = play(PadAudio(VoxMemEnv(dataset=str(folder))), episodes)
        report(f"env_memory: memgym/VoxMem-v0 formation, {episodes} episodes", candidate, baseline, lines + more)


def build_dataset(tmp: Path) -> Path:
    """A one-item dataset at 3K and 8K tokens (no recogniser gate; seconds to build)."""
    from memgym.backends.asr import ASRConfig
    from memgym.datasets.voxmem.build import VoxMemBuilder
    from memgym.datasets.voxmem.config import VoxMemConfig

    config = VoxMemConfig(items=1, cells=("sound/IE",), budgets=("3k", "8k"), asr=ASRConfig(kind="none"), out=str(tmp))
    return VoxMemBuilder(config).build()
