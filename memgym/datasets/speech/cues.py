"""Paralinguistic cues as style controls, each rendered with its cue-removed pair.

=============  ==============================================================  =======================
cue            style control                                                   acoustic check (QC)
=============  ==============================================================  =======================
neutral        none                                                            --
hesitation     fillers (um/uh/er) and 0.6-0.9 s pauses before 2 words, rate .9  longer, more pause
surprise       base pitch +45 %, pitch range +120 %, slightly faster/louder     median F0 higher
emphasis       strong emphasis on the 2-3 longest words, +30 % pitch range      longer, more prominent
fast           rate x1.35                                                      duration shorter
slow           rate x0.6                                                       duration longer
laughter       a laugh (voiced "ha" bursts, same voice, raised pitch) after     longer, extra voiced
               the words                                                       tail
=============  ==============================================================  =======================

Every rendition keeps the same words and voice in both halves of the pair; the transcript of a
turn is its words only (fillers and laughter are vocalisations, not words), so the cue is absent
from the transcript by construction. :func:`cue_feature_delta` measures, on a rendered pair,
the acoustic feature the cue is made of; the QC requires it to exceed :data:`CUE_MIN_DELTA`.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from memgym.backends.tts.base import NEUTRAL, SpeechStyle, TTSBackend, Voice, limit_peak, words_of
from memgym.datasets.speech.acoustics import active_duration_s, median_f0_hz, pause_fraction, peak_to_median_db

Cue = Literal["neutral", "hesitation", "surprise", "emphasis", "fast", "slow", "laughter"]
CUES: tuple[str, ...] = ("neutral", "hesitation", "surprise", "emphasis", "fast", "slow", "laughter")
CUE_WORDS: dict[str, str] = {
    "neutral": "calm and neutral",
    "hesitation": "hesitant",
    "surprise": "surprised",
    "emphasis": "emphatic",
    "fast": "fast",
    "slow": "slow",
    "laughter": "laughing",
}
"""How a question names each cue ("in which session did I sound hesitant?")."""

LAUGH_TEXT = "ha ha ha ha"
LAUGH_STYLE = SpeechStyle(rate=1.5, pitch_shift=60.0, pitch_range=80.0, volume=0.9)

CUE_MIN_DELTA: dict[str, float] = {
    "hesitation": 0.15,  # relative duration increase, plus pause fraction below
    "surprise": 0.15,  # relative median-F0 increase
    "emphasis": 0.05,  # relative duration increase (eSpeak lengthens stressed words)
    "fast": 0.15,  # relative duration decrease (x1.35 gives about 0.25; 10 ms frames blur a few %)
    "slow": 0.25,  # relative duration increase
    "laughter": 0.1,  # relative duration increase from the laugh
}
"""Minimum size of each cue's acoustic feature difference against its cue-removed pair."""


@dataclasses.dataclass(frozen=True)
class CuePair:
    """A cue-bearing rendition and its cue-removed pair (same words, same voice).

    Attributes:
        cue: the cue.
        style: the style the cued rendition was spoken with.
        cued: ``(N,) float32`` waveform with the cue.
        plain: ``(M,) float32`` waveform without it (neutral style, no vocalisations).
    """

    cue: str
    style: SpeechStyle
    cued: np.ndarray
    plain: np.ndarray


