"""One typed chat-content format for every reasoner, judge and writer.

A conversation is a sequence of :class:`Message`; each message has a role and a tuple of parts:
:class:`TextPart`, :class:`ImagePart` (``(H, W, 3) uint8`` RGB) or :class:`AudioPart`
(``(N,)`` or ``(N, C)`` float32 waveform in [-1, 1] with its sample rate in Hz). The same
messages convert to

* :func:`to_hf_messages` -- the list-of-dicts chat format that Hugging Face processors'
  ``apply_chat_template`` reads (``{"type": "image", "image": ...}``, ``{"type": "audio",
  "audio": ...}``), with the raw arrays returned alongside for the processor call;
* :func:`to_openai_messages` -- OpenAI-compatible ``chat/completions`` content parts (``text``,
  ``image_url`` with a PNG data URL, ``input_audio`` with base64 WAV).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import wave
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

Role = Literal["system", "user", "assistant"]


@dataclasses.dataclass(frozen=True)
class TextPart:
    """Plain text."""

    text: str


@dataclasses.dataclass(frozen=True, eq=False)
class ImagePart:
    """An RGB image, ``(H, W, 3) uint8``."""

    image: np.ndarray

    def __post_init__(self) -> None:
        if self.image.ndim != 3 or self.image.shape[2] != 3 or self.image.dtype != np.uint8:
            raise ValueError(f"ImagePart expects (H, W, 3) uint8, got {self.image.shape} {self.image.dtype}")


@dataclasses.dataclass(frozen=True, eq=False)
class AudioPart:
    """A waveform, ``(N,)`` mono or ``(N, C)`` float32 in [-1, 1], at ``sample_rate`` Hz."""

    waveform: np.ndarray
    sample_rate: int

    def __post_init__(self) -> None:
        if self.waveform.ndim not in (1, 2) or self.sample_rate <= 0:
            raise ValueError(
                f"AudioPart expects (N,) or (N, C) audio and a positive rate, got "
                f"{self.waveform.shape} at {self.sample_rate} Hz"
            )

    @property
    def duration_s(self) -> float:
        """Length in seconds."""
        return self.waveform.shape[0] / self.sample_rate


Part = TextPart | ImagePart | AudioPart


@dataclasses.dataclass(frozen=True)
class Message:
    """One chat turn."""

    role: Role
    content: tuple[Part, ...]

    @classmethod
    def text(cls, role: Role, text: str) -> Message:
        """A message with a single text part."""
        return cls(role, (TextPart(text),))

    def text_only(self) -> str:
        """The concatenated text parts (media parts are skipped)."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))


def to_hf_messages(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[np.ndarray], list[np.ndarray]]:
    """Convert to Hugging Face chat-template messages.

    Returns:
        (messages, images, audios): the chat-template list, plus the image arrays and the mono
        audio arrays in order of appearance, for ``processor(text=..., images=..., audio=...)``.
    """
    out, images, audios = [], [], []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                parts.append({"type": "image", "image": part.image})
                images.append(part.image)
            else:
                mono = part.waveform if part.waveform.ndim == 1 else part.waveform.mean(axis=1)
                parts.append({"type": "audio", "audio": mono})
                audios.append(mono.astype(np.float32))
        out.append({"role": message.role, "content": parts})
    return out, images, audios


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Convert to OpenAI-compatible ``chat/completions`` messages."""
    out = []
    for message in messages:
        if all(isinstance(p, TextPart) for p in message.content):
            out.append({"role": message.role, "content": message.text_only()})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                url = "data:image/png;base64," + base64.b64encode(encode_png(part.image)).decode()
                parts.append({"type": "image_url", "image_url": {"url": url}})
            else:
                data = base64.b64encode(encode_wav(part.waveform, part.sample_rate)).decode()
                parts.append({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
        out.append({"role": message.role, "content": parts})
    return out


def mono_at(waveform: np.ndarray, sample_rate: int, target_rate: int) -> np.ndarray:
    """``(M,) float32`` mono version of a ``(N,)`` or ``(N, C)`` waveform at ``target_rate`` Hz
    (channels averaged, linear interpolation when the rates differ)."""
    mono = np.asarray(waveform if waveform.ndim == 1 else waveform.mean(axis=1), dtype=np.float32)
    if sample_rate == target_rate or mono.size == 0:
        return mono
    n_out = int(round(mono.size * target_rate / sample_rate))
    positions = np.arange(n_out) * (sample_rate / target_rate)
    return np.interp(positions, np.arange(mono.size), mono).astype(np.float32)


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of an ``(H, W, 3) uint8`` image."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return buffer.getvalue()


def encode_wav(waveform: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes of a ``(N,)`` or ``(N, C)`` float waveform in [-1, 1]."""
    data = np.asarray(waveform, dtype=np.float64)
    channels = 1 if data.ndim == 1 else data.shape[1]
    pcm = (np.clip(data, -1.0, 1.0) * 32767.0).round().astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(channels)
        handle.setsampwidth(2)
        handle.setframerate(int(sample_rate))
        handle.writeframes(pcm.tobytes())
    return buffer.getvalue()


def decode_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Inverse of :func:`encode_wav`: ``(N,)`` or ``(N, C)`` float32 waveform and rate."""
    with wave.open(io.BytesIO(data), "rb") as handle:
        channels, rate = handle.getnchannels(), handle.getframerate()
        pcm = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2")
    audio = pcm.astype(np.float32) / 32767.0
    return (audio if channels == 1 else audio.reshape(-1, channels)), rate
