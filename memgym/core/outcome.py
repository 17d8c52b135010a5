"""What a job left undone, said once when it finishes: failed items and items a build dropped.

Jobs do not print this themselves. While the CLI runs a job inside :func:`watch_job`, every run
folder opened for writing (:meth:`memgym.core.results.RunStore.open`) is tracked, and a build
that drops items calls :func:`note_dropped`. When the job returns, :meth:`JobOutcome.finish`

* raises :class:`~memgym.core.errors.MemgymError` (exit 2) when every item of a run folder
  failed, naming its ``results.jsonl``, the count and the first error;
* otherwise returns one warning line per kind of shortfall, which the CLI prints on stderr
  (the exit status stays 0): ``memgym: warning: 86 of 121 items failed (first: <error>); re-run
  the same command to retry them`` or ``memgym: warning: 2 of 15 items dropped (first: <reason>)``.

Outside :func:`watch_job` (library use) nothing is tracked; the rows and reports hold the errors.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from memgym.core.errors import MemgymError


class _Store(Protocol):
    """What :class:`JobOutcome` reads of a run folder (a :class:`~memgym.core.results.RunStore`)."""

    results_path: Path

    def rows(self) -> list[dict[str, Any]]: ...


@dataclasses.dataclass
class Dropped:
    """Items a build planned but did not keep.

    Attributes:
        count: items dropped.
        total: items planned.
        first: why the first one was dropped.
        hint: what to do about it (may be empty).
    """

    count: int
    total: int
    first: str
    hint: str = ""


@dataclasses.dataclass
class JobOutcome:
    """The run folders a job wrote and the items it dropped (see the module docstring)."""

    stores: dict[Path, _Store] = dataclasses.field(default_factory=dict)
    dropped: list[Dropped] = dataclasses.field(default_factory=list)

    def finish(self) -> list[str]:
        """The warning lines of this job (empty when nothing failed or was dropped).

        Raises:
            MemgymError: every item of some run folder failed.
        """
        failed, total, first = 0, 0, ""
        for store in self.stores.values():
            rows = store.rows()
            errors = [row["error"] for row in rows if row.get("error")]
            if rows and len(errors) == len(rows):
                raise MemgymError(
                    f"all {len(rows)} items of {store.results_path} failed (first error: {errors[0]}); "
                    "fix the cause and re-run the same command to retry them"
                )
            failed, total, first = failed + len(errors), total + len(rows), first or (errors[0] if errors else "")
        lines = []
        if failed:
            lines.append(
                f"memgym: warning: {failed} of {total} items failed (first: {first}); "
                "re-run the same command to retry them"
            )
        for drop in self.dropped:
            hint = f"; {drop.hint}" if drop.hint else ""
            lines.append(f"memgym: warning: {drop.count} of {drop.total} items dropped (first: {drop.first}){hint}")
        return lines


_CURRENT: list[JobOutcome] = []


@contextlib.contextmanager
def watch_job() -> Iterator[JobOutcome]:
    """Track the run folders written and items dropped until the block ends."""
    outcome = JobOutcome()
    _CURRENT.append(outcome)
    try:
        yield outcome
    finally:
        _CURRENT.remove(outcome)


def track_store(store: _Store) -> None:
    """Count ``store``'s rows when the watched job finishes (no-op outside :func:`watch_job`)."""
    for outcome in _CURRENT:
        outcome.stores[store.results_path.resolve()] = store


def note_dropped(count: int, total: int, first: str, hint: str = "") -> None:
    """Record that a build kept ``total - count`` of ``total`` items (no-op when ``count`` is 0
    or outside :func:`watch_job`); ``first`` says why the first dropped item was dropped."""
    if count:
        for outcome in _CURRENT:
            outcome.dropped.append(Dropped(count, total, first, hint))
