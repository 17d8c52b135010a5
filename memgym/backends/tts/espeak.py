"""Embedded eSpeak NG synthesis through ctypes (the ``espeakng-loader`` wheel; no apt, no network).

Styles are realised natively with SSML: ``<prosody rate pitch range
volume>`` for the whole utterance, ``<emphasis level="strong">`` on emphasised words,
``<break time>`` for pauses and plain filler words before hesitated words. Output is resampled
from the engine's 22.05 kHz to :attr:`EspeakBackend.sample_rate` (16 kHz by default).

Synthesis runs in a small worker process that forks a child of the freshly initialised engine for
every utterance (:mod:`~memgym.backends.tts.espeak_worker`), because libespeak-ng carries state
between utterances, and re-seeds the engine's clock-seeded noise generator before each one: this
way the same request gives the same samples in any order, process and clock second.
"""

from __future__ import annotations

import atexit
import html
import json
import os
import struct
import subprocess
import sys
import threading
from math import gcd

import numpy as np
from scipy.signal import resample_poly

from memgym.backends.tts import espeak_worker
from memgym.backends.tts.base import NEUTRAL, SpeechStyle, TTSBackend, TTSError, Voice, limit_peak, words_of


class _Engine:
    """The process's eSpeak NG: a forking worker process (POSIX) or the library in-process.

    Requests are serialised by a lock. With the worker every utterance starts from the same
    pristine engine state (see :mod:`memgym.backends.tts.espeak_worker`), so synthesis is
    deterministic; the in-process fallback (no ``os.fork``) can differ by a few pitch periods.
    """

    _instance: _Engine | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        try:
            import espeakng_loader
        except ImportError as exc:
            raise TTSError(
                "eSpeak NG backend needs the 'espeakng-loader' package (pip install memgym[speech])"
            ) from exc
        library, data = espeakng_loader.get_library_path(), espeakng_loader.get_data_path()
        self._process: subprocess.Popen | None = None
        self._local: espeak_worker.Engine | None = None
        if hasattr(os, "fork"):
            self._process = subprocess.Popen(
                [sys.executable, espeak_worker.__file__, library, data], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            header = self._process.stdout.read(4)
            if len(header) < 4:
                raise TTSError(f"the eSpeak NG worker failed to start (library {library}, data {data})")
            (self.sample_rate,) = struct.unpack("<i", header)
            atexit.register(self._close)
        else:
            self._local = espeak_worker.Engine(library, data)
            self.sample_rate = self._local.sample_rate
        if self.sample_rate <= 0:
            raise TTSError(f"libespeak-ng failed to initialise (data at {data})")

    @classmethod
    def get(cls) -> _Engine:
        with cls._lock:
            if cls._instance is None or (cls._instance._process and cls._instance._process.poll() is not None):
                cls._instance = cls()
            return cls._instance

    def _close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=5)

    def speak(self, ssml: str, voice: Voice) -> np.ndarray:
        """``(N,) int16`` samples at the engine rate for an SSML document."""
        request = {"voice": voice.name, "rate": voice.rate_wpm, "pitch": voice.pitch, "range": voice.pitch_range}
        request["ssml"] = ssml
        with self._lock:
            if self._local is not None:
                status, samples = self._local.synthesize(request)
            else:
                payload = json.dumps(request).encode()
                try:
                    self._process.stdin.write(struct.pack("<i", len(payload)) + payload)
                    self._process.stdin.flush()
                    status, count = struct.unpack("<ii", _read_exactly(self._process.stdout, 8))
                    samples = _read_exactly(self._process.stdout, 2 * count)
                except (OSError, struct.error) as exc:
                    raise TTSError(f"the eSpeak NG worker stopped: {exc}") from None
        if status == espeak_worker.NO_VOICE:
            raise TTSError(f"eSpeak NG has no voice '{voice.name}' (voice '{voice.voice_id}')")
        if status != 0:
            raise TTSError(f"eSpeak NG synthesis failed with status {status} for voice '{voice.voice_id}'")
        return np.frombuffer(samples, dtype="<i2").astype(np.int16)


def _read_exactly(stream, count: int) -> bytes:
    data = stream.read(count)
    if len(data) != count:
        raise OSError(f"expected {count} bytes from the worker, got {len(data)}")
    return data


def style_to_ssml(text: str, style: SpeechStyle) -> str:
    """The SSML document eSpeak NG reads for ``text`` spoken in ``style``."""
    parts: list[str] = []
    for index, word in enumerate(words_of(text)):
        key = str(index)
        if key in style.pauses_ms:
            parts.append(f'<break time="{int(style.pauses_ms[key])}ms"/>')
        if key in style.fillers:
            parts.append(html.escape(style.fillers[key]) + ",")
            parts.append('<break time="250ms"/>')
        token = html.escape(word)
        parts.append(f'<emphasis level="strong">{token}</emphasis>' if index in style.emphasis else token)
    body = " ".join(parts)
    rate = f"{round(style.rate * 100)}%"
    pitch = f"{style.pitch_shift:+.0f}%"
    span = f"{style.pitch_range:+.0f}%"
    volume = f"{round(style.volume * 100)}%"
    return f'<speak><prosody rate="{rate}" pitch="{pitch}" range="{span}" volume="{volume}">{body}</prosody></speak>'


class EspeakBackend(TTSBackend):
    """eSpeak NG formant synthesis (embedded default).

    Args:
        sample_rate: output rate in Hz (the engine's 22050 Hz is resampled).
    """

    kind = "espeak"

    def __init__(self, sample_rate: int = 16000) -> None:
        self.sample_rate = int(sample_rate)
        self._engine = _Engine.get()

    def identity(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("espeakng-loader")
        except PackageNotFoundError:
            release = "unknown"
        return f"espeak-ng(espeakng-loader {release})@{self._engine.sample_rate}->{self.sample_rate}"

    def synthesize(self, text: str, voice: Voice, style: SpeechStyle = NEUTRAL) -> np.ndarray:
        self.check_voice(voice)
        if not text.strip():
            raise TTSError(f"cannot synthesise empty text (voice '{voice.voice_id}')")
        pcm = self._engine.speak(style_to_ssml(text, style), voice)
        audio = pcm.astype(np.float32) / 32768.0
        native = self._engine.sample_rate
        if native != self.sample_rate:
            g = gcd(native, self.sample_rate)
            audio = resample_poly(audio, self.sample_rate // g, native // g).astype(np.float32)
        return limit_peak(audio)
