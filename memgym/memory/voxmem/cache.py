"""Per-turn analysis cache: transcripts and acoustic tags keyed by the turn's audio hash.

Nested VoxMem histories share their sessions (a 16K history holds every turn of its 8K one), so a
memory that analyses turns one by one computes each analysis once: a value is stored under
``(analyser identity, turn key)`` in memory and, when a file is given, appended to a JSONL file
(flushed per row; a half-written last line is dropped on reopen), so later runs reuse it too.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memgym.core.errors import RecordError
from memgym.core.textfiles import complete_jsonl_lines


class Transcriber(Protocol):
    """An ASR backend: ``transcribe((N,) float32 audio, sample_rate Hz) -> words``."""

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str: ...


def identity_of(analyser: Any) -> str:
    """``analyser.identity()`` when it has one, else its class name."""
    identity = getattr(analyser, "identity", None)
    return str(identity()) if callable(identity) else type(analyser).__name__


class TurnCache:
    """``(analyser, turn key) -> JSON value`` with optional JSONL persistence.

    Args:
        path: JSONL file to load and append to; None keeps values in memory only.
    Attributes:
        hits, misses: lookups answered from the cache / computed.

    Safe to share between threads (items played at once): stores hold a lock; a value two threads
    miss at the same moment is computed by both (the same value, stored twice).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._values: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        if self.path is not None and self.path.exists():
            for number, line in complete_jsonl_lines(self.path):
                try:
                    row = json.loads(line)
                    self._values[(row["analyser"], row["turn"])] = row["value"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise RecordError(f"{self.path}:{number}: corrupt turn-cache line") from None

    def __len__(self) -> int:
        return len(self._values)

    def get_or_compute(self, analyser: str, turn: str, compute: Callable[[], Any]) -> Any:
        """The cached value, or ``compute()`` stored under ``(analyser, turn)``."""
        key = (analyser, turn)
        if key in self._values:
            self.hits += 1
            return self._values[key]
        self.misses += 1
        value = compute()
        self._store(key, value)
        return value

    def get_or_compute_many(
        self, analyser: str, turns: list[str], compute: Callable[[list[int]], list[Any]]
    ) -> list[Any]:
        """The values of ``turns``; the missing ones come from one ``compute(indices)`` call (the
        values of ``turns[i]`` for those indices, in order), e.g. a batched recogniser."""
        missing = list(
            {t: i for i, t in reversed(list(enumerate(turns))) if (analyser, t) not in self._values}.values()
        )
        self.hits += len(turns) - len(missing)
        self.misses += len(missing)
        for index, value in zip(sorted(missing), compute(sorted(missing)) if missing else ()):
            self._store((analyser, turns[index]), value)
        return [self._values[(analyser, t)] for t in turns]

    def _store(self, key: tuple[str, str], value: Any) -> None:
        analyser, turn = key
        with self._lock:
            self._values[key] = value
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"analyser": analyser, "turn": turn, "value": value}) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
