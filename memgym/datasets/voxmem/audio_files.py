"""Reading a VoxMem dataset's turn audio: ``(N,) float32`` mono at :data:`SAMPLE_RATE` Hz."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.errors import MemgymError

SAMPLE_RATE = 16000  # Hz, every VoxMem turn file


def read_turn_audio(path: Path) -> np.ndarray:
    """The samples of the turn file ``path``; one clear error for an unreadable file or a wrong rate."""
    import soundfile

    try:
        audio, rate = soundfile.read(str(path), dtype="float32")
    except Exception as exc:
        raise MemgymError(f"cannot read VoxMem audio {path}: {exc}") from None
    if rate != SAMPLE_RATE:
        raise MemgymError(f"{path} is {rate} Hz; VoxMem audio is {SAMPLE_RATE} Hz")
    return audio


def check_audio_files(folder: Path, episodes: Iterable[Any]) -> None:
    """Raise one error when audio that ``episodes`` (VoxMem episodes of dataset ``folder``) name is
    missing: user turns and spoken questions, counting each file once.

    Raises:
        MemgymError: naming the first missing file and how many are missing.
    """
    named = dict.fromkeys(
        path
        for e in episodes
        for path in (
            e.question_audio,
            *(t.audio for s in e.sessions for t in s.turns if t.role == "user"),
        )
        if path
    )
    missing = [p for p in named if not (folder / p).is_file()]
    if missing:
        raise MemgymError(
            f"dataset {folder}: {len(missing)} of the {len(named)} audio files its manifest.jsonl names are missing, "
            f"first {folder / missing[0]}; rebuild it with 'memgym generate voxmem' (same config and out: reuses the rest)"
        )


def turn_audio(audio: Any, length: int) -> np.ndarray:
    """The ``(length,) float32`` waveform in an observation's ``audio`` (``memgym/VoxMem-v0``'s
    ``(rows, 160)`` 10 ms rows, or a flat, possibly zero-padded, array), copied."""
    return np.asarray(audio, np.float32).reshape(-1)[:length].copy()
