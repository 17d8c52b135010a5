"""Reading a VoxMem dataset's turn audio: ``(N,) float32`` mono at :data:`SAMPLE_RATE` Hz."""

from __future__ import annotations

from pathlib import Path

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
