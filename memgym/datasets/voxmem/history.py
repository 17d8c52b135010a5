"""Assembling nested histories of several context budgets, with timestamps.

:func:`nest_histories` places an item's core sessions (evidence + its own haystacks) and then,
budget by budget in increasing order, inserts extra sessions (more haystacks, fillers) at
uniformly random gaps until the next one would not fit. Every longer history therefore
contains every session of the shorter one in the same relative order (strict extension), the
core sessions' positions stay spread uniformly (random insertion keeps their relative positions
exchangeable with the fillers'), and evidence whose order matters (TET) keeps its order. Times
are stamped once over the longest history, so a session has the same timestamp at every budget.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import numpy as np

from memgym.core.errors import MemgymError


class BudgetFillError(MemgymError):
    """A history could not be filled close enough to its budget (the item is redrawn)."""


class BudgetTooSmallError(MemgymError):
    """An item's own sessions do not fit the smallest budget."""


HEADER_TEMPLATE = "Session {index} - {timestamp}"
"""Text shown before each session (counted in the budget)."""
TIME_FORMAT = "%Y-%m-%d %H:%M"


def core_order(ranks: Sequence[int], rng: np.random.Generator) -> list[int]:
    """A random order of the core sessions in which those with ``rank >= 0`` keep ascending rank.

    Args:
        ranks: per core session, its order rank or -1 (free).
    Returns:
        indices into ``ranks`` in history order.
    """
    perm = [int(i) for i in rng.permutation(len(ranks))]
    ordered = sorted((i for i in perm if ranks[i] >= 0), key=lambda i: ranks[i])
    slots = iter(ordered)
    return [next(slots) if ranks[i] >= 0 else i for i in perm]


def nest_histories(
    core_tokens: Sequence[int],
    order: Sequence[int],
    budgets: Sequence[int],
    next_extra: Callable[[int, int], tuple[object, int] | None],
    rng: np.random.Generator,
    *,
    min_fill: float = 0.9,
    headroom: int = 0,
) -> tuple[list[object], dict[int, list[int]]]:
    """Grow one history budget by budget.

    Args:
        core_tokens: token count of each core session.
        order: history order of the core sessions (:func:`core_order`).
        budgets: context budgets in tokens.
        next_extra: ``(remaining_tokens, budget) -> (session, tokens)`` of the next extra session
            that fits in ``remaining_tokens``, or ``None`` when nothing more fits; ``budget`` is
            the level being filled (so a caller can add haystacks at every level).
        rng: draws insertion gaps.
        min_fill: a history must reach ``min_fill * (budget - headroom)`` tokens.
        headroom: tokens left free below every budget (sessions are added up to ``budget - headroom``).
    Returns:
        ``(sessions, histories)``: every placed session (core ones as their index ``int`` into
        ``core_tokens``, extras as returned by ``next_extra``), and per budget the indices into
        ``sessions`` in history order.
    Raises:
        BudgetTooSmallError: the core alone exceeds the smallest budget.
        BudgetFillError: a budget cannot be filled to ``min_fill``.
    """
    budgets = sorted(int(b) for b in budgets)
    core_total = int(sum(core_tokens))
    if core_total + headroom > budgets[0]:
        raise BudgetTooSmallError(
            f"the item's evidence and haystack sessions need {core_total} tokens (+{headroom} kept free), more than the "
            f"smallest budget {budgets[0]}; use a larger budget"
        )
    sessions: list[object] = list(range(len(core_tokens)))
    current = list(order)
    total = core_total
    histories: dict[int, list[int]] = {}
    for budget in budgets:
        limit = budget - headroom
        total = _fill_level(sessions, current, total, limit, budget, next_extra, rng)
        if total < min_fill * limit:
            raise BudgetFillError(
                f"could only fill {total} of {limit} tokens (budget {budget}); no session fits the rest"
            )
        histories[budget] = list(current)
    return sessions, histories


def _fill_level(
    sessions: list[object],
    current: list[int],
    total: int,
    limit: int,
    budget: int,
    next_extra: Callable[[int, int], tuple[object, int] | None],
    rng: np.random.Generator,
) -> int:
    """Add ``next_extra`` sessions while they fit under ``limit`` tokens, each at a random gap of
    the history ``current`` (indices into ``sessions``, both grown in place); the new total."""
    while True:
        extra = next_extra(limit - total, budget)
        if extra is None:
            return total
        session, count = extra
        if total + count > limit:
            return total
        sessions.append(session)
        current.insert(int(rng.integers(0, len(current) + 1)), len(sessions) - 1)
        total += int(count)


def timestamps(count: int, rng: np.random.Generator, start: dt.datetime | None = None) -> list[str]:
    """``count`` increasing session start times (gaps of 3 hours to 4 days), formatted :data:`TIME_FORMAT`."""
    when = start or dt.datetime(2025, 1, 6, 9, 0) + dt.timedelta(days=int(rng.integers(0, 300)))
    out = []
    for _ in range(count):
        out.append(when.strftime(TIME_FORMAT))
        when += dt.timedelta(minutes=int(rng.integers(180, 4 * 24 * 60)))
    return out
