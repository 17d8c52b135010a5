"""Checking a path a user handed memgym (a config key, ``--config``) before it is read.

Every reader of a user-supplied file or folder calls :func:`require_file` or
:func:`require_folder`, so the one-line error says what is wrong with the path, in the same words
everywhere: ``dataset runs/x does not exist; run 'memgym generate dialogmem' first``,
``dataset data/dm is a directory, expected a .jsonl file`` or ``dataset data/x.jsonl is a file,
expected a VoxMem dataset folder (with manifest.jsonl)``.
"""

from __future__ import annotations

from pathlib import Path

from memgym.core.errors import MemgymError


def require_file(
    path: str | Path, what: str, expected: str, *, hint: str = "", error: type[MemgymError] = MemgymError
) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a file (or a link to one).

    Args:
        what: the key or role naming the path in the message (``"dataset"``, ``"HM3D mesh"``).
        expected: what the file should be (``"a .jsonl file"``).
        hint: what to do when the path does not exist (``"run 'memgym generate dialogmem' first"``).
        error: the :class:`MemgymError` subclass raised.
    Raises:
        error: the path does not exist or is a directory.
    """
    path = Path(path)
    if not path.is_file():
        raise error(_problem(path, what, f"is a directory, expected {expected}", hint))
    return path


def require_folder(
    path: str | Path, what: str, expected: str, *, hint: str = "", error: type[MemgymError] = MemgymError
) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a directory; arguments as :func:`require_file`.

    Raises:
        error: the path does not exist or is a file.
    """
    path = Path(path)
    if not path.is_dir():
        raise error(_problem(path, what, f"is a file, expected {expected}", hint))
    return path


def _problem(path: Path, what: str, wrong_kind: str, hint: str) -> str:
    """The message for a path that is not what was expected (``wrong_kind`` when it exists)."""
    if path.exists():
        return f"{what} {path} {wrong_kind}"
    return f"{what} {path} does not exist" + (f"; {hint}" if hint else "")
