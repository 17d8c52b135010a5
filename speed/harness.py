"""Shared timing helpers for the speed benchmarks."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable


@dataclasses.dataclass(frozen=True)
class Timing:
    """Best-of-``repeats`` wall time of one call that processed ``units`` things."""

    label: str
    seconds: float
    units: float
    unit_name: str

    @property
    def rate(self) -> float:
        """Units per second."""
        return self.units / self.seconds


def time_best(label: str, fn: Callable[[], object], *, units: float, unit_name: str, repeats: int = 3) -> Timing:
    """Run ``fn`` ``repeats`` times; keep the fastest."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return Timing(label, best, units, unit_name)


def report(title: str, candidate: Timing, baseline: Timing, extra: list[str] | None = None) -> str:
    """Print and return a block with both rates and their ratio."""
    lines = [
        f"== {title} ==",
        f"{candidate.label:<40} {candidate.rate:12.4g} {candidate.unit_name}/s",
        f"{baseline.label:<40} {baseline.rate:12.4g} {baseline.unit_name}/s  (baseline, same run)",
        f"ratio: {candidate.rate / baseline.rate:.2f}x the baseline",
        *(extra or []),
    ]
    text = "\n".join(lines)
    print(text, flush=True)
    return text
