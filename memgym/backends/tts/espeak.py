"""Embedded eSpeak NG synthesis through ctypes (the ``espeakng-loader`` wheel; no apt, no network).

The engine is a process-wide singleton (libespeak-ng keeps global state), so calls are
serialised by a lock. Styles are realised natively with SSML: ``<prosody rate pitch range
volume>`` for the whole utterance, ``<emphasis level="strong">`` on emphasised words,
``<break time>`` for pauses and plain filler words before hesitated words. Output is resampled
from the engine's 22.05 kHz to :attr:`EspeakBackend.sample_rate` (16 kHz by default).
"""

from __future__ import annotations

import ctypes
import html
import os
import struct
import threading
from math import gcd

import numpy as np
from scipy.signal import resample_poly

from memgym.backends.tts.base import NEUTRAL, SpeechStyle, TTSBackend, TTSError, Voice, limit_peak, words_of

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_ESPEAK_CHARS_UTF8 = 1
_ESPEAK_SSML = 0x10
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE = 1, 2, 3, 4
_NO_VOICE = -1
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class _Engine:
    """The loaded libespeak-ng (one per process)."""

    _instance: _Engine | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        try:
            import espeakng_loader
        except ImportError as exc:
            raise TTSError(
                "eSpeak NG backend needs the 'espeakng-loader' package (pip install memgym[speech])"
            ) from exc
        self.lib = ctypes.CDLL(espeakng_loader.get_library_path())
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.sample_rate = int(
            self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, espeakng_loader.get_data_path().encode(), 0)
        )
        if self.sample_rate <= 0:
            raise TTSError(f"libespeak-ng failed to initialise (data at {espeakng_loader.get_data_path()})")
        self._chunks: list[np.ndarray] = []
        self._callback = _CALLBACK(self._collect)  # keep a reference: ctypes must not free it
        self.lib.espeak_SetSynthCallback(self._callback)
        self.lib.espeak_SetVoiceByName(b"en-us")  # load English phoneme tables once, before any fork

    @classmethod
    def get(cls) -> _Engine:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def _collect(self, wav, count, events) -> int:
        if count > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        return 0

    def speak(self, ssml: str, voice: Voice) -> np.ndarray:
        """``(N,) int16`` samples at the engine rate for an SSML document.

        libespeak-ng carries state from one utterance to the next (pitch flutter phase, filter
        memories), so on POSIX every utterance is synthesised in a forked child of the freshly
        initialised engine: the same request always gives the same samples. Elsewhere it runs
        in-process (identical up to a few pitch periods).
        """
        with self._lock:
            if not hasattr(os, "fork"):
                status, pcm = self._speak_here(ssml, voice)
            else:
                status, pcm = self._speak_forked(ssml, voice)
        if status == _NO_VOICE:
            raise TTSError(f"eSpeak NG has no voice '{voice.name}' (voice '{voice.voice_id}')")
        if status != 0:
            raise TTSError(f"eSpeak NG synthesis failed with status {status} for voice '{voice.voice_id}'")
        return pcm

    def _speak_forked(self, ssml: str, voice: Voice) -> tuple[int, np.ndarray]:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: synthesise from the pristine state, send status + samples, exit
            code = 0
            try:
                os.close(read_fd)
                status, pcm = self._speak_here(ssml, voice)
                payload = struct.pack("<i", status) + pcm.astype("<i2").tobytes()
                with os.fdopen(write_fd, "wb") as out:
                    out.write(payload)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as source:
            payload = source.read()
        _, exit_status = os.waitpid(pid, 0)
        if exit_status != 0 or len(payload) < 4:
            raise TTSError(f"eSpeak NG worker failed (exit status {exit_status}) for voice '{voice.voice_id}'")
        (status,) = struct.unpack("<i", payload[:4])
        return status, np.frombuffer(payload[4:], dtype="<i2").astype(np.int16)

    def _speak_here(self, ssml: str, voice: Voice) -> tuple[int, np.ndarray]:
        if self.lib.espeak_SetVoiceByName(voice.name.encode()) != 0:
            return _NO_VOICE, np.zeros(0, dtype=np.int16)
        self.lib.espeak_SetParameter(_PARAM_RATE, int(voice.rate_wpm), 0)
        self.lib.espeak_SetParameter(_PARAM_PITCH, int(voice.pitch), 0)
        self.lib.espeak_SetParameter(_PARAM_RANGE, int(voice.pitch_range), 0)
        self.lib.espeak_SetParameter(_PARAM_VOLUME, 100, 0)
        self._chunks = []
        data = ssml.encode("utf-8") + b"\0"
        status = self.lib.espeak_Synth(
            ctypes.c_char_p(data), ctypes.c_size_t(len(data)), 0, 1, 0, _ESPEAK_SSML | _ESPEAK_CHARS_UTF8, None, None
        )
        chunks, self._chunks = self._chunks, []
        return int(status), (np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16))


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
        return f"espeak-ng@{self._engine.sample_rate}->{self.sample_rate}"

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
