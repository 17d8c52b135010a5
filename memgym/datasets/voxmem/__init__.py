"""VoxMem: spoken multi-session memory histories (plans, words, audio, nested histories, QC).

``load_dataset(folder)`` reads a dataset written by ``memgym generate voxmem`` (importing this
package registers the ``voxmem.*`` record kinds that its manifest uses).
"""

from __future__ import annotations

from pathlib import Path

from memgym.core.episode import Dataset
from memgym.datasets.voxmem.records import Plan, Session, Turn, VoxMemEpisode

__all__ = ["Plan", "Session", "Turn", "VoxMemEpisode", "load_dataset"]


def load_dataset(folder: str | Path) -> Dataset:
    """The episodes of a VoxMem dataset folder (``manifest.jsonl``)."""
    return Dataset.load(Path(folder) / "manifest.jsonl")
