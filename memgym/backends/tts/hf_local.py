"""A Hugging Face text-to-speech model loaded from a local folder (``transformers`` pipeline).

Any checkpoint the ``text-to-speech`` pipeline reads works (VITS/MMS-TTS, SpeechT5 with a
vocoder, Bark, ...). Multi-speaker models take the voice's ``name`` as a speaker index
(``forward_params={"speaker_id": int}``) when it is an integer. Rate, pitch and volume are
realised on the signal (:func:`~memgym.backends.tts.base.apply_signal_style`); fillers and pauses
in the text. Sampling is seeded per call so the same request gives the same audio.
"""

from __future__ import annotations

import hashlib
from math import gcd
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from memgym.backends.tts.base import (
    NEUTRAL,
    SpeechStyle,
    TTSBackend,
    TTSError,
    Voice,
    apply_signal_style,
    limit_peak,
    styled_text,
)


class HFLocalTTSBackend(TTSBackend):
    """TTS with a ``transformers`` model from a local path.

    Args:
        model_path: folder with ``config.json`` and weights (no download is attempted).
        sample_rate: output rate in Hz.
        device: torch device string.
    """

    kind = "hf"

    def __init__(self, model_path: str | Path, *, sample_rate: int = 16000, device: str = "cpu") -> None:
        path = Path(model_path)
        if not (path / "config.json").is_file():
            raise TTSError(f"tts.model_path {path} is not a Hugging Face model folder (no config.json)")
        from transformers import pipeline

        try:
            self._pipe = pipeline("text-to-speech", model=str(path), device=device)
        except Exception as exc:
            raise TTSError(f"could not load a text-to-speech model from {path}: {exc}") from None
        self.model_path = path
        self.sample_rate = int(sample_rate)

    def identity(self) -> str:
        return f"hf:{self.model_path.resolve()}"

    def synthesize(self, text: str, voice: Voice, style: SpeechStyle = NEUTRAL) -> np.ndarray:
        import torch

        self.check_voice(voice)
        prompt = styled_text(text, style, pause_mark=",")
        seed = int.from_bytes(hashlib.sha256(f"{voice.voice_id}|{prompt}".encode()).digest()[:4], "big")
        torch.manual_seed(seed)
        forward = {"speaker_id": int(voice.name)} if voice.name.isdigit() else {}
        output = self._pipe(prompt, forward_params=forward) if forward else self._pipe(prompt)
        audio = np.asarray(output["audio"], dtype=np.float32).reshape(-1)
        rate = int(output["sampling_rate"])
        if rate != self.sample_rate:
            g = gcd(rate, self.sample_rate)
            audio = resample_poly(audio, self.sample_rate // g, rate // g).astype(np.float32)
        return limit_peak(apply_signal_style(audio, self.sample_rate, style, rate=True, pitch=True, volume=True))
