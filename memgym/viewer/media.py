"""Encoding arrays as the files a browser shows: PNG/JPEG images and 16-bit PCM WAV audio."""

from __future__ import annotations

import io
import wave

import numpy as np
from PIL import Image

CONTENT_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
}


def content_type(name: str) -> str:
    """MIME type of a file name by its suffix (``application/octet-stream`` when unknown)."""
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    return CONTENT_TYPES.get(suffix, "application/octet-stream")


def png(image: np.ndarray) -> bytes:
    """PNG bytes of an ``(H, W)`` or ``(H, W, 3)`` uint8 image."""
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, np.uint8)).save(out, format="PNG")
    return out.getvalue()


def jpeg(image: np.ndarray, quality: int = 90) -> bytes:
    """JPEG bytes of an ``(H, W, 3)`` uint8 image."""
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, np.uint8)).save(out, format="JPEG", quality=quality)
    return out.getvalue()


def wav(audio: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes of ``audio``: ``(N,)`` mono or ``(C, N)`` channels, float in [-1, 1] (clipped)."""
    audio = np.atleast_2d(np.asarray(audio, np.float64))
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).round().astype("<i2").T  # (N, C) interleaved
    out = io.BytesIO()
    with wave.open(out, "wb") as handle:
        handle.setnchannels(pcm.shape[1])
        handle.setsampwidth(2)
        handle.setframerate(int(sample_rate))
        handle.writeframes(np.ascontiguousarray(pcm).tobytes())
    return out.getvalue()


def colormap(values: np.ndarray, name: str = "magma") -> np.ndarray:
    """``(H, W, 3)`` uint8 colours of ``values`` in [0, 1] (clipped) through a matplotlib colormap."""
    from matplotlib import colormaps

    rgba = colormaps[name](np.clip(np.asarray(values, np.float64), 0.0, 1.0))
    return (rgba[..., :3] * 255.0).round().astype(np.uint8)
