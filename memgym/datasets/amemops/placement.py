"""Frame occupancy of a stream being planned by :class:`~memgym.datasets.amemops.generator.StreamGenerator`:
which frames are taken and, under ``StreamConfig.max_intervening``, how many other sources' events lie
between each placed query's source's last event and the query."""

from __future__ import annotations


class Occupancy:
    """Which frames are taken, and (with ``max_intervening >= 0``) how many other sources' events
    lie between each placed query's source's last event and the query."""

    def __init__(self, frames: int, max_intervening: int = -1) -> None:
        self.taken = bytearray(frames)  # 1 = taken (bytes: placement tries run ~100 times a stream)
        self.max_intervening = max_intervening
        self.writes: list[tuple[int, str]] = []  # (onset frame, identity) of every placed non-query event
        self.gaps: list[list] = []  # [identity, last event onset, query onset, other sources' events between]

    def free(self, onset: int, length: int) -> bool:
        return onset >= 0 and onset + length <= len(self.taken) and 1 not in self.taken[onset : onset + length]

    def take(self, onset: int, length: int) -> None:
        self.taken[onset : onset + length] = b"\x01" * length

    def admits(self, onsets: list[int], sources: list[str | None]) -> bool:
        """Whether placing events at ``onsets`` (``sources``: their identities, None for a query, which
        asks about the chain's first identity) keeps every query within ``max_intervening``."""
        if self.max_intervening < 0:
            return True
        writes, gaps = self._split(onsets, sources)
        for identity, after, before, count in self.gaps:
            if count + _between(writes, identity, after, before) > self.max_intervening:
                return False
        everything = self.writes + writes
        return all(_between(everything, i, a, b) <= self.max_intervening for i, a, b in gaps)

    def record(self, onsets: list[int], sources: list[str | None]) -> None:
        """Count events placed at ``onsets`` into the gaps they fall in (after :meth:`admits`)."""
        if self.max_intervening < 0:
            return
        writes, gaps = self._split(onsets, sources)
        for gap in self.gaps:
            gap[3] += _between(writes, *gap[:3])
        self.writes += writes
        self.gaps += [[i, a, b, _between(self.writes, i, a, b)] for i, a, b in gaps]

    @staticmethod
    def _split(
        onsets: list[int], sources: list[str | None]
    ) -> tuple[list[tuple[int, str]], list[tuple[str, int, int]]]:
        """A chain's non-query events ``(onset, identity)`` and its queries' gaps ``(identity, onset of the
        identity's last event, query onset)``."""
        writes = [(o, s) for o, s in zip(onsets, sources) if s is not None]
        asked = sources[0]
        last = max((o for o, s in writes if s == asked), default=None)
        if asked is None or last is None:  # an absent-source query or a distractor: no gap
            return writes, []
        return writes, [(asked, last, o) for o, s in zip(onsets, sources) if s is None]


def _between(writes: list[tuple[int, str]], identity: str, after: int, before: int) -> int:
    """Events in ``writes`` of sources other than ``identity`` with onsets strictly between ``after``
    and ``before``."""
    return sum(after < onset < before and source != identity for onset, source in writes)
