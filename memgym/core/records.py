"""Frozen dataclass records that round-trip through JSON and JSONL.

A record class is a ``@dataclass(frozen=True, kw_only=True)`` subclass of :class:`Record`
registered under a stable *kind* name with :func:`record`. Its fields may be JSON scalars,
other records, ``tuple[X, ...]``, ``list[X]``, ``dict[str, X]``, ``X | None``, ``Literal`` or
``Any`` (plain JSON). :meth:`Record.from_dict` rebuilds nested records from their type hints
(:mod:`memgym.core.convert`), so ``Record.from_dict(r.to_dict()) == r`` holds for every record.

On disk each JSONL line is an envelope::

    {"schema": 1, "kind": "amemops.stream", "data": {...fields...}}

``schema`` is :data:`SCHEMA_VERSION`; a file written by an incompatible version is rejected
with a :class:`~memgym.core.errors.RecordError` naming the file and line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from memgym.core.convert import convert, convert_envelope
from memgym.core.errors import RecordError
from memgym.core.loading import load_target, track_imports
from memgym.core.paths import require_file
from memgym.core.registry import RECORD_KINDS
from memgym.core.textfiles import text_lines

SCHEMA_VERSION = 1
"""Version of the record envelope and of every registered record layout."""

_KINDS: dict[str, type[Record]] = {}
track_imports(_KINDS)
R = TypeVar("R", bound="Record")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Record:
    """Base of all serialisable records. Subclasses are frozen, keyword-only dataclasses."""

    kind: ClassVar[str] = "record"

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as plain JSON-compatible data (nested records become dicts)."""
        return {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls: type[R], data: dict[str, Any]) -> R:
        """Rebuild a record from :meth:`to_dict` output (:func:`memgym.core.convert.convert` in its
        ``"json"`` mode: JSON types exactly, nested records from objects, tuples from lists).

        Raises:
            RecordError: a required field is missing, an unknown field is present, or a value
                does not have the declared type (named by its dotted path).
        """
        return convert(cls, data, mode="json", where=cls.__name__, error=RecordError)

    def to_json(self) -> str:
        """One-line JSON envelope of this record (see the module docstring)."""
        return json.dumps({"schema": SCHEMA_VERSION, "kind": self.kind, "data": self.to_dict()})


def record(kind: str):
    """Class decorator registering a record class under ``kind`` for :func:`read_jsonl`."""

    def wrap(cls: type[R]) -> type[R]:
        if not (isinstance(cls, type) and issubclass(cls, Record)):
            raise TypeError(f"@record('{kind}') must decorate a Record subclass, got {cls!r}")
        if kind in _KINDS and _KINDS[kind] is not cls:
            raise TypeError(f"record kind '{kind}' is already registered by {_KINDS[kind].__name__}")
        cls.kind = kind
        _KINDS[kind] = cls
        return cls

    return wrap


def record_class(kind: str) -> type[Record]:
    """The record class registered under ``kind`` (its module, from ``RECORD_KINDS``, is imported on a miss)."""
    if kind not in _KINDS and kind in RECORD_KINDS:
        load_target(RECORD_KINDS[kind], f"record kind '{kind}'")
    if kind not in _KINDS:
        raise RecordError(f"unknown record kind '{kind}'; known kinds: {sorted(set(_KINDS) | set(RECORD_KINDS))}")
    return _KINDS[kind]


def from_json(line: str, *, where: str = "<string>") -> Record:
    """Parse one JSON envelope into its registered record class."""
    try:
        envelope = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(envelope, dict) or set(envelope) != {"schema", "kind", "data"}:
        raise RecordError(f"{where}: expected an object with the keys schema, kind, data (and no others)")
    if envelope["schema"] != SCHEMA_VERSION:
        raise RecordError(
            f"{where}: record schema {envelope['schema']!r} is not supported "
            f"(this memgym reads schema {SCHEMA_VERSION}); regenerate the file"
        )
    try:
        cls = record_class(envelope["kind"])
    except RecordError as exc:
        raise RecordError(f"{where}: {exc}") from None
    if not isinstance(envelope["data"], dict):
        raise RecordError(f"{where}: {cls.__name__}: expected an object, got {type(envelope['data']).__name__}")
    return convert_envelope(cls, line, where=f"{where}: {cls.__name__}", error=RecordError)


def write_jsonl(path: str | Path, records: Iterable[Record]) -> int:
    """Write records to ``path`` (one envelope per line, atomically). Returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for rec in records:
            handle.write(rec.to_json() + "\n")
            count += 1
    tmp.replace(path)
    return count


def read_jsonl(path: str | Path) -> Iterator[Record]:
    """Yield the records of a JSONL file, naming file and line on any parse error."""
    path = Path(path)
    require_file(path, "record file", "a .jsonl file", error=RecordError)
    for number, line in text_lines(path):
        if line.strip():
            yield from_json(line, where=f"{path}:{number}")


def _encode(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if hasattr(value, "item") and hasattr(value, "dtype"):  # numpy scalar
        return value.item()
    return value
