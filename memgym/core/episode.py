"""The two-phase episode record and a dataset of episodes.

An :class:`Episode` holds what the formation phase will show (benchmark-specific fields added
by subclasses: a traversal and dialogue, a stream of events, a history of sessions) and the
:class:`TaskItem` records the use phase asks, each with its ground truth and the annotation
columns (content type, evidence ids, cell, budget, ...) that results are aggregated by.

A :class:`Dataset` is an ordered, id-unique collection of episodes with deterministic splits
(by a hash of the episode id, so adding episodes never moves existing ones between splits) and
filtering by annotation.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memgym.core.errors import RecordError
from memgym.core.records import Record, read_jsonl, record, write_jsonl


@record("task_item")
@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskItem(Record):
    """One use-phase task: a question or instruction with its gold answer.

    Attributes:
        item_id: unique within the episode.
        task: task family, e.g. ``"qa"``, ``"navigation"``, ``"attribute_query"``.
        prompt: the text shown to the agent (may be empty for non-verbal queries).
        answer: the gold answer in the task's own JSON form (text, index, position, ...).
        annotations: columns for aggregation (content type, evidence ids, cell, budget, ...).
    """

    item_id: str
    task: str
    prompt: str = ""
    answer: Any = None
    annotations: dict[str, Any] = dataclasses.field(default_factory=dict)


@record("episode")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Episode(Record):
    """Base two-phase episode; benchmarks subclass it to add formation content.

    Attributes:
        episode_id: unique within a dataset; used to derive per-episode seeds and run keys.
        benchmark: registered benchmark name (``"amemops"``, ``"dialogmem"``, ``"voxmem"``).
        items: the use-phase task items, asked in order.
        annotations: episode-level columns (scene id, split, condition, ...).
    """

    episode_id: str
    benchmark: str
    items: tuple[TaskItem, ...] = ()
    annotations: dict[str, Any] = dataclasses.field(default_factory=dict)


class Dataset(Sequence[Episode]):
    """An ordered collection of episodes with unique ids.

    Args:
        episodes: the episodes; a duplicated ``episode_id`` raises :class:`RecordError`.
        source: where they came from, used in error messages.
    """

    def __init__(self, episodes: Iterable[Episode], *, source: str = "<memory>") -> None:
        self._episodes = list(episodes)
        self.source = source
        seen: set[str] = set()
        for episode in self._episodes:
            if not isinstance(episode, Episode):
                raise RecordError(f"{source}: expected Episode records, got {type(episode).__name__}")
            if episode.episode_id in seen:
                raise RecordError(f"{source}: duplicated episode id '{episode.episode_id}'")
            seen.add(episode.episode_id)

    def __len__(self) -> int:
        return len(self._episodes)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return Dataset(self._episodes[index], source=self.source)
        return self._episodes[index]

    def __iter__(self) -> Iterator[Episode]:
        return iter(self._episodes)

    def by_id(self, episode_id: str) -> Episode:
        """The episode with this id."""
        for episode in self._episodes:
            if episode.episode_id == episode_id:
                return episode
        raise RecordError(f"{self.source}: no episode with id '{episode_id}'")

    @classmethod
    def load(cls, path: str | Path) -> Dataset:
        """Read a JSONL file of episode records (any registered Episode subclass)."""
        return cls(read_jsonl(path), source=str(path))

    def save(self, path: str | Path) -> None:
        """Write the episodes as JSONL (atomic replace)."""
        write_jsonl(path, self._episodes)

    def filter(self, predicate: Callable[[Episode], bool] | None = None, **annotations: Any) -> Dataset:
        """Episodes matching ``predicate`` and whose ``annotations`` equal every given value."""

        def keep(episode: Episode) -> bool:
            if predicate is not None and not predicate(episode):
                return False
            return all(episode.annotations.get(k) == v for k, v in annotations.items())

        return Dataset([e for e in self._episodes if keep(e)], source=self.source)

    def split(self, fractions: dict[str, float], *, salt: str = "") -> dict[str, Dataset]:
        """Deterministic split by a hash of ``salt + episode_id``.

        Args:
            fractions: split name -> fraction; must be positive and sum to 1.
            salt: changes the assignment without changing the ids.
        Returns:
            split name -> Dataset, in the order of ``fractions``.
        """
        total = sum(fractions.values())
        if any(f <= 0 for f in fractions.values()) or abs(total - 1.0) > 1e-9:
            raise RecordError(f"split fractions must be positive and sum to 1, got {fractions}")
        bounds, acc = [], 0.0
        for name, fraction in fractions.items():
            acc += fraction
            bounds.append((acc, name))
        parts: dict[str, list[Episode]] = {name: [] for name in fractions}
        for episode in self._episodes:
            digest = hashlib.sha256((salt + episode.episode_id).encode()).digest()
            u = int.from_bytes(digest[:8], "big") / 2**64
            name = next(n for b, n in bounds if u < b) if u < bounds[-1][0] else bounds[-1][1]
            parts[name].append(episode)
        return {name: Dataset(eps, source=f"{self.source}[{name}]") for name, eps in parts.items()}
