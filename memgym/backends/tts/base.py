"""The text-to-speech interface: :class:`Voice`, :class:`SpeechStyle` and :class:`TTSBackend`.

A backend turns ``(text, voice, style)`` into a mono ``(N,) float32`` waveform in [-1, 1] at
:attr:`TTSBackend.sample_rate` Hz. A :class:`Voice` names one speaker of one backend (an eSpeak
NG voice + variant + pitch + rate, an endpoint's voice name, a reference recording); a
:class:`SpeechStyle` holds the delivery controls a paralinguistic cue is made of (rate, pitch,
emphasised words, pauses, fillers). Every backend realises every control: natively where the
engine has it (SSML for eSpeak, ``speed``/``instructions`` for an endpoint), otherwise by text
markup (fillers, pause punctuation) and signal processing (time stretch, pitch shift, gain) in
:func:`apply_signal_style`.
"""

from __future__ import annotations

import abc
import dataclasses

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.records import Record, record


@record("tts.voice")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Voice(Record):
    """One speaker of one TTS backend.

    Attributes:
        voice_id: stable id used in datasets (``"espeak-07"``, ``"vctk-p225"``).
        backend: the backend kind that can speak it (``"espeak"``, ``"openai"``, ``"hf"``).
        name: the engine's voice name: eSpeak ``"language+variant"`` (``"en-gb-scotland+m3"``),
            an endpoint voice (``"alloy"``), or a speaker index/name for an HF model.
        pitch: base pitch, eSpeak scale 0..100 (50 = engine default).
        pitch_range: pitch range (intonation), eSpeak scale 0..100.
        rate_wpm: speaking rate in words per minute.
        speaker_ref: path of a reference recording (a VCTK utterance) for voice-prompted models.
        description: human-readable summary (accent, register).
    """

    voice_id: str
    backend: str
    name: str
    pitch: int = 50
    pitch_range: int = 50
    rate_wpm: int = 175
    speaker_ref: str = ""
    description: str = ""


@record("tts.style")
@dataclasses.dataclass(frozen=True, kw_only=True)
class SpeechStyle(Record):
    """Delivery controls for one utterance (all neutral by default).

    Attributes:
        rate: speaking-rate multiplier (1.0 = the voice's own rate; 1.6 = fast).
        pitch_shift: base-pitch change in percent (+35 = higher).
        pitch_range: pitch-range change in percent (+80 = livelier intonation).
        volume: amplitude multiplier of the speech.
        emphasis: indices of words (whitespace tokens) spoken with strong emphasis.
        pauses_ms: word index -> pause (milliseconds) inserted before that word.
        fillers: word index -> filler vocalisation (``"um"``) spoken before that word.
        instructions: natural-language delivery description for instruction-following TTS.
    """

    rate: float = 1.0
    pitch_shift: float = 0.0
    pitch_range: float = 0.0
    volume: float = 1.0
    emphasis: tuple[int, ...] = ()
    pauses_ms: dict[str, int] = dataclasses.field(default_factory=dict)
    fillers: dict[str, str] = dataclasses.field(default_factory=dict)
    instructions: str = ""


NEUTRAL = SpeechStyle()
"""The neutral style (the cue-removed rendition uses it)."""


class TTSError(MemgymError):
    """A voice the backend cannot speak, an unreachable endpoint, a missing model path."""


class TTSBackend(abc.ABC):
    """Synthesises speech; one instance per engine/model.

    Attributes:
        kind: the backend kind matched against :attr:`Voice.backend`.
        sample_rate: rate of the returned waveforms in Hz.
    """

    kind: str = "tts"
    sample_rate: int = 16000

    @abc.abstractmethod
    def synthesize(self, text: str, voice: Voice, style: SpeechStyle = NEUTRAL) -> np.ndarray:
        """Speak ``text`` with ``voice`` and ``style``; ``(N,) float32`` in [-1, 1] at ``sample_rate``."""

    def identity(self) -> str:
        """A string identifying engine + model, part of audio cache keys."""
        return self.kind

    def check_voice(self, voice: Voice) -> None:
        """Raise :class:`TTSError` when ``voice`` belongs to another backend."""
        if voice.backend != self.kind:
            raise TTSError(f"voice '{voice.voice_id}' is for backend '{voice.backend}', not '{self.kind}'")


def words_of(text: str) -> list[str]:
    """Whitespace tokens of ``text`` (the word indices :class:`SpeechStyle` refers to)."""
    return text.split()


def styled_text(text: str, style: SpeechStyle, *, pause_mark: str = "...") -> str:
    """Plain-text realisation of fillers and pauses for engines without markup.

    Fillers are inserted before their word followed by a comma; a pause becomes ``pause_mark``.
    """
    out: list[str] = []
    for index, word in enumerate(words_of(text)):
        key = str(index)
        if key in style.pauses_ms and out:
            out[-1] = out[-1] + pause_mark
        if key in style.fillers:
            out.append(style.fillers[key] + ",")
        out.append(word)
    return " ".join(out)


def apply_signal_style(
    waveform: np.ndarray, sample_rate: int, style: SpeechStyle, *, rate: bool, pitch: bool, volume: bool
) -> np.ndarray:
    """Realise rate, pitch and volume by signal processing where the engine could not.

    Args:
        waveform: ``(N,) float32`` speech.
        sample_rate: its rate in Hz.
        style: the requested style.
        rate, pitch, volume: which controls still need to be applied.
    Returns:
        ``(M,) float32`` waveform, peak-limited to 0.99.
    """
    import librosa

    out = np.asarray(waveform, dtype=np.float32)
    if rate and abs(style.rate - 1.0) > 1e-6 and out.size > 2048:
        out = librosa.effects.time_stretch(out, rate=float(style.rate))
    if pitch and abs(style.pitch_shift) > 1e-6 and out.size > 2048:
        semitones = 12.0 * np.log2(1.0 + style.pitch_shift / 100.0)
        out = librosa.effects.pitch_shift(out, sr=sample_rate, n_steps=float(semitones))
    if volume and abs(style.volume - 1.0) > 1e-6:
        out = out * float(style.volume)
    return limit_peak(out)


def limit_peak(waveform: np.ndarray, peak: float = 0.99) -> np.ndarray:
    """Scale ``waveform`` down (never up) so that its absolute peak is at most ``peak``."""
    waveform = np.asarray(waveform, dtype=np.float32)
    top = float(np.max(np.abs(waveform))) if waveform.size else 0.0
    return waveform * (peak / top) if top > peak else waveform
