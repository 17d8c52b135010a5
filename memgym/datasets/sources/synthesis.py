"""Small numpy synthesis primitives shared by the synthetic libraries.

All functions work at :data:`~memgym.datasets.sources.library.SAMPLE_RATE` and return float64
arrays; ``rng`` is a ``numpy.random.Generator`` so every recording is reproducible from its seed.
"""

from __future__ import annotations

import hashlib

import numpy as np
from scipy.signal import fftconvolve

from memgym.core.errors import MemgymError
from memgym.datasets.sources.library import SAMPLE_RATE


def stable_seed(*parts: object) -> int:
    """A 63-bit seed from a tuple of values (stable across runs and processes)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def band_noise(rng: np.random.Generator, n: int, low_hz: float, high_hz: float, tilt_db: float = 0.0) -> np.ndarray:
    """``(n,)`` Gaussian noise band-limited to ``[low_hz, high_hz]`` with a spectral tilt (dB/octave), unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1.0 / SAMPLE_RATE)
    mask = ((freqs >= low_hz) & (freqs <= high_hz)).astype(float)
    if tilt_db:
        mask *= (np.maximum(freqs, 20.0) / 1000.0) ** (tilt_db / 6.02)
    out = np.fft.irfft(spectrum * mask, n)
    return out / (np.sqrt(np.mean(out**2)) + 1e-12)


def resonate(signal: np.ndarray, freq_hz: float, decay_s: float) -> np.ndarray:
    """Convolve ``signal`` with a decaying sinusoid (a single resonant mode)."""
    t = np.arange(int(min(decay_s * 5, 0.5) * SAMPLE_RATE) + 1) / SAMPLE_RATE
    kernel = np.sin(2 * np.pi * freq_hz * t) * np.exp(-t / decay_s)
    return fftconvolve(signal, kernel)[: len(signal)]


def harmonic_tone(
    rng: np.random.Generator,
    f0_track: np.ndarray,
    amplitudes: np.ndarray,
    *,
    inharmonicity: float = 0.0,
    partial_ratios: np.ndarray | None = None,
) -> np.ndarray:
    """Sum of partials following a per-sample fundamental ``f0_track`` (Hz).

    Args:
        f0_track: ``(n,)`` instantaneous fundamental frequency in Hz.
        amplitudes: ``(K,)`` or ``(K, n)`` partial amplitudes (a 2-D array gives per-partial envelopes).
        inharmonicity: stiffness ``B``: partial k sits at ``k f0 sqrt(1 + B k^2)``.
        partial_ratios: explicit ``(K,)`` frequency ratios (replaces the harmonic series).
    Returns:
        ``(n,)`` float64; partials above 7.9 kHz are dropped.
    """
    k = np.arange(1, amplitudes.shape[0] + 1, dtype=float)
    ratios = partial_ratios if partial_ratios is not None else k * np.sqrt(1.0 + inharmonicity * k**2)
    phase = 2 * np.pi * np.cumsum(f0_track) / SAMPLE_RATE
    if amplitudes.ndim == 1 and partial_ratios is None and inharmonicity == 0.0:
        return _wavetable(rng, phase, amplitudes, float(np.max(f0_track)))
    keep = ratios * float(np.max(f0_track)) < 7900.0
    if not np.any(keep):
        keep[0] = True
    ratios, amps = ratios[keep], amplitudes[keep]
    offsets = rng.uniform(0, 2 * np.pi, size=len(ratios))
    waves = np.sin(ratios[:, None] * phase[None, :] + offsets[:, None])
    if amps.ndim == 1:
        return amps @ waves
    return np.einsum("kn,kn->n", amps, waves)


