"""Stereo log-mel front end (the AMemOps "microphone"): 16 kHz audio -> 25 Hz log-mel frames.

Parameters follow the AMemOps paper: 64 mel bands per channel, 1,024-sample periodic Hann
window, 640-sample hop (25 frames/s), 50-7,800 Hz, Slaney mel scale and area normalisation (the
librosa defaults), power spectrum, natural log with an additive floor :data:`LOG_FLOOR`.

Framing is *causal and frame-aligned*: the signal is left-padded with ``n_fft - hop`` = 384
zeros and framed without centring, so feature frame ``t`` covers samples
``[t*640 - 384, (t+1)*640)`` — it ends exactly where 40-ms frame ``t`` ends and a stream of
``T*640`` samples gives exactly ``T`` frames. This equals ``librosa.feature.melspectrogram(
y=np.pad(x, (384, 0)), center=False, ...)`` (checked in the tests to 1e-4 in the log domain).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

SAMPLE_RATE = 16_000
N_FFT = 1024
HOP = 640
N_MELS = 64
FMIN = 50.0
FMAX = 7800.0
LOG_FLOOR = 1e-10
"""Added to mel power before the log (so silence maps to log(1e-10) ~ -23)."""
FRAME_RATE = SAMPLE_RATE / HOP  # 25 frames/s
LOG_MEL_MEAN = -11.1
LOG_MEL_STD = 3.3
"""Mean and standard deviation of the log-mel values of the embedded-default AMemOps streams
(12 training streams of 2,048 frames, both channels); models standardise their inputs with them."""


def _hz_to_mel(freqs: np.ndarray) -> np.ndarray:
    """Slaney mel scale (linear below 1 kHz, logarithmic above)."""
    freqs = np.asarray(freqs, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = freqs / f_sp
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(freqs >= min_log_hz, min_log_mel + np.log(np.maximum(freqs, 1e-12) / min_log_hz) / logstep, mels)


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(mels >= min_log_mel, min_log_hz * np.exp(logstep * (mels - min_log_mel)), f_sp * mels)


@functools.lru_cache(maxsize=8)
def mel_filterbank(
    sr: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS, fmin: float = FMIN, fmax: float = FMAX
) -> np.ndarray:
    """``(n_mels, n_fft//2 + 1)`` float64 triangular Slaney-normalised mel weights (as librosa)."""
    fft_freqs = np.linspace(0.0, sr / 2, 1 + n_fft // 2)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights


@functools.lru_cache(maxsize=2)
def _torch_constants() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.hann_window(N_FFT, periodic=True, dtype=torch.float32), torch.from_numpy(
        mel_filterbank().astype(np.float32)
    )


def log_mel(audio: np.ndarray | torch.Tensor, *, single_thread: bool = True) -> torch.Tensor:
    """Log-mel frames of multi-channel audio.

    Args:
        audio: ``(C, N)`` (or ``(N,)``) float audio at 16 kHz; ``N`` a multiple of 640 gives
            exactly ``N / 640`` frames.
        single_thread: run the STFT with one torch thread (restored afterwards). Intra-op
            threads do not speed up STFTs of this size and slow them several-fold on a busy
            machine; data-loading parallelism belongs in worker processes.
    Returns:
        ``(T, C * 64)`` float32 tensor, ``T = N // 640``: channel 0's 64 bands, then channel 1's.
    """
    x = torch.as_tensor(
        np.array(audio, dtype=np.float32, copy=True)
        if isinstance(audio, np.ndarray) and not audio.flags.writeable
        else audio,
        dtype=torch.float32,
    )
    if x.ndim == 1:
        x = x[None]
    threads = torch.get_num_threads()
    if single_thread and threads > 1:
        torch.set_num_threads(1)
    try:
        window, fb = _torch_constants()
        x = torch.nn.functional.pad(x, (N_FFT - HOP, 0))
        spec = torch.stft(x, N_FFT, HOP, window=window, center=False, return_complex=True)  # (C, F, T)
        power = spec.real.square() + spec.imag.square()
        mel = torch.matmul(fb, power)  # (C, 64, T)
        logmel = torch.log(mel + LOG_FLOOR)
        return logmel.permute(2, 0, 1).reshape(logmel.shape[2], -1).contiguous()
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
