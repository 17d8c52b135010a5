"""Embedded synthetic environmental-sound library: 50 ESC-50-like classes x 40 clips in 5 folds.

Every class is a recipe of a few synthesis components with its own recognisable character —
harmonic calls with pitch contours (barks, meows, crowing, bleats), filtered-noise textures with
slow modulation (rain, waves, wind, engines), transient trains with resonances (clock ticks,
knocks, footsteps, typing), sweeps and beeps (sirens, alarms, horns), inharmonic bells and
chirps (birds, crickets). A clip (5 s, like ESC-50) draws its timing, pitch, rate, background
noise and room from its own seed, so clips of one class vary as real recordings do.
Folds 1-4 are ``train``, fold 5 ``eval``; class families follow ESC-50's five major categories.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.datasets.sources.library import SAMPLE_RATE, RecordingInfo, SourceLibrary
from memgym.datasets.sources.synthesis import apply_room, band_noise, check_room, harmonic_tone, resonate, stable_seed

# Component recipes. Keys: kind, and per kind:
#   call:    f0 (Hz), dur (s), rate (events/s), contour (flat|rise|fall|arch|sweep), harm, slope, noise, am (Hz)
#   texture: band (lo, hi Hz), am (Hz), depth, tilt (dB/oct)
#   clicks:  rate (events/s), regular (bool), freq (Hz), decay (s), noise_band (lo, hi)
#   bell:    f0, rate, decay
#   chirp:   f0, span (Hz), dur, rate
CLASSES: dict[str, tuple[str, list[dict]]] = {
    "dog": ("animals", [dict(kind="call", f0=550, dur=0.15, rate=2.0, contour="fall", harm=12, slope=-5, noise=0.5)]),
    "rooster": (
        "animals",
        [dict(kind="call", f0=650, dur=1.2, rate=0.35, contour="arch", harm=10, slope=-4, noise=0.2)],
    ),
    "pig": ("animals", [dict(kind="call", f0=160, dur=0.3, rate=1.8, contour="flat", harm=20, slope=-3, noise=0.8)]),
    "cow": ("animals", [dict(kind="call", f0=120, dur=1.6, rate=0.35, contour="arch", harm=25, slope=-7, noise=0.1)]),
    "frog": (
        "animals",
        [dict(kind="call", f0=320, dur=0.35, rate=1.5, contour="flat", harm=8, slope=-4, noise=0.2, am=35)],
    ),
    "cat": ("animals", [dict(kind="call", f0=620, dur=0.9, rate=0.6, contour="arch", harm=10, slope=-6, noise=0.1)]),
    "hen": ("animals", [dict(kind="call", f0=420, dur=0.12, rate=3.0, contour="rise", harm=10, slope=-5, noise=0.3)]),
    "insects": (
        "animals",
        [dict(kind="call", f0=240, dur=5.0, rate=0.2, contour="flat", harm=30, slope=-2, noise=0.1, am=12)],
    ),
    "sheep": (
        "animals",
        [dict(kind="call", f0=300, dur=0.9, rate=0.5, contour="fall", harm=18, slope=-5, noise=0.2, am=9)],
    ),
    "crow": ("animals", [dict(kind="call", f0=750, dur=0.35, rate=1.2, contour="fall", harm=12, slope=-3, noise=0.9)]),
    "rain": (
        "natural",
        [
            dict(kind="texture", band=(500, 7900), am=0.0, depth=0.0, tilt=-1),
            dict(kind="clicks", rate=30, regular=False, freq=3000, decay=0.004, noise_band=(1500, 7000)),
        ],
    ),
    "sea_waves": ("natural", [dict(kind="texture", band=(60, 3000), am=0.12, depth=0.9, tilt=-4)]),
    "crackling_fire": (
        "natural",
        [
            dict(kind="texture", band=(80, 1500), am=0.0, depth=0.0, tilt=-3),
            dict(kind="clicks", rate=12, regular=False, freq=2500, decay=0.002, noise_band=(1000, 7900)),
        ],
    ),
    "crickets": ("natural", [dict(kind="chirp", f0=4800, span=100, dur=0.25, rate=2.5, am=60)]),
    "chirping_birds": ("natural", [dict(kind="chirp", f0=3500, span=2000, dur=0.12, rate=5.0)]),
    "water_drops": ("natural", [dict(kind="chirp", f0=900, span=900, dur=0.05, rate=3.0)]),
    "wind": ("natural", [dict(kind="texture", band=(100, 1200), am=0.25, depth=0.7, tilt=-5)]),
    "pouring_water": ("natural", [dict(kind="texture", band=(400, 2500), am=6.0, depth=0.4, tilt=0)]),
    "toilet_flush": ("natural", [dict(kind="texture", band=(150, 4000), am=0.2, depth=0.95, tilt=-2)]),
    "thunderstorm": (
        "natural",
        [
            dict(kind="texture", band=(30, 400), am=0.3, depth=0.9, tilt=-6),
            dict(kind="texture", band=(800, 7900), am=0.0, depth=0.0, tilt=-1, level=0.3),
        ],
    ),
    "crying_baby": (
        "human",
        [dict(kind="call", f0=480, dur=1.0, rate=0.7, contour="arch", harm=14, slope=-4, noise=0.2, am=6)],
    ),
    "sneezing": (
        "human",
        [dict(kind="texture", band=(1500, 7000), am=0.0, depth=0.0, tilt=0, bursts=0.5, burst_dur=0.3)],
    ),
    "clapping": ("human", [dict(kind="clicks", rate=3.5, regular=True, freq=1200, decay=0.01, noise_band=(500, 6000))]),
    "breathing": ("human", [dict(kind="texture", band=(200, 3000), am=0.3, depth=0.95, tilt=-2)]),
    "coughing": (
        "human",
        [dict(kind="texture", band=(200, 4000), am=0.0, depth=0.0, tilt=-3, bursts=1.0, burst_dur=0.25)],
    ),
    "footsteps": ("human", [dict(kind="clicks", rate=1.8, regular=True, freq=120, decay=0.05, noise_band=(60, 1500))]),
    "laughing": (
        "human",
        [dict(kind="call", f0=260, dur=0.12, rate=5.0, contour="fall", harm=16, slope=-5, noise=0.5)],
    ),
    "brushing_teeth": ("human", [dict(kind="texture", band=(2000, 7900), am=4.0, depth=0.9, tilt=0)]),
    "snoring": (
        "human",
        [dict(kind="call", f0=80, dur=1.5, rate=0.3, contour="arch", harm=40, slope=-3, noise=0.8, am=25)],
    ),
    "drinking_sipping": ("human", [dict(kind="chirp", f0=500, span=-200, dur=0.1, rate=2.0, noise=0.5)]),
    "door_wood_knock": (
        "interior",
        [dict(kind="clicks", rate=4.0, regular=True, freq=320, decay=0.03, noise_band=(100, 2000), groups=True)],
    ),
    "mouse_click": (
        "interior",
        [dict(kind="clicks", rate=1.5, regular=False, freq=5000, decay=0.002, noise_band=(3000, 7900))],
    ),
    "keyboard_typing": (
        "interior",
        [dict(kind="clicks", rate=8.0, regular=False, freq=2200, decay=0.006, noise_band=(800, 6000))],
    ),
    "door_wood_creaks": (
        "interior",
        [dict(kind="call", f0=180, dur=1.4, rate=0.4, contour="sweep", harm=30, slope=-2, noise=0.3, am=40)],
    ),
    "can_opening": (
        "interior",
        [
            dict(kind="clicks", rate=0.4, regular=False, freq=3500, decay=0.01, noise_band=(2000, 7900)),
            dict(kind="texture", band=(3000, 7900), am=0.0, depth=0.0, tilt=0, bursts=0.4, burst_dur=0.4),
        ],
    ),
    "washing_machine": (
        "interior",
        [
            dict(kind="texture", band=(40, 800), am=1.2, depth=0.6, tilt=-4),
            dict(kind="call", f0=50, dur=5.0, rate=0.2, contour="flat", harm=10, slope=-8, noise=0.0),
        ],
    ),
    "vacuum_cleaner": (
        "interior",
        [
            dict(kind="texture", band=(300, 7000), am=0.0, depth=0.0, tilt=-1),
            dict(kind="call", f0=210, dur=5.0, rate=0.2, contour="flat", harm=20, slope=-6, noise=0.0),
        ],
    ),
    "clock_alarm": (
        "interior",
        [dict(kind="call", f0=2000, dur=0.1, rate=5.0, contour="flat", harm=3, slope=-10, noise=0.0, regular=True)],
    ),
    "clock_tick": (
        "interior",
        [dict(kind="clicks", rate=1.0, regular=True, freq=3200, decay=0.004, noise_band=(2000, 6000))],
    ),
    "glass_breaking": (
        "interior",
        [
            dict(kind="bell", f0=2300, rate=6.0, decay=0.08),
            dict(kind="texture", band=(2000, 7900), am=0.0, depth=0.0, tilt=0, bursts=0.3, burst_dur=0.2),
        ],
    ),
    "helicopter": ("exterior", [dict(kind="texture", band=(40, 1500), am=11.0, depth=0.9, tilt=-4)]),
    "chainsaw": (
        "exterior",
        [dict(kind="call", f0=115, dur=5.0, rate=0.2, contour="flat", harm=60, slope=-1.5, noise=0.6, am=3)],
    ),
    "siren": ("exterior", [dict(kind="call", f0=900, dur=5.0, rate=0.2, contour="sweep", harm=5, slope=-6, noise=0.0)]),
    "car_horn": (
        "exterior",
        [dict(kind="call", f0=420, dur=0.8, rate=0.6, contour="flat", harm=15, slope=-2, noise=0.05)],
    ),
    "engine": (
        "exterior",
        [dict(kind="call", f0=45, dur=5.0, rate=0.2, contour="flat", harm=60, slope=-4, noise=0.6, am=4)],
    ),
    "train": (
        "exterior",
        [
            dict(kind="texture", band=(50, 3000), am=0.0, depth=0.0, tilt=-3),
            dict(kind="clicks", rate=2.2, regular=True, freq=400, decay=0.04, noise_band=(200, 3000)),
        ],
    ),
    "church_bells": ("exterior", [dict(kind="bell", f0=420, rate=0.8, decay=1.5)]),
    "airplane": ("exterior", [dict(kind="texture", band=(50, 2500), am=0.05, depth=0.5, tilt=-5)]),
    "fireworks": (
        "exterior",
        [dict(kind="clicks", rate=1.0, regular=False, freq=90, decay=0.25, noise_band=(40, 3000))],
    ),
    "hand_saw": ("exterior", [dict(kind="texture", band=(1500, 7000), am=2.0, depth=0.95, tilt=-1)]),
}
"""ESC-50 class name -> (major category, synthesis components)."""

CLIP_SECONDS = 5.0
CLIPS_PER_FOLD = 8


def _events(rng: np.random.Generator, rate: float, n: int, regular: bool) -> np.ndarray:
    """Sample indices of event onsets at ``rate`` per second over ``n`` samples."""
    seconds = n / SAMPLE_RATE
    if regular:
        period = 1.0 / rate
        times = np.arange(rng.uniform(0, period), seconds, period)
    else:
        count = max(1, rng.poisson(rate * seconds))
        times = np.sort(rng.uniform(0, seconds, size=count))
    return (times * SAMPLE_RATE).astype(int)


def _contour(kind: str, n: int) -> np.ndarray:
    u = np.linspace(0.0, 1.0, n)
    if kind == "rise":
        return 2 ** (0.4 * u)
    if kind == "fall":
        return 2 ** (-0.5 * u)
    if kind == "arch":
        return 2 ** (0.5 * np.sin(np.pi * u) - 0.2)
    if kind == "sweep":
        return 2 ** (0.6 * np.sin(2 * np.pi * u * max(1.0, n / SAMPLE_RATE / 1.2)))
    return np.ones(n)


def _component(rng: np.random.Generator, spec: dict, n: int) -> np.ndarray:
    """``(n,)`` float64 of one recipe component ``spec`` (its ``kind`` picks the synthesis), unit RMS."""
    kind = spec["kind"]
    out = np.zeros(n)
    jitter = 2 ** rng.normal(0.0, 0.12)  # per-clip pitch / rate variation
    if kind not in _KINDS:  # pragma: no cover - recipes are fixed above
        raise ValueError(kind)
    _KINDS[kind](rng, spec, out, jitter)
    return out / (np.sqrt(np.mean(out**2)) + 1e-12)


def _call(rng: np.random.Generator, spec: dict, out: np.ndarray, jitter: float) -> None:
    """Harmonic calls (dog, crow, crying baby) along a pitch contour, added to ``out`` ``(n,)`` in place."""
    n = len(out)
    dur = min(int(spec["dur"] * rng.uniform(0.8, 1.25) * SAMPLE_RATE), n)
    onsets = [0] if dur >= n - 1 else _events(rng, spec["rate"] * jitter, n - dur, spec.get("regular", False))
    for onset in onsets:
        f0 = spec["f0"] * jitter * 2 ** rng.normal(0.0, 0.05)
        track = f0 * _contour(spec["contour"], dur)
        k = np.arange(1, spec["harm"] + 1)
        amps = 10 ** (spec["slope"] * np.log2(k) / 20) * 10 ** (rng.normal(0, 2, size=len(k)) / 20)
        tone = harmonic_tone(rng, track, amps)
        tone /= np.sqrt(np.mean(tone**2)) + 1e-12
        if spec.get("noise"):
            tone += spec["noise"] * band_noise(rng, dur, 0.8 * f0, min(7900, 10 * f0))
        if spec.get("am"):
            t = np.arange(dur) / SAMPLE_RATE
            tone *= 0.55 + 0.45 * np.sin(2 * np.pi * spec["am"] * jitter * t)
        ramp = min(int(0.02 * SAMPLE_RATE), dur // 4)
        env = np.ones(dur)
        if ramp:
            env[:ramp] = np.linspace(0, 1, ramp)
            env[-ramp:] = np.linspace(1, 0, ramp)
        end = min(onset + dur, n)
        out[onset:end] += (tone * env)[: end - onset]


def _texture(rng: np.random.Generator, spec: dict, out: np.ndarray, jitter: float) -> None:
    """Band noise (rain, wind, sea waves), optionally amplitude-modulated or gated in bursts, added to ``out``."""
    n = len(out)
    lo, hi = spec["band"]
    shift = 2 ** rng.normal(0.0, 0.1)
    noise = band_noise(rng, n, lo * shift, min(7900.0, hi * shift), spec.get("tilt", 0.0))
    t = np.arange(n) / SAMPLE_RATE
    if spec.get("am"):
        phase = rng.uniform(0, 2 * np.pi)
        noise *= 1 - spec["depth"] * 0.5 * (1 + np.sin(2 * np.pi * spec["am"] * jitter * t + phase))
    if spec.get("bursts"):
        gate = np.zeros(n)
        width = int(spec["burst_dur"] * SAMPLE_RATE)
        for onset in _events(rng, spec["bursts"] * jitter, max(n - width, 1), False):
            gate[onset : onset + width] += np.exp(-np.arange(min(width, n - onset)) / (0.3 * width))
        noise *= gate
    out += noise * spec.get("level", 1.0)


def _clicks(rng: np.random.Generator, spec: dict, out: np.ndarray, jitter: float) -> None:
    """Resonant impulses (knocks, footsteps, clock ticks), alone or in groups, added to ``out``."""
    n = len(out)
    impulses = np.zeros(n)
    onsets = _events(rng, spec["rate"] * jitter, n, spec["regular"])
    if spec.get("groups"):  # knocks come in groups of 2-4 with pauses
        onsets = onsets[(np.arange(len(onsets)) % 5) < rng.integers(2, 5)]
    impulses[onsets] = rng.uniform(0.5, 1.0, size=len(onsets))
    lo, hi = spec["noise_band"]
    burst = band_noise(rng, n, lo, hi) * np.convolve(impulses, np.exp(-np.arange(80) / 20.0))[:n]
    out += resonate(impulses, spec["freq"] * jitter, spec["decay"]) * 30 + burst


def _bell(rng: np.random.Generator, spec: dict, out: np.ndarray, jitter: float) -> None:
    """Decaying inharmonic partials (church bells, breaking glass) at random onsets, added to ``out``."""
    n = len(out)
    ratios = np.array([0.5, 1.0, 1.19, 1.5, 2.0, 2.5, 3.0, 4.2])
    t = np.arange(n) / SAMPLE_RATE
    for onset in _events(rng, spec["rate"] * jitter, n, False):
        f0 = spec["f0"] * jitter * 2 ** rng.normal(0, 0.1)
        decay = spec["decay"] / (1 + 0.5 * np.arange(len(ratios)))
        m = min(n - onset, int(5 * decay[0] * SAMPLE_RATE) + 1)
        amp = np.exp(-t[:m, None] / decay[None, :]).T
        out[onset : onset + m] += harmonic_tone(rng, np.full(m, f0), amp, partial_ratios=ratios)


def _chirp(rng: np.random.Generator, spec: dict, out: np.ndarray, jitter: float) -> None:
    """Rising two-partial chirps (crickets, birds, water drops) at random onsets, added to ``out``."""
    n = len(out)
    dur = int(spec["dur"] * SAMPLE_RATE)
    for onset in _events(rng, spec["rate"] * jitter, n - dur, False):
        f0 = spec["f0"] * jitter * 2 ** rng.normal(0, 0.1)
        track = f0 + spec["span"] * np.linspace(0, 1, dur) ** 2
        chirp = harmonic_tone(rng, track, np.array([1.0, 0.2]))
        if spec.get("am"):
            chirp *= np.sin(np.pi * spec["am"] * np.arange(dur) / SAMPLE_RATE) ** 2
        if spec.get("noise"):
            chirp += spec["noise"] * band_noise(rng, dur, 300, 3000)
        out[onset : onset + dur] += chirp * np.hanning(dur)


_KINDS = {"call": _call, "texture": _texture, "clicks": _clicks, "bell": _bell, "chirp": _chirp}
"""Component kind -> its synthesis, adding to an ``(n,)`` buffer in place."""


def synthesize_clip(
    category: str, rng: np.random.Generator, seconds: float = CLIP_SECONDS, room_kind: str = "simple"
) -> np.ndarray:
    """``(seconds*16000,)`` float64 clip of ``category`` with per-clip variation from ``rng``.

    ``room_kind``: ``"simple"`` (decaying-noise reverb) or ``"pyroomacoustics"`` (image-source shoebox).
    """
    n = int(round(seconds * SAMPLE_RATE))
    _, components = CLASSES[category]
    audio = sum(_component(rng, spec, n) for spec in components)
    audio = apply_room(room_kind, rng, audio, rt60_s=rng.uniform(0.1, 0.8), wet=rng.uniform(0.05, 0.4))
    background = band_noise(rng, n, 30, 7900, tilt_db=rng.uniform(-6, 0)) * 10 ** (rng.uniform(-35, -20) / 20)
    return (audio / (np.sqrt(np.mean(audio**2)) + 1e-12) + background) * rng.uniform(0.05, 0.3)


class SyntheticEnvironmentLibrary(SourceLibrary):
    """Embedded ESC-50-like library: 50 classes x ``5 * clips_per_fold`` clips.

    Args:
        clips_per_fold: clips per class and fold (8 gives ESC-50's 40 clips per class).
        seconds: clip length in seconds (ESC-50: 5 s).
        seed: changes every clip.
        cache_size: clips kept in memory.
        room: ``"simple"`` or ``"pyroomacoustics"`` (image-source shoebox rooms; needs the package).
        cache_dir: optional on-disk cache of synthesised clips (see :class:`SourceLibrary`).
    """

    name = "synthetic_env"

    def __init__(
        self,
        *,
        clips_per_fold: int = CLIPS_PER_FOLD,
        seconds: float = CLIP_SECONDS,
        seed: int = 0,
        cache_size: int = 1024,
        cache_dir: str | Path | None = None,
        room: str = "simple",
    ) -> None:
        check_room(room)
        self.room = room
        if seconds < 1.28:
            raise MemgymError(f"synthetic environmental clips must last >= 1.28 s (one excerpt), got seconds={seconds}")
        self.seconds = seconds
        self.seed = seed
        infos = [
            RecordingInfo(
                recording_id=f"{fold}-{category}-{clip:02d}",
                identity=category,
                split="eval" if fold == 5 else "train",
                family=family,
                source_type="environmental",
                fold=fold,
            )
            for category, (family, _) in CLASSES.items()
            for fold in range(1, 6)
            for clip in range(clips_per_fold)
        ]
        super().__init__(infos, cache_size=cache_size, cache_dir=cache_dir)

    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        rng = np.random.default_rng(stable_seed("clip", self.seed, info.recording_id))
        return synthesize_clip(info.identity, rng, self.seconds, self.room).astype(np.float32)

    def num_samples(self, recording_id: str) -> int:
        self.info(recording_id)
        return int(round(self.seconds * SAMPLE_RATE))

    def fingerprint(self) -> str:
        room = "" if self.room == "simple" else f":{self.room}"
        return f"{self.name}:seed{self.seed}:{self.seconds}:{len(self.all_infos())}{room}"
