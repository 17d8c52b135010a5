"""Mixing environmental sound under speech at a target SNR measured on the speech's active region.

Environmental sounds come from the shared sound-source library (``memgym.datasets.sources``)
through a :data:`SoundClipSource` -- any callable ``(sound_class, rng) -> (N,) float32`` clip at
the session sample rate (16 kHz) -- so VoxMem and AMemOps draw from one library.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from memgym.core.errors import MemgymError
from memgym.datasets.speech.acoustics import active_mask, active_power

SoundClipSource = Callable[[str, np.random.Generator], np.ndarray]
"""``(sound_class, rng) -> (N,) float32`` mono clip in [-1, 1] at 16 kHz for one sound class."""


@dataclasses.dataclass(frozen=True)
class Mix:
    """A mixture and its parts, all ``(N,) float32`` at the speech's rate.

    Attributes:
        mixture: speech + noise, peak-limited (both parts scaled together, so the SNR holds).
        speech: the speech part as it sits in the mixture (the clean pair).
        noise: the noise part as it sits in the mixture.
        snr_db: achieved SNR on the speech's active region.
    """

    mixture: np.ndarray
    speech: np.ndarray
    noise: np.ndarray
    snr_db: float


def fit_length(clip: np.ndarray, length: int, rng: np.random.Generator) -> np.ndarray:
    """Loop ``clip`` (with a random start) or crop it to exactly ``length`` samples."""
    clip = np.asarray(clip, dtype=np.float32).reshape(-1)
    if clip.size == 0 or not np.any(clip):
        raise MemgymError("environmental sound clip is empty or silent; cannot mix it under speech")
    reps = int(np.ceil((length + clip.size) / clip.size))
    looped = np.tile(clip, reps)
    start = int(rng.integers(0, clip.size))
    return looped[start : start + length]


def mix_at_snr(speech: np.ndarray, noise: np.ndarray, sample_rate: int, snr_db: float, rng: np.random.Generator) -> Mix:
    """Scale ``noise`` so that speech-to-noise power on the speech's active region is ``snr_db``.

    Args:
        speech: ``(N,) float32`` clean speech.
        noise: ``(M,) float32`` sound clip, looped or cropped to ``N`` samples.
        sample_rate: Hz (for the active-region frames).
        snr_db: target SNR in dB.
        rng: draws the clip's start offset.
    """
    speech = np.asarray(speech, dtype=np.float32)
    noise = fit_length(noise, speech.size, rng)
    mask = active_mask(speech, sample_rate)
    p_speech, p_noise = active_power(speech, mask), active_power(noise, mask)
    if p_speech <= 0:
        raise MemgymError("speech is silent; cannot mix at an SNR")
    if p_noise <= 0:  # the clip is silent exactly where the speech is: use its overall power
        p_noise = float(np.mean(noise.astype(np.float64) ** 2))
    gain = np.sqrt(p_speech / (p_noise * 10.0 ** (snr_db / 10.0)))
    scaled = (noise * gain).astype(np.float32)
    mixture = speech + scaled
    peak = float(np.max(np.abs(mixture)))
    scale = 0.99 / peak if peak > 0.99 else 1.0
    speech_part, noise_part = speech * scale, scaled * scale
    achieved = 10.0 * np.log10(active_power(speech_part, mask) / max(active_power(noise_part, mask), 1e-20))
    return Mix((speech_part + noise_part).astype(np.float32), speech_part, noise_part, float(achieved))