def _wavetable(rng: np.random.Generator, phase: np.ndarray, amplitudes: np.ndarray, f0_max: float) -> np.ndarray:
    """Harmonic series with fixed amplitudes read from a one-period table (cost independent of K)."""
    size = 4096
    keep = np.arange(1, len(amplitudes) + 1) * f0_max < 7900.0
    keep[0] = True
    spectrum = np.zeros(size // 2 + 1, dtype=complex)
    offsets = rng.uniform(0, 2 * np.pi, size=len(amplitudes))
    spectrum[1 : len(amplitudes) + 1] = np.where(keep, amplitudes, 0.0) * np.exp(1j * (offsets - np.pi / 2))
    table = np.fft.irfft(spectrum, size) * size / 2
    position = (phase / (2 * np.pi) % 1.0) * size
    index = position.astype(int)
    frac = position - index
    return table[index] * (1 - frac) + table[(index + 1) % size] * frac


def room(rng: np.random.Generator, signal: np.ndarray, rt60_s: float, wet: float) -> np.ndarray:
    """Simple room: convolve with an exponentially decaying noise tail (RT60 ``rt60_s``), mix ``wet``."""
    length = int(rt60_s * SAMPLE_RATE)
    if length < 16 or wet <= 0:
        return signal
    t = np.arange(length) / SAMPLE_RATE
    ir = rng.standard_normal(length) * np.exp(-6.91 * t / rt60_s)
    ir /= np.sqrt(np.sum(ir**2)) + 1e-12
    tail = fftconvolve(signal, ir)[: len(signal)]
    return (1.0 - wet) * signal + wet * tail


def shoebox_room(rng: np.random.Generator, signal: np.ndarray, rt60_s: float, wet: float) -> np.ndarray:
    """Room by image-source simulation (pyroomacoustics): random shoebox, source and microphone.

    The room (3-10 m x 3-8 m x 2.4-4 m) gets wall absorption matching ``rt60_s`` by Sabine's
    formula; images up to order 12 are summed. Raises :class:`ImportError` without pyroomacoustics.
    """
    import pyroomacoustics as pra

    dims = rng.uniform([3.0, 3.0, 2.4], [10.0, 8.0, 4.0])
    absorption, max_order = pra.inverse_sabine(rt60_s, dims)
    shoebox = pra.ShoeBox(dims, fs=SAMPLE_RATE, materials=pra.Material(absorption), max_order=min(max_order, 12))
    shoebox.add_source(rng.uniform(0.5, dims - 0.5))
    shoebox.add_microphone(rng.uniform(0.5, dims - 0.5))
    shoebox.compute_rir()
    ir = np.asarray(shoebox.rir[0][0], dtype=np.float64)
    ir /= np.sqrt(np.sum(ir**2)) + 1e-12
    tail = fftconvolve(signal, ir)[: len(signal)]
    return (1.0 - wet) * signal + wet * tail


ROOMS = ("simple", "pyroomacoustics")


def check_room(kind: str) -> None:
    """Raise :class:`MemgymError` unless ``kind`` is a known room model that can run here."""
    if kind not in ROOMS:
        raise MemgymError(f"room must be one of {list(ROOMS)}, got '{kind}'")
    if kind == "pyroomacoustics":
        try:
            import pyroomacoustics  # noqa: F401
        except ImportError:
            raise MemgymError(
                "room='pyroomacoustics' needs the pyroomacoustics package (pip install pyroomacoustics)"
            ) from None


def apply_room(kind: str, rng: np.random.Generator, signal: np.ndarray, rt60_s: float, wet: float) -> np.ndarray:
    """``room`` (``kind="simple"``) or :func:`shoebox_room` (``kind="pyroomacoustics"``)."""
    if kind == "pyroomacoustics":
        return shoebox_room(rng, signal, rt60_s, wet)
    return room(rng, signal, rt60_s, wet)


def adsr(n: int, attack_s: float, decay_s: float, sustain: float, release_s: float) -> np.ndarray:
    """``(n,)`` envelope: linear attack, exponential decay to ``sustain``, linear release at the end."""
    t = np.arange(n) / SAMPLE_RATE
    attack = max(attack_s, 1e-3)
    env = np.where(t < attack, t / attack, sustain + (1 - sustain) * np.exp(-(t - attack) / max(decay_s, 1e-3)))
    release = int(release_s * SAMPLE_RATE)
    if 0 < release < n:
        env[-release:] *= np.linspace(1.0, 0.0, release)
    return env
