"""What a claim is: one paper finding that memgym's run folders can measure (:class:`Claim`).

A claim names the effect it is about (which systems, which items, which statistic), the paper's
figure, the verdict rule (:mod:`.verdicts`: ``positive`` or ``flat`` within ``margin`` pp) and the
minimum number of paired units below which it stays undecided. ``measure`` turns the tidy rows of
every run given (:class:`Tables`) into a :class:`Measured` effect, or into the text of the run that
would measure it.

The claims themselves: :mod:`.dialogmem_claims`, :mod:`.voxmem_claims`, :mod:`.amemops_claims`,
gathered in :data:`memgym.pipelines.findings.claims.CLAIMS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from memgym.core.benchmark import benchmark_info
from memgym.core.loading import load_target
from memgym.core.registry import BENCHMARKS
from memgym.pipelines.findings import measures as m
from memgym.pipelines.findings.runs import RunFolder
from memgym.pipelines.findings.verdicts import ClaimKind, Effect


@dataclasses.dataclass(frozen=True)
class Tables:
    """Tidy rows of every run read (:mod:`.runs`), per benchmark: ``tables.dialogmem`` is
    ``tables.rows["dialogmem"]``."""

    rows: dict[str, list[dict[str, Any]]]

    def __getattr__(self, name: str) -> list[dict[str, Any]]:
        rows = self.__dict__.get("rows", {})
        if name not in rows:
            raise AttributeError(f"no tidy rows of benchmark '{name}' (its findings_rows); have {sorted(rows)}")
        return rows[name]

    @classmethod
    def of(cls, runs: Sequence[RunFolder]) -> Tables:
        """The rows of every registered benchmark that declares ``findings_rows``
        (:class:`~memgym.core.benchmark.BenchmarkInfo`), from ``runs``."""
        rows = {}
        for name in BENCHMARKS.names():
            target = benchmark_info(name).findings_rows
            if target:
                rows[name] = load_target(target, f"findings rows of benchmark '{name}'")(runs)
        return cls(rows)


@dataclasses.dataclass(frozen=True)
class Measured:
    """A measured effect, what it compared (``ours``) and the run folders it came from."""

    effect: Effect
    ours: str
    runs: tuple[str, ...]


Outcome = Measured | str
"""A measurement, or why there is none and which run would give it."""


@dataclasses.dataclass(frozen=True)
class Claim:
    """One paper finding (module docstring)."""

    id: str
    benchmark: str
    sentence: str
    paper: str
    kind: ClaimKind
    measure: Callable[[Tables], Outcome]
    margin: float = 5.0
    min_items: int = 30
    min_seeds: int = 1
    """Training seeds an effect of trained models needs before it decides (:func:`~memgym.pipelines.findings.verdicts.decide`)."""
    paper_effect: float | None = None
    """The paper's effect in pp where it states one (drawn beside ours in the figure)."""
    by_construction: Callable[[Tables], str] | None = None
    """Why, on the runs given, the verdict follows from the reasoner's rules rather than from the
    memories compared ("" when it does not there); such a decided verdict reads ``by construction``."""


def runs_of(rows: Sequence[dict[str, Any]], *systems: str) -> tuple[str, ...]:
    """The run folders of ``rows`` that hold any of ``systems`` (sorted)."""
    return tuple(sorted({r["run"] for r in rows if r.get("system", r.get("model")) in systems}))


def mean_text(rows: Sequence[dict[str, Any]], system: str, where: m.Select) -> str:
    """``system``'s mean item score over the rows passing ``where``, as text (``-`` without items)."""
    scores = list(m.item_scores(rows, system, where).values())
    return f"{np.mean(scores):.1f}" if scores else "-"
