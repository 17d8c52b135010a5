"""An OpenAI-compatible ``POST {base_url}/audio/speech`` TTS backend (any server speaking that API).

Request body: ``{"model", "input", "voice", "response_format": "wav", "speed", "instructions"}``.
The style's rate goes to ``speed``; its natural-language ``instructions`` (and a description of
pitch/emphasis) go to ``instructions``, which instruction-following TTS models read; fillers and
pauses are written into the input text. The WAV reply is decoded and resampled to
:attr:`sample_rate`. Uses only the standard library (``urllib``).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from math import gcd

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
    words_of,
)
from memgym.core.chat import decode_wav


def style_instructions(text: str, style: SpeechStyle) -> str:
    """A delivery description for instruction-following TTS models ('' when neutral)."""
    notes = [style.instructions] if style.instructions else []
    if style.pitch_range > 30:
        notes.append("with lively, wide intonation")
    if style.emphasis:
        words = [w for i, w in enumerate(words_of(text)) if i in style.emphasis]
        notes.append("stress strongly the words: " + ", ".join(words))
    if style.fillers or style.pauses_ms:
        notes.append("hesitate audibly at the marked pauses")
    return "; ".join(notes)


class OpenAISpeechBackend(TTSBackend):
    """TTS through an OpenAI-compatible ``/audio/speech`` endpoint.

    Args:
        base_url: API root, e.g. ``http://127.0.0.1:8000/v1``.
        model: model name sent in the request.
        api_key: bearer token; defaults to the ``OPENAI_API_KEY`` environment variable (may be empty).
        sample_rate: output rate in Hz.
        timeout_s: request timeout in seconds.
    """

    kind = "openai"

    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, sample_rate: int = 16000, timeout_s: float = 120
    ) -> None:
        if not base_url:
            raise TTSError("tts.base_url is empty; expected the API root of an OpenAI-compatible server")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.sample_rate = int(sample_rate)
        self.timeout_s = timeout_s

    def identity(self) -> str:
        return f"openai:{self.base_url}:{self.model}"

    def synthesize(self, text: str, voice: Voice, style: SpeechStyle = NEUTRAL) -> np.ndarray:
        self.check_voice(voice)
        body = {
            "model": self.model,
            "input": styled_text(text, style),
            "voice": voice.name,
            "response_format": "wav",
            "speed": float(style.rate),
        }
        instructions = style_instructions(text, style)
        if instructions:
            body["instructions"] = instructions
        request = urllib.request.Request(
            f"{self.base_url}/audio/speech",
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode(errors="replace")
            raise TTSError(f"TTS endpoint {self.base_url}/audio/speech answered HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise TTSError(f"TTS endpoint {self.base_url}/audio/speech is unreachable: {exc}") from None
        try:
            audio, rate = decode_wav(payload)
        except Exception:
            raise TTSError(f"TTS endpoint {self.base_url}/audio/speech did not return 16-bit WAV audio") from None
        if audio.ndim == 2:
            audio = audio.mean(axis=1)
        if rate != self.sample_rate:
            g = gcd(rate, self.sample_rate)
            audio = resample_poly(audio, self.sample_rate // g, rate // g).astype(np.float32)
        # pitch and volume have no API field: realise them on the signal
        return limit_peak(apply_signal_style(audio, self.sample_rate, style, rate=False, pitch=True, volume=True))
