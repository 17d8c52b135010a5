"""``memgym generate dialogmem`` on Ray: two workers against one, on this machine.

``python -m speed ray_scaling [--scenes 12] [--cpus 2]``. Starts a local Ray with ``--cpus``
CPUs and generates the same ``--scenes`` houses (one episode each, CPU-bound: house, traversal,
visibility rendering, dialogue) with ``executor=ray workers=1``, then ``workers=2``; the baseline
is one worker, measured in the same run. Each timing starts from fresh worker processes that
first build two other houses (so neither timing includes importing memgym in the workers or
finds its houses in a worker's scene cache). Both runs must write the same episodes. The
local executor (this process) is timed too, for reference. The load average is printed: on a
shared machine the ratio measures the CPU time the other processes leave.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from memgym.core.benchmark import JobArgs
from memgym.core.executors import import_ray, release_workers
from memgym.pipelines.dialogmem.generation import generate
from speed.harness import Timing, report


def _generate(out: Path, scenes: int, first_seed: int, *executor: str) -> Path:
    overrides = (f"scenes={scenes}", f"first_house_seed={first_seed}", *executor)
    return generate(JobArgs(overrides=overrides, out=out, progress=False))


def _time_workers(folder: Path, scenes: int, workers: int) -> tuple[Timing, bytes]:
    ray_options = ("executor=ray", f"workers={workers}")
    release_workers()
    _generate(folder / f"warm{workers}.jsonl", workers, 1000, *ray_options)  # one house per fresh worker
    start = time.perf_counter()
    out = _generate(folder / f"workers{workers}.jsonl", scenes, 0, *ray_options)
    seconds = time.perf_counter() - start
    print(f"workers={workers}: {scenes} episodes in {seconds:.1f} s", flush=True)
    return Timing(f"executor=ray workers={workers}", seconds, scenes, "episodes"), out.read_bytes()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed ray_scaling")
    parser.add_argument("--scenes", type=int, default=12, help="houses generated (one episode each)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray")
    args = parser.parse_args(argv)

    ray = import_ray()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        one, episodes_one = _time_workers(folder, args.scenes, 1)
        two, episodes_two = _time_workers(folder, args.scenes, 2)
        release_workers()
        start = time.perf_counter()
        local = _generate(folder / "local.jsonl", args.scenes, 0).read_bytes()
        local_seconds = time.perf_counter() - start
    ray.shutdown()
    if not episodes_one == episodes_two == local:
        raise SystemExit("ray_scaling: the runs wrote different episodes")
    load_after = os.getloadavg()
    report(
        f"DialogMem generate on Ray, {args.scenes} episodes, {args.cpus} CPUs",
        two,
        one,
        [
            f"executor=local (this process, reference): {args.scenes / local_seconds:.3f} episodes/s",
            f"machine: {os.cpu_count()} CPUs; 1-min load average {load_before[0]:.1f} before, "
            f"{load_after[0]:.1f} after",
            "identical episodes from workers=1, workers=2 and executor=local: yes",
        ],
    )
