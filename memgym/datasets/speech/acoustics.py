"""Acoustic measurements used to build and check spoken sessions.

All functions take mono ``(N,) float32`` waveforms in [-1, 1] at ``sample_rate`` Hz and use
25 ms frames with a 10 ms hop. "Active" frames are those whose RMS lies within
:data:`ACTIVE_RANGE_DB` of the loudest frame (speech, not the silences around it).
"""

from __future__ import annotations

import numpy as np

FRAME_S = 0.025
HOP_S = 0.010
ACTIVE_RANGE_DB = 35.0
"""A frame is active when its RMS is at most this many dB below the loudest frame."""


def frame_rms(waveform: np.ndarray, sample_rate: int) -> np.ndarray:
    """``(F,) float64`` RMS of 25 ms frames every 10 ms (the last partial frame is zero-padded)."""
    x = np.asarray(waveform, dtype=np.float64)
    frame, hop = int(round(FRAME_S * sample_rate)), int(round(HOP_S * sample_rate))
    if x.size < frame:
        x = np.pad(x, (0, frame - x.size))
    count = 1 + (x.size - frame + hop - 1) // hop
    x = np.pad(x, (0, (count - 1) * hop + frame - x.size))
    frames = np.lib.stride_tricks.sliding_window_view(x, frame)[::hop][:count]
    return np.sqrt(np.mean(frames**2, axis=1))


def active_mask(waveform: np.ndarray, sample_rate: int, range_db: float = ACTIVE_RANGE_DB) -> np.ndarray:
    """``(N,) bool`` per-sample mask of the active region (frames near the loudest one)."""
    rms = frame_rms(waveform, sample_rate)
    top = rms.max() if rms.size else 0.0
    hop = int(round(HOP_S * sample_rate))
    if top <= 0:
        return np.zeros(len(waveform), dtype=bool)
    active_frames = 20 * np.log10(np.maximum(rms, 1e-12) / top) > -range_db
    return np.repeat(active_frames, hop)[: len(waveform)].astype(bool) if len(waveform) else np.zeros(0, bool)


def active_power(waveform: np.ndarray, mask: np.ndarray) -> float:
    """Mean power of ``waveform`` over the samples where ``mask`` is true."""
    x = np.asarray(waveform, dtype=np.float64)
    mask = mask[: x.size]
    return float(np.mean(x[: mask.size][mask] ** 2)) if mask.any() else 0.0


def snr_db(speech: np.ndarray, noise: np.ndarray, sample_rate: int) -> float:
    """SNR in dB of ``speech`` over ``noise`` (same length), both measured on the speech's active region."""
    mask = active_mask(speech, sample_rate)
    return 10.0 * np.log10(active_power(speech, mask) / max(active_power(noise, mask), 1e-20))


def active_duration_s(waveform: np.ndarray, sample_rate: int) -> float:
    """Seconds from the first to the last active frame (leading/trailing silence excluded)."""
    rms = frame_rms(waveform, sample_rate)
    if not rms.size or rms.max() <= 0:
        return 0.0
    idx = np.flatnonzero(20 * np.log10(np.maximum(rms, 1e-12) / rms.max()) > -ACTIVE_RANGE_DB)
    return float((idx[-1] - idx[0] + 1) * HOP_S)


def pause_fraction(waveform: np.ndarray, sample_rate: int) -> float:
    """Fraction of frames between the first and last active frame that are silent (0..1)."""
    rms = frame_rms(waveform, sample_rate)
    if not rms.size or rms.max() <= 0:
        return 0.0
    active = 20 * np.log10(np.maximum(rms, 1e-12) / rms.max()) > -ACTIVE_RANGE_DB
    idx = np.flatnonzero(active)
    inner = active[idx[0] : idx[-1] + 1]
    return float(1.0 - inner.mean())


def median_f0_hz(waveform: np.ndarray, sample_rate: int, fmin: float = 50.0, fmax: float = 500.0) -> float:
    """Median fundamental frequency (Hz, YIN) over loud frames; ``nan`` for unvoiced audio."""
    import librosa

    x = np.asarray(waveform, dtype=np.float32)
    if x.size < 2048:
        return float("nan")
    f0 = librosa.yin(x, fmin=fmin, fmax=fmax, sr=sample_rate, frame_length=1024, hop_length=160)
    rms = frame_rms(x, sample_rate)
    n = min(f0.size, rms.size)
    loud = rms[:n] > 0.1 * rms.max()
    return float(np.median(f0[:n][loud])) if loud.any() else float("nan")


def peak_to_median_db(waveform: np.ndarray, sample_rate: int) -> float:
    """Energy prominence: 98th-percentile minus median active-frame level in dB."""
    rms = frame_rms(waveform, sample_rate)
    if not rms.size or rms.max() <= 0:
        return 0.0
    level = 20 * np.log10(np.maximum(rms, 1e-12))
    active = level > level.max() - ACTIVE_RANGE_DB
    return float(np.percentile(level[active], 98) - np.median(level[active]))


def clipped_fraction(waveform: np.ndarray, threshold: float = 0.999) -> float:
    """Fraction of samples at or beyond ``threshold`` in absolute value."""
    x = np.asarray(waveform)
    return float(np.mean(np.abs(x) >= threshold)) if x.size else 0.0
