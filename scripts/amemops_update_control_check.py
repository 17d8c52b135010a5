"""The update-control learning check at a chosen length, on CPU arithmetic paths.

Runs what ``tests/pipelines/amemops/test_update_control_learning.py`` runs (KDA and no-erase on
``preset=cpu-update-control``, seeds 0-2, ``steps=STEPS``, one single-threaded process a path),
on arithmetic paths (``--paths``; by default ``ATEN_CPU_CAPABILITY=default`` and the machine's
default path; ``aten_avx2``: ``ATEN_CPU_CAPABILITY=avx2``; ``mkl_compatible``: ``MKL_CBWR=COMPATIBLE``),
and prints per path
the seed means and per-seed values (pp) of KDA minus no-erase on post-update and initial queries and
their difference (the interaction), each model's accuracies, the share of no-erase's wrong
post-update answers that gave the superseded value, and the CPU seconds of the child processes.

Usage: ``python scripts/amemops_update_control_check.py STEPS RUNS`` (run from the repository root);
writes ``RUNS/<path>/...`` and ``RUNS/summary.json``. Used for docs/amemops_models.md, "A slow test of
the update control".
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from tests.support.amemops_learning import SEEDS, accuracy, pooled_margin, update_control_scores

PATHS = {
    "aten_default": {"ATEN_CPU_CAPABILITY": "default"},
    "aten_avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "default": {},
    "mkl_compatible": {"MKL_CBWR": "COMPATIBLE"},
}
"""Arithmetic paths: name -> environment added to each process."""


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def check(steps: int, runs: Path, env: dict[str, str]) -> dict:
    """The check's numbers on one path (see the module docstring)."""
    cpu, start = _children_cpu_s(), time.perf_counter()
    scores = update_control_scores(runs, env=env, steps=steps)
    post, post_per_seed = pooled_margin(scores, "kda", "post_update")
    initial, initial_per_seed = pooled_margin(scores, "kda", "initial")
    wrong = [r for s in SEEDS for r in scores[("no_erase", s)]["post_update"] if not r["correct"]]
    return {
        "post_update": post,
        "initial": initial,
        "interaction": post - initial,
        "post_update_per_seed": post_per_seed,
        "initial_per_seed": initial_per_seed,
        "interaction_per_seed": [p - i for p, i in zip(post_per_seed, initial_per_seed)],
        "accuracy": {
            f"{m}/{s}": {q: round(accuracy(scores[(m, s)][q]), 1) for q in ("initial", "post_update")}
            for m in ("kda", "no_erase")
            for s in SEEDS
        },
        "no_erase_previous_share": [sum(int(r["previous_value"]) for r in wrong), len(wrong)],
        "cpu_s": _children_cpu_s() - cpu,
        "wall_s": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("steps", type=int, help="training steps (the cosine schedule ends there)")
    parser.add_argument("runs", type=Path, help="folder for the runs and summary.json")
    parser.add_argument(
        "--paths", nargs="+", choices=list(PATHS), default=["aten_default", "default"], help="paths to run"
    )
    args = parser.parse_args()
    summary = {}
    for name in args.paths:
        summary[name] = check(args.steps, args.runs / name, PATHS[name])
        print(name, json.dumps(summary[name]), flush=True)
    (args.runs / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
