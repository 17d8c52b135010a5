"""Checking where a job will write before it starts, and writing files atomically.

A generate job calls :func:`prepare_output_folder` or :func:`prepare_output_file` first, so an
``--out`` that points at a file, a folder, or somewhere that cannot be written fails with one
line before any work is done, and a folder built by another config is refused instead of being
mixed with the new build.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from memgym.core.errors import MemgymError


def prepare_output_file(path: str | Path) -> Path:
    """Make sure ``path`` can be written as a file: create its folder, refuse a folder in the way.

    Raises:
        MemgymError: ``path`` is a folder, its parent is a file, or the parent is not writable.
    """
    path = Path(path)
    if path.is_dir():
        raise MemgymError(f"output {path} is a folder; --out must name a file")
    make_writable_folder(path.parent, f"output folder {path.parent}")
    return path


def prepare_output_folder(
    folder: str | Path, *, digest: str, marker: str, read_digest: Callable[[Path], str | None]
) -> Path:
    """Make sure ``folder`` is new, empty, or a (partial) build of the config with hash ``digest``.

    Args:
        marker: the file inside a build that identifies its config (e.g. ``config.yaml``).
        read_digest: the config hash recorded by that marker file (None when unreadable).
    Raises:
        MemgymError: ``folder`` is a file, cannot be written, holds files of no build, or holds a
            build of another config (the message says to choose another ``--out`` or delete it).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise MemgymError(f"output {folder} is a file; --out must name a folder")
    if folder.is_dir() and any(folder.iterdir()):
        recorded = (folder / marker).is_file() and read_digest(folder / marker)
        if not recorded:
            raise MemgymError(
                f"output folder {folder} is not empty and holds no readable {marker}; choose another --out"
            )
        if recorded != digest:
            raise MemgymError(
                f"output folder {folder} holds a build of another config (hash {recorded}, now {digest}); "
                "choose another --out or delete the folder to rebuild it"
            )
    make_writable_folder(folder, f"output folder {folder}")
    return folder


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file renamed over it (never half-written)."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def make_writable_folder(folder: Path, what: str) -> None:
    """Create ``folder`` (and parents) and probe that a file can be written in it.

    Raises:
        MemgymError: naming ``what`` and the reason (a file in the way, no permission, ...).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise MemgymError(f"cannot create {what}: a file is in the way") from None
    except OSError as exc:
        raise MemgymError(f"cannot create {what}: {exc.strerror or exc}") from None
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise MemgymError(f"{what} is not writable ({exc.strerror or exc})") from None
