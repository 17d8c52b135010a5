"""Signal measurements of one spoken turn (no learned weights): voice, prosody and background.

All take a mono ``(N,) float32`` waveform at 16 kHz. Frames are 32 ms (512 samples) every 10 ms;
the log-mel front end has 40 Slaney mel bands over 50-7,800 Hz (:func:`log_mel_frames`).

========================  ===================================================================
measurement               definition
========================  ===================================================================
``voice`` (26,)           mean and std of MFCC 1-13 over active frames (voice timbre)
``f0_hz``                 median autocorrelation pitch of voiced active frames (nan if none)
``tail_f0_ratio``         median pitch of the last second of activity / ``f0_hz``
``active_s``              first to last active frame, seconds
``pause``                 share of silent frames inside the active span (0..1)
``loudness_db``           mean active-frame level, dB re full scale
``prominence_db``         98th-percentile minus median active-frame level, dB
``tail_modulation``       3-8 Hz share of the envelope modulation energy in the last second
``background`` (40,)      mean log-mel of the quietest 30 % of frames, minus its band mean
``background_db``         level of those frames, dB re full scale
========================  ===================================================================

:func:`cue_scores` scores a turn's paralinguistic cues against its speaker's typical (median)
turn; the table is in :mod:`memgym.memory.voxmem.acoustic_tags`, which tags cues with it, and
the generator's model QC (:mod:`memgym.datasets.voxmem.qc_model`) checks cue perceptibility with it.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.fft import dct

from memgym.datasets.speech.acoustics import ACTIVE_RANGE_DB
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.sensors.log_mel import mel_filterbank

SAMPLE_RATE = 16000
N_FFT = 512
HOP = 160
N_MELS = 40
QUIET_SHARE = 0.3
"""Share of a turn's frames (the quietest) taken as its background."""
FILLERS = frozenset({"um", "uh", "er", "erm", "hmm", "uhm"})


@functools.lru_cache(maxsize=1)
def _filterbank() -> np.ndarray:
    return mel_filterbank(SAMPLE_RATE, N_FFT, N_MELS, 50.0, 7800.0)


def frames(audio: np.ndarray) -> np.ndarray:
    """``(F, 512) float64`` frames every 10 ms (zero-padded to at least one frame)."""
    x = np.asarray(audio, np.float64).reshape(-1)
    if x.size < N_FFT:
        x = np.pad(x, (0, N_FFT - x.size))
    return np.lib.stride_tricks.sliding_window_view(x, N_FFT)[::HOP]


