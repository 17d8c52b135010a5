"""Text-to-speech backends behind one interface (:class:`TTSBackend`), chosen by :class:`TTSConfig`.

============  ======================================================  ==========================
kind          engine                                                  config keys
============  ======================================================  ==========================
``espeak``    embedded eSpeak NG (default; offline)                   ``sample_rate``
``openai``    OpenAI-compatible ``/audio/speech`` endpoint            ``base_url``, ``model``
``hf``        Hugging Face TTS model from a local folder              ``model_path``, ``device``
============  ======================================================  ==========================
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.backends.tts.base import NEUTRAL, SpeechStyle, TTSBackend, TTSError, Voice

__all__ = ["NEUTRAL", "SpeechStyle", "TTSBackend", "TTSConfig", "TTSError", "Voice", "make_tts_backend"]


@dataclasses.dataclass(frozen=True)
class TTSConfig:
    """Which TTS backend renders speech."""

    kind: Literal["espeak", "openai", "hf"] = dataclasses.field(
        default="espeak", metadata={"help": "espeak (embedded), openai (/audio/speech endpoint) or hf (local model)"}
    )
    base_url: str = dataclasses.field(default="", metadata={"help": "openai: API root, e.g. http://127.0.0.1:8000/v1"})
    model: str = dataclasses.field(default="tts-1", metadata={"help": "openai: model name sent with each request"})
    voices: tuple[str, ...] = dataclasses.field(
        default=(), metadata={"help": "openai/hf: voice names (or speaker ids) making up the user voice bank"}
    )
    model_path: str = dataclasses.field(default="", metadata={"help": "hf: local folder of a text-to-speech model"})
    device: str = dataclasses.field(default="cpu", metadata={"help": "hf: torch device"})
    sample_rate: int = dataclasses.field(default=16000, metadata={"help": "output sample rate in Hz"})


def make_tts_backend(config: TTSConfig) -> TTSBackend:
    """Instantiate the backend ``config.kind`` names."""
    if config.kind == "espeak":
        from memgym.backends.tts.espeak import EspeakBackend

        return EspeakBackend(sample_rate=config.sample_rate)
    if config.kind == "openai":
        from memgym.backends.tts.openai_speech import OpenAISpeechBackend

        return OpenAISpeechBackend(config.base_url, config.model, sample_rate=config.sample_rate)
    if config.kind == "hf":
        from memgym.backends.tts.hf_local import HFLocalTTSBackend

        return HFLocalTTSBackend(config.model_path, sample_rate=config.sample_rate, device=config.device)
    raise TTSError(f"tts.kind '{config.kind}' is not one of espeak, openai, hf")
