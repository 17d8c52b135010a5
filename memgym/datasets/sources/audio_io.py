"""Reading wav files into 16 kHz float32 mono arrays, with clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from memgym.core.errors import MemgymError
from memgym.datasets.sources.library import SAMPLE_RATE


def read_wav(path: Path, expected_rate: int) -> np.ndarray:
    """``(n,)`` float32 mono audio of ``path`` resampled from ``expected_rate`` to 16 kHz.

    Raises:
        MemgymError: the file is missing or unreadable, or its sample rate is not ``expected_rate``.
    """
    import soundfile

    try:
        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types for unreadable files
        raise MemgymError(f"cannot read audio file {path}: {exc}") from None
    if rate != expected_rate:
        raise MemgymError(f"{path}: sample rate {rate} Hz, expected {expected_rate} Hz")
    mono = data.mean(axis=1)
    if rate != SAMPLE_RATE:
        g = np.gcd(SAMPLE_RATE, rate)
        mono = resample_poly(mono, SAMPLE_RATE // g, rate // g)
    return mono.astype(np.float32)


def wav_num_samples(path: Path) -> int:
    """Length in 16 kHz samples that :func:`read_wav` would return for ``path``."""
    import soundfile

    try:
        info = soundfile.info(str(path))
    except Exception as exc:
        raise MemgymError(f"cannot read audio file {path}: {exc}") from None
    return int(np.ceil(info.frames * SAMPLE_RATE / info.samplerate))