def log_mel_frames(audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``((F, 40) log-mel, (F,) frame level in dB re full scale)``."""
    framed = frames(audio)
    power = np.abs(np.fft.rfft(framed * np.hanning(N_FFT), axis=1)) ** 2
    mel = np.log(power @ _filterbank().T + 1e-10)
    level = 10 * np.log10(np.mean(framed**2, axis=1) + 1e-12)
    return mel, level


def _active(level: np.ndarray) -> np.ndarray:
    return level > level.max() - ACTIVE_RANGE_DB


def frame_pitch(framed: np.ndarray, fmin: float = 60.0, fmax: float = 450.0) -> np.ndarray:
    """``(F,)`` autocorrelation pitch in Hz per frame; ``nan`` where the peak is weak (unvoiced)."""
    centred = framed - framed.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred * np.hanning(N_FFT), n=2 * N_FFT, axis=1)
    acf = np.fft.irfft(np.abs(spectrum) ** 2, axis=1)[:, :N_FFT]
    low, high = int(SAMPLE_RATE / fmax), int(SAMPLE_RATE / fmin)
    lags = acf[:, low:high]
    best = np.argmax(lags, axis=1)
    strength = lags[np.arange(len(best)), best] / np.maximum(acf[:, 0], 1e-12)
    pitch = SAMPLE_RATE / (best + low)
    return np.where(strength > 0.45, pitch, np.nan)


def background_of(audio: np.ndarray) -> tuple[list[float], float]:
    """``(background shape (40,), background level dB)`` of the quietest frames (module docstring)."""
    mel, level = log_mel_frames(audio)
    return _background(mel, level)


def loudness_of(audio: np.ndarray) -> float:
    """Mean level (dB re full scale) of a turn's active frames: ``measure_turn``'s ``loudness_db``."""
    return active_loudness(log_mel_frames(audio)[1])


def active_loudness(level: np.ndarray) -> float:
    """Mean of the active frames of ``(F,)`` frame levels (dB): :func:`loudness_of` from frames."""
    active = _active(level)
    return float(level[active].mean()) if active.any() else -120.0


def _background(mel: np.ndarray, level: np.ndarray) -> tuple[list[float], float]:
    quiet = level <= np.quantile(level, QUIET_SHARE)
    shape = mel[quiet].mean(axis=0)
    return (shape - shape.mean()).round(5).tolist(), float(np.mean(level[quiet]))


def _median(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else float("nan")


def measure_turn(audio: np.ndarray) -> dict[str, object]:
    """The measurements of the module docstring for one user turn (JSON-ready values)."""
    mel, level = log_mel_frames(audio)
    active = _active(level)
    idx = np.flatnonzero(active)
    first, last = (int(idx[0]), int(idx[-1])) if idx.size else (0, 0)
    span = active[first : last + 1]
    mfcc = dct(mel, type=2, axis=1, norm="ortho")[:, 1:14]
    voiced = mfcc[active] if active.any() else mfcc
    pitch = frame_pitch(frames(audio))
    pitch = np.where(active[: pitch.size], pitch, np.nan)
    f0 = _median(pitch)
    tail = slice(max(first, last - 100), last + 1)
    background, background_db = _background(mel, level)
    envelope = level[tail]
    modulation = 0.0
    if envelope.size >= 32:
        spectrum = np.abs(np.fft.rfft(envelope - envelope.mean())) ** 2
        freqs = np.fft.rfftfreq(envelope.size, d=HOP / SAMPLE_RATE)
        band = (freqs >= 3) & (freqs <= 8)
        modulation = float(spectrum[band].sum() / max(spectrum[1:].sum(), 1e-12))
    return {
        "voice": np.concatenate([voiced.mean(axis=0), voiced.std(axis=0)]).round(5).tolist(),
        "f0_hz": f0,
        "tail_f0_ratio": _median(pitch[tail]) / f0 if np.isfinite(f0) else float("nan"),
        "active_s": (last - first + 1) * HOP / SAMPLE_RATE if idx.size else 0.0,
        "pause": float(1.0 - span.mean()) if span.size else 0.0,
        "loudness_db": float(level[active].mean()) if active.any() else -120.0,
        "prominence_db": float(np.percentile(level[active], 98) - np.median(level[active])) if active.any() else 0.0,
        "tail_modulation": modulation,
        "background": background,
        "background_db": background_db,
    }


def _ratio(value: float, typical: float) -> float:
    return value / typical if math.isfinite(value) and math.isfinite(typical) and typical > 0 else 1.0


def cue_scores(measure: dict, typical: dict, words: str) -> dict[str, float]:
    """The cue scores of one turn against its speaker's ``typical`` (median) measurements."""
    rate = _ratio(measure["rate"], typical["rate"])
    tokens = set(words.lower().replace(",", " ").replace(".", " ").split())
    laugh = (measure["tail_f0_ratio"] - 1.25) / 0.1 if measure["tail_modulation"] > 0.3 else -1.0
    return {
        CUE_WORDS["fast"]: (rate - 1.25) / 0.15,
        CUE_WORDS["slow"]: (0.8 - rate) / 0.1,
        CUE_WORDS["surprise"]: (_ratio(measure["f0_hz"], typical["f0_hz"]) - 1.2) / 0.1,
        CUE_WORDS["hesitation"]: (measure["pause"] - typical["pause"] - 0.08) / 0.05 + float(bool(tokens & FILLERS)),
        CUE_WORDS["emphasis"]: (measure["prominence_db"] - typical["prominence_db"] - 2.0) / 1.0,
        CUE_WORDS["laughter"]: laugh if math.isfinite(laugh) else -1.0,
    }
