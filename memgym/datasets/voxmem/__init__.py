"""VoxMem: spoken multi-session memory histories (plans, words, audio, nested histories, QC).

``load_dataset(folder)`` reads a dataset written by ``memgym generate voxmem`` (importing this
package registers the ``voxmem.*`` record kinds that its manifest uses).
"""

from __future__ import annotations

from pathlib import Path

from memgym.core.episode import Dataset
from memgym.datasets.voxmem.records import Plan, Session, Turn, VoxMemEpisode

__all__ = ["Plan", "Session", "Turn", "VoxMemEpisode", "load_dataset"]


def load_dataset(folder: str | Path, *, check_audio: bool = True) -> Dataset:
    """The episodes of a VoxMem dataset folder (``manifest.jsonl``).

    Args:
        check_audio: raise one error when audio the manifest names is missing
            (:func:`~memgym.datasets.voxmem.audio_files.check_audio_files`).
    """
    from memgym.datasets.voxmem.audio_files import check_audio_files

    dataset = Dataset.load(Path(folder) / "manifest.jsonl")
    if check_audio:
        check_audio_files(Path(folder), dataset)
    return dataset
