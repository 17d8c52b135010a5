"""The speech-recognition interface: :class:`ASRBackend` turns a waveform into its words.

``transcribe(audio, sample_rate)`` takes a mono ``(N,) float32`` waveform in [-1, 1] at
``sample_rate`` Hz and returns the recognised text (as the model writes it: digits, punctuation
and casing included; :mod:`memgym.datasets.speech.intelligibility` normalises it for scoring).
Results are cached in memory by a hash of the samples and the rate, so the same audio is decoded
once per backend instance.
"""

from __future__ import annotations

import abc
import hashlib

import numpy as np

from memgym.core.errors import MemgymError


class ASRError(MemgymError):
    """A missing ASR package or model, or audio the backend cannot read."""


def audio_digest(audio: np.ndarray, sample_rate: int) -> str:
    """SHA-256 of the float32 samples and the rate (the cache key of a transcription)."""
    samples = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
    return hashlib.sha256(samples.tobytes() + int(sample_rate).to_bytes(4, "little")).hexdigest()


class ASRBackend(abc.ABC):
    """Speech recogniser; one instance per model.

    Attributes:
        kind: the backend kind (``"faster-whisper"``).
    """

    kind: str = "asr"

    def __init__(self) -> None:
        self._cache: dict[str, str] = {}

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        """The words heard in ``audio`` (``(N,) float32`` at ``sample_rate`` Hz); cached by content."""
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ASRError(f"ASR expects mono (N,) audio, got shape {audio.shape}")
        if sample_rate <= 0:
            raise ASRError(f"ASR sample_rate must be positive, got {sample_rate}")
        key = audio_digest(audio, sample_rate)
        if key not in self._cache:
            self._cache[key] = self._decode(audio, int(sample_rate)).strip() if audio.size else ""
        return self._cache[key]

    @abc.abstractmethod
    def _decode(self, audio: np.ndarray, sample_rate: int) -> str:
        """Recognise ``(N,) float32`` audio at ``sample_rate`` Hz (uncached)."""

    def identity(self) -> str:
        """A string identifying engine + model + decoding settings (part of stored QC results)."""
        return self.kind