def style_for_cue(cue: str, text: str, rng: np.random.Generator) -> SpeechStyle:
    """The :class:`SpeechStyle` realising ``cue`` on ``text`` (``rng`` picks words and fillers)."""
    words = words_of(text)
    n = len(words)
    if cue in ("neutral", "laughter"):
        return NEUTRAL
    if cue == "fast":  # x1.6 made Whisper tiny.en miss most words; x1.35 still shortens speech by ~25 %
        return SpeechStyle(rate=1.35)
    if cue == "slow":
        return SpeechStyle(rate=0.6)
    if cue == "surprise":
        return SpeechStyle(rate=1.05, pitch_shift=45.0, pitch_range=120.0, volume=1.0, instructions="sound surprised")
    if cue == "emphasis":
        order = sorted(range(n), key=lambda i: (-len(words[i].strip(".,!?;:")), i))
        chosen = tuple(sorted(order[: min(3, n)]))
        return SpeechStyle(emphasis=chosen, pitch_range=30.0, instructions="speak emphatically")
    if cue == "hesitation":
        candidates = list(range(1, n)) or [0]
        picks = sorted(rng.choice(candidates, size=min(2, len(candidates)), replace=False).tolist())
        fillers = {str(i): str(rng.choice(["um", "uh", "er", "hmm"])) for i in picks[:1]}
        pauses = {str(i): int(rng.integers(600, 900)) for i in picks}
        return SpeechStyle(rate=0.9, fillers=fillers, pauses_ms=pauses, instructions="sound hesitant and unsure")
    raise ValueError(f"unknown cue '{cue}'; expected one of {CUES}")


def render_cue_pair(backend: TTSBackend, voice: Voice, text: str, cue: str, rng: np.random.Generator) -> CuePair:
    """Speak ``text`` with ``voice`` twice: with ``cue`` and with the cue removed."""
    style = style_for_cue(cue, text, rng)
    plain = backend.synthesize(text, voice, NEUTRAL)
    if cue == "neutral":
        return CuePair(cue, style, plain, plain)
    if cue == "laughter":
        laugh = backend.synthesize(LAUGH_TEXT, voice, LAUGH_STYLE)
        gap = np.zeros(int(0.15 * backend.sample_rate), dtype=np.float32)
        cued = limit_peak(np.concatenate([plain, gap, laugh]))
        return CuePair(cue, style, cued, plain)
    return CuePair(cue, style, backend.synthesize(text, voice, style), plain)


def cue_feature_delta(cue: str, cued: np.ndarray, plain: np.ndarray, sample_rate: int) -> dict[str, float]:
    """The cue's acoustic feature measured on a pair, as relative differences.

    Durations are active-region durations (speech from its first to its last active frame), so
    the engine's leading and trailing silence does not dilute rate differences.

    Returns:
        ``{"feature": name, "delta": value, ...}`` with the main delta under ``"delta"``
        (positive = the cue is present in the expected direction).
    """
    ratio = active_duration_s(cued, sample_rate) / max(active_duration_s(plain, sample_rate), 1e-9)
    if cue == "fast":
        return {"delta": 1.0 - ratio, "duration_ratio": ratio}
    if cue == "slow":
        return {"delta": ratio - 1.0, "duration_ratio": ratio}
    if cue == "surprise":
        f0_cued, f0_plain = median_f0_hz(cued, sample_rate), median_f0_hz(plain, sample_rate)
        return {"delta": f0_cued / f0_plain - 1.0, "f0_cued_hz": f0_cued, "f0_plain_hz": f0_plain}
    if cue == "hesitation":
        pauses = pause_fraction(cued, sample_rate) - pause_fraction(plain, sample_rate)
        return {"delta": min(ratio - 1.0, 10 * pauses), "duration_ratio": ratio, "pause_fraction_delta": pauses}
    if cue == "emphasis":
        prominence = peak_to_median_db(cued, sample_rate) - peak_to_median_db(plain, sample_rate)
        return {"delta": ratio - 1.0, "duration_ratio": ratio, "prominence_delta_db": prominence}
    if cue == "laughter":
        return {"delta": ratio - 1.0, "duration_ratio": ratio}
    return {"delta": 0.0}


def cue_is_perceptible(cue: str, cued: np.ndarray, plain: np.ndarray, sample_rate: int) -> bool:
    """Whether the pair differs in the cue's acoustic feature by at least :data:`CUE_MIN_DELTA`."""
    if cue == "neutral":
        return True
    return cue_feature_delta(cue, cued, plain, sample_rate)["delta"] >= CUE_MIN_DELTA[cue]
