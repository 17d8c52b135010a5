"""Verdict rules of ``memgym findings``: one measured effect against one paper claim.

Every claim is about an *effect* in percentage points (a paired difference of two accuracies, or a
difference of two such differences) with a 95% bootstrap interval ``[low, high]`` over ``n`` paired
units (items, or streams x seeds). A claim says the effect is either

- ``positive`` ("A above B"): the paper's sign is > 0, or
- ``flat`` ("A does not move B"): the paper's effect lies within ``+-margin`` of 0.

The rules (docs/findings.md gives the same table):

=============  ============================================  ==========================================
claim          verdict                                       when
=============  ============================================  ==========================================
positive       reproduced                                    ``low > 0``
positive       reversed                                      ``high < 0``
positive       not reproduced                                ``high < margin`` (at most a small effect)
positive       undecided                                     otherwise (the interval spans 0 and margin)
flat           reproduced                                    ``-margin <= low`` and ``high <= margin``
flat           not reproduced                                ``low > 0`` or ``high < 0`` (a clear effect)
flat           undecided                                     otherwise (too wide to tell)
any            undecided                                     ``n < min_items``, whatever the interval
any            undecided                                     fewer training ``seeds`` than ``min_seeds``
=============  ============================================  ==========================================

A comparison of trained models also counts the training seeds behind it: one seed's result can hang
on the CPU's arithmetic (docs/amemops_models.md, "The cpu-tiny learning check"), so such claims ask for
several seeds before they decide.

An
undecided verdict carries the number of units that would likely decide it: the interval's half-width
shrinks as ``1/sqrt(n)``, so ``n * (half_width / needed_half_width)**2`` where the needed half-width is
the distance from the estimate to the nearest boundary that would settle the verdict.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

ClaimKind = Literal["positive", "flat"]
Verdict = Literal["reproduced", "not reproduced", "reversed", "undecided", "not measured", "by construction"]
VERDICTS: tuple[Verdict, ...] = (
    "reproduced",
    "not reproduced",
    "reversed",
    "undecided",
    "not measured",
    "by construction",
)
"""``by construction``: a decided verdict whose outcome the claim's ``by_construction`` rule says
follows from the reasoner's rules rather than the memories (:mod:`.report`)."""

DEFAULT_MARGIN = 5.0
"""Percentage points within which an effect counts as "flat" (no movement)."""


@dataclasses.dataclass(frozen=True)
class Effect:
    """A measured effect in percentage points.

    Attributes:
        estimate: point estimate (pp).
        low, high: 95% bootstrap interval (pp), ``low <= estimate <= high`` up to resampling noise.
        n: paired units behind it (items, or stream x seed pairs).
        seeds: training seeds behind it (the fewest of the models compared); None when no trained
            model is compared.
    """

    estimate: float
    low: float
    high: float
    n: int
    seeds: int | None = None

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) for v in (self.estimate, self.low, self.high)):
            raise ValueError(f"effect has non-finite values: {self}")
        if self.low > self.high:
            raise ValueError(f"effect interval is reversed: [{self.low}, {self.high}]")
        if self.n < 0:
            raise ValueError(f"effect has a negative count: {self.n}")

    def format(self) -> str:
        """``"+12.3 [+4.0, +20.1] (n=40)"``."""
        return f"{self.estimate:+.1f} [{self.low:+.1f}, {self.high:+.1f}] (n={self.n})"


@dataclasses.dataclass(frozen=True)
class Decision:
    """A verdict and, when undecided, the count that would likely decide it."""

    verdict: Verdict
    needed: int | None = None
    reason: str = ""


def decide(
    effect: Effect, kind: ClaimKind, *, margin: float = DEFAULT_MARGIN, min_items: int = 30, min_seeds: int = 1
) -> Decision:
    """Apply the rules of this module's table to one effect."""
    if margin <= 0:
        raise ValueError(f"margin must be > 0 pp, got {margin}")
    low, high = effect.low, effect.high
    if kind == "positive":
        if high < 0:
            verdict: Verdict = "reversed"
        elif low > 0:
            verdict = "reproduced"
        elif high < margin:
            verdict = "not reproduced"
        else:
            verdict = "undecided"
    elif kind == "flat":
        if low > 0 or high < 0:
            verdict = "not reproduced"
        elif -margin <= low and high <= margin:
            verdict = "reproduced"
        else:
            verdict = "undecided"
    else:
        raise ValueError(f"unknown claim kind {kind!r}; expected 'positive' or 'flat'")
    if effect.n < min_items:
        return Decision(
            "undecided",
            max(min_items, _needed(effect, kind, margin)),
            f"{effect.n} units, below the minimum {min_items}",
        )
    if effect.seeds is not None and effect.seeds < min_seeds:
        return Decision("undecided", None, f"{effect.seeds} training seed(s), below the minimum {min_seeds}")
    if verdict == "undecided":
        return Decision(verdict, _needed(effect, kind, margin), "the interval spans both verdicts")
    return Decision(verdict, reason=_why(effect, kind, verdict, margin))


def _why(effect: Effect, kind: ClaimKind, verdict: Verdict, margin: float) -> str:
    """The rule of the module's table that ``effect`` met."""
    interval = f"the 95% interval [{effect.low:+.1f}, {effect.high:+.1f}]"
    if kind == "positive":
        return {
            "reproduced": f"{interval} lies above 0",
            "reversed": f"{interval} lies below 0",
            "not reproduced": f"{interval} stays below the {margin:g}-point margin",
        }[verdict]
    if verdict == "reproduced":
        return f"{interval} lies within +-{margin:g} points"
    return f"{interval} excludes 0: a clear effect"


def _needed(effect: Effect, kind: ClaimKind, margin: float) -> int:
    """Units at which an interval of the same centre would likely no longer span two verdicts.

    With half-width ``h`` around estimate ``e``, a positive claim is decided once ``h < e`` (above 0)
    or ``h < margin - e`` (below the margin); a flat claim once ``h < margin - |e|`` (inside the
    margin) or ``h < |e|`` (off zero). ``room`` is the larger of the two: the half-width to reach.
    """
    half = (effect.high - effect.low) / 2.0
    e = effect.estimate
    room = max(e, margin - e) if kind == "positive" else max(margin - abs(e), abs(e))
    if half <= 0:
        return effect.n
    return max(effect.n + 1, math.ceil(effect.n * (half / room) ** 2))
