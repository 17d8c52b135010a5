"""Start-up cost: ``memgym list`` and the first ``reset`` of each env vs ``python -c "import memgym"``.

Every command runs in a fresh interpreter (nothing cached in-process), so it counts the imports a
user pays. Registries import a plugin's module only when its name is first used, so ``memgym list``
should cost about what ``import memgym`` costs, and an env's first reset only what that env needs.
For reference it also times importing every registered plugin (what any first registry lookup
cost before names pointed at ``module:attr``).

    python -m speed startup                       # every memgym/ gymnasium id
    python -m speed startup memgym/DialogMem-v0   # just these ids

Wall and CPU seconds (user + system of the child) are both printed: on a shared machine the CPU
time is the steadier number. Import and list timings are best of 3; env resets run once each (VoxMem's first reset builds its
default dataset and takes about a minute).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys

from speed.harness import Timing, report, time_best

IMPORT_ALL = "from memgym.core.registry import ALL_REGISTRIES\nfor registry in ALL_REGISTRIES:\n    registry.items()"


def _python(*args: str) -> float:
    """Run ``python ARGS`` in a fresh interpreter; its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"python {' '.join(args)} failed:\n{result.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _timed(label: str, args: tuple[str, ...], repeats: int) -> tuple[Timing, float]:
    """Best wall time (as a Timing) and best CPU seconds of ``repeats`` runs."""
    cpu: list[float] = []
    timing = time_best(label, lambda: cpu.append(_python(*args)), units=1, unit_name="runs", repeats=repeats)
    return timing, min(cpu)


def main(argv: list[str]) -> None:
    import gymnasium

    import memgym  # noqa: F401  (registers the memgym/ ids)

    parser = argparse.ArgumentParser(prog="python -m speed startup", description=__doc__.splitlines()[0])
    parser.add_argument("env_ids", nargs="*", help="gymnasium ids to reset (default: every memgym/ id)")
    args = parser.parse_args(argv)
    env_ids = args.env_ids or sorted(k for k in gymnasium.registry if k.startswith("memgym/"))
    baseline = _timed('python -c "import memgym"', ("-c", "import memgym"), 3)
    candidates = [
        _timed("memgym list", ("-m", "memgym", "list"), 3),
        _timed("import every registered plugin", ("-c", IMPORT_ALL), 1),
        *(_timed(f"make + reset(seed=0) {env_id}", ("-c", _reset_code(env_id)), 1) for env_id in env_ids),
    ]
    base_timing, base_cpu = baseline
    for timing, cpu in candidates:
        report(
            f"startup: {timing.label}",
            timing,
            base_timing,
            [
                f"wall: {timing.seconds:.2f} s vs {base_timing.seconds:.2f} s ({timing.seconds / base_timing.seconds:.1f}x)",
                f"cpu:  {cpu:.2f} s vs {base_cpu:.2f} s ({cpu / base_cpu:.1f}x)",
            ],
        )


def _reset_code(env_id: str) -> str:
    return f"import gymnasium, memgym\ngymnasium.make({env_id!r}).reset(seed=0)"
