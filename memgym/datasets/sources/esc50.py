"""Loader for a local ESC-50 folder (``meta/esc50.csv`` + ``audio/*.wav`` at 44.1 kHz).

Identities are the 50 ``category`` names; folds 1-4 are ``train``, fold 5 ``eval``; each
identity's family is its ESC-50 major category (``target // 10``: animals, natural, human,
interior, exterior). Audio is resampled 44.1 kHz -> 16 kHz on load.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.paths import require_folder
from memgym.core.textfiles import read_text
from memgym.datasets.sources.audio_io import read_wav, wav_num_samples
from memgym.datasets.sources.library import RecordingInfo, SourceLibrary

ESC50_RATE = 44_100
REQUIRED_COLUMNS = ("filename", "fold", "target", "category")
MAJOR_CATEGORIES = ("animals", "natural", "human", "interior", "exterior")


class ESC50Library(SourceLibrary):
    """ESC-50 from a local folder.

    Args:
        root: the ESC-50 folder (holding ``meta/esc50.csv`` and ``audio/``).
        eval_fold: fold used for ``eval`` (the others are ``train``).
        cache_size: clips kept in memory.
    Raises:
        MemgymError: missing folder/csv, a missing or renamed column, a bad fold, a listed
            audio file that does not exist.
    """

    name = "esc50"

    def __init__(self, root: str | Path, *, eval_fold: int = 5, cache_size: int = 1024) -> None:
        self.root = require_folder(root, "ESC-50 folder", "the ESC-50 folder (with meta/esc50.csv)")
        csv_path = self.root / "meta" / "esc50.csv"
        if not csv_path.is_file():
            raise MemgymError(f"ESC-50 folder {self.root} has no meta/esc50.csv")
        reader = csv.DictReader(io.StringIO(read_text(csv_path), newline=""))
        columns = reader.fieldnames or []
        missing = [c for c in REQUIRED_COLUMNS if c not in columns]
        if missing:
            raise MemgymError(
                f"{csv_path}: missing column(s) {missing}; expected {list(REQUIRED_COLUMNS)}, found {columns}"
            )
        rows = list(reader)
        infos = []
        for line, row in enumerate(rows, start=2):
            try:
                fold, target = int(row["fold"]), int(row["target"])
            except ValueError:
                raise MemgymError(f"{csv_path}:{line}: fold and target must be integers, got {row}") from None
            if not 1 <= fold <= 5 or not 0 <= target < 50:
                raise MemgymError(
                    f"{csv_path}:{line}: fold must be 1-5 and target 0-49, got fold={fold} target={target}"
                )
            wav = self.root / "audio" / row["filename"]
            if not wav.is_file():
                raise MemgymError(f"{csv_path}:{line}: audio file {wav} does not exist")
            infos.append(
                RecordingInfo(
                    recording_id=Path(row["filename"]).stem,
                    identity=row["category"],
                    split="eval" if fold == eval_fold else "train",
                    family=MAJOR_CATEGORIES[target // 10],
                    source_type="environmental",
                    fold=fold,
                )
            )
        self._files = {info.recording_id: self.root / "audio" / row["filename"] for info, row in zip(infos, rows)}
        super().__init__(infos, cache_size=cache_size)

    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        return read_wav(self._files[info.recording_id], ESC50_RATE)

    def num_samples(self, recording_id: str) -> int:
        return wav_num_samples(self._files[self.info(recording_id).recording_id])

    def fingerprint(self) -> str:
        return f"{self.name}:{self.root.resolve()}:{len(self.all_infos())}"
