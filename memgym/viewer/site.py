"""What every benchmark's viewer provides, and helpers they share.

A :class:`Site` answers three questions the page asks: the index (benchmark, source, one entry
per episode), one episode's JSON, and media files (images, audio) named ``<key>/<file>`` where
``<key>`` is the episode's position in the index. The server produces them on request; the
exporter calls :meth:`Site.media_names` and writes them all.
"""

from __future__ import annotations

import abc
import math
from pathlib import Path
from typing import Any

from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.core.results import RunStore
from memgym.viewer.detect import Target


class Site(abc.ABC):
    """The data behind one viewer page (module docstring)."""

    def __init__(self, target: Target) -> None:
        self.target = target

    @abc.abstractmethod
    def episodes(self) -> list[dict[str, Any]]:
        """One ``{"id", "label"}`` per episode (``label``: a short line for the episode list)."""

    @abc.abstractmethod
    def episode(self, key: int) -> dict[str, Any]:
        """The JSON the page draws episode ``key`` from (media referenced as ``media/<key>/<file>``)."""

    @abc.abstractmethod
    def media(self, name: str) -> bytes:
        """The bytes of media file ``name`` (``<key>/<file>``).

        Raises:
            KeyError: no such media file.
        """

    @abc.abstractmethod
    def media_names(self, key: int) -> list[str]:
        """Every media file episode ``key``'s page can ask for."""

    def index(self) -> dict[str, Any]:
        """``{"benchmark", "kind", "source", "episodes"}`` for the page's header and episode list."""
        return {
            "benchmark": self.target.benchmark,
            "kind": self.target.kind,
            "source": str(self.target.path),
            "episodes": self.episodes(),
        }

    def child(self, index: int) -> Site:
        """A page nested below ``runs/<index>/`` of this one (only the findings page has any).

        Raises:
            KeyError: no such page.
        """
        raise KeyError(f"no nested page {index}")

    def children(self) -> list[int]:
        """Indices of the nested pages written with an export."""
        return []

    def check_key(self, key: int) -> int:
        """``key`` when it names an episode, else KeyError."""
        if not 0 <= key < len(self.episodes()):
            raise KeyError(f"no episode {key}")
        return key


def split_media_name(name: str) -> tuple[int, str]:
    """``"<key>/<file>"`` -> ``(key, file)``; KeyError for any other form."""
    head, _, tail = name.partition("/")
    if not head.isdigit() or not tail:
        raise KeyError(name)
    return int(head), tail


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (nested in lists and dicts) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def run_rows(folder: Path) -> list[dict[str, Any]]:
    """The result rows of a run folder's ``results.jsonl`` (read only, one per key)."""
    return RunStore(folder, "").rows()


def run_config(folder: Path, schema: type) -> Any:
    """The run's ``config.yaml`` loaded as ``schema``."""
    path = folder / "config.yaml"
    if not path.is_file():
        raise MemgymError(f"run folder {folder} has no config.yaml")
    return load_config(schema, path=path)


def resolve_dataset(recorded: str, run: Path, override: Path | None) -> Path:
    """The dataset a run was evaluated on: ``override`` (``--dataset``) when given, else the path
    recorded in its config as it is (absolute, or relative to the working folder), else relative to
    a folder above the run (runs are usually written below the folder the eval ran in).

    Raises:
        MemgymError: the dataset cannot be found (says to pass ``--dataset``).
    """
    if override is not None:
        if not Path(override).exists():
            raise MemgymError(f"--dataset {override} does not exist")
        return Path(override)
    candidates = [Path(recorded)]
    if not Path(recorded).is_absolute():
        candidates += [parent / recorded for parent in run.resolve().parents]
    for candidate in candidates:
        if recorded and candidate.exists():
            return candidate
    raise MemgymError(
        f"run {run} was evaluated on dataset {recorded!r}, which is not found here or above the run "
        "folder; pass --dataset PATH"
    )
