"""Reading user-supplied text files with one clear error for bytes that are not UTF-8.

Every reader of a file a user can hand memgym (configs, datasets, annotation tables, metadata,
filler corpora) goes through :func:`read_text` or :func:`text_lines`, so a file in another
encoding is reported as ``FILE: not UTF-8 text (... at byte N)`` instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memgym.core.errors import RecordError


def read_text(path: str | Path) -> str:
    """The whole file decoded as UTF-8.

    Raises:
        RecordError: the file is not UTF-8 (names the file and the byte offset).
        OSError: the file cannot be read.
    """
    path = Path(path)
    return decode_utf8(path.read_bytes(), path)


def decode_utf8(raw: bytes, path: str | Path) -> str:
    """``raw`` decoded as UTF-8; a decode failure names ``path`` and the byte offset."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number from 1, line with its newline)`` of a UTF-8 file, read lazily.

    Raises:
        RecordError: a line is not UTF-8 (names the file and the line).
    """
    path = Path(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RecordError(f"{path}:{number}: not UTF-8 text ({exc.reason})") from None


def complete_jsonl_lines(path: str | Path, *, repair: bool = True) -> list[tuple[int, str]]:
    """``(line number from 1, line)`` of the complete, non-blank lines of an append-only JSONL file.

    A last line without its newline is an append interrupted mid-write (a killed run): it is left
    out, and with ``repair`` cut off the file so the next append starts on a line of its own.

    Raises:
        RecordError: the file is not UTF-8 (names the file and the byte offset).
    """
    path = Path(path)
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        raw = raw[: raw.rfind(b"\n") + 1]
        if repair:
            with path.open("r+b") as handle:
                handle.truncate(len(raw))
    lines = decode_utf8(raw, path).splitlines()
    return [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
