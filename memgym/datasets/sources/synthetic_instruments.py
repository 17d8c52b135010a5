"""Embedded synthetic instrument library: three disjoint sets of 53 NSynth-like instruments.

Each instrument has a family-typical timbre (harmonic profile and spectral slope, formants,
inharmonicity, attack/decay envelope, vibrato, breath/bow noise) perturbed by its own seed, so
instruments of one family are related but distinct. Notes cover MIDI pitches 36-84 at velocities
25/50/75/100/127; velocity changes level *and* brightness. Every note recording varies the way
real notes do: random partial phases, a few cents of detuning, onset delay, noise floor and a
small room. Audio is synthesised on demand (deterministic per note id) and cached.

Splits mirror the NSynth sets: Set 1 splits each instrument's (pitch, velocity) notes into
``train`` (~75 %) and ``eval``; Sets 2 and 3 additionally hold out the pitches ≡ 3 (mod 8) as
``calibration`` recordings (disjoint pitches). All three sets share the same family /
source-type list, so they are matched by family, source type and pitch-velocity coverage.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.datasets.sources.library import SAMPLE_RATE, RecordingInfo, SourceLibrary
from memgym.datasets.sources.synthesis import adsr, apply_room, band_noise, check_room, harmonic_tone, stable_seed

FAMILY_LAYOUT: tuple[tuple[str, str, int], ...] = (
    ("bass", "synthetic", 5),
    ("bass", "electronic", 2),
    ("brass", "acoustic", 5),
    ("flute", "acoustic", 4),
    ("flute", "synthetic", 1),
    ("guitar", "acoustic", 4),
    ("guitar", "electronic", 3),
    ("keyboard", "acoustic", 3),
    ("keyboard", "electronic", 3),
    ("keyboard", "synthetic", 2),
    ("mallet", "acoustic", 4),
    ("mallet", "electronic", 1),
    ("organ", "electronic", 5),
    ("reed", "acoustic", 4),
    ("string", "acoustic", 5),
    ("synth_lead", "synthetic", 1),
    ("vocal", "acoustic", 1),
)
"""(family, source type, count) of the 53 instruments in every set."""

PITCHES = tuple(range(36, 85))
VELOCITIES = (25, 50, 75, 100, 127)


@dataclasses.dataclass(frozen=True)
class FamilyTimbre:
    """Family-typical synthesis parameters (per-instrument values are drawn around these)."""

    slope_db_oct: float  # spectral slope of the harmonic series
    n_partials: int
    attack_s: float
    decay_s: float
    sustain: float
    inharmonicity: float = 0.0
    odd_boost_db: float = 0.0
    vibrato_cents: float = 0.0
    noise: float = 0.0  # breath / bow / hammer noise level relative to the tone
    formant_hz: float = 0.0  # 0 = none
    mallet: bool = False  # inharmonic bar modes instead of a harmonic series


FAMILIES: dict[str, FamilyTimbre] = {
    "bass": FamilyTimbre(-9, 24, 0.01, 0.6, 0.35),
    "brass": FamilyTimbre(-4, 30, 0.06, 0.5, 0.8, vibrato_cents=8, noise=0.02, formant_hz=1200),
    "flute": FamilyTimbre(-14, 8, 0.08, 0.8, 0.85, vibrato_cents=15, noise=0.12),
    "guitar": FamilyTimbre(-6, 30, 0.004, 0.45, 0.0, inharmonicity=2e-5),
    "keyboard": FamilyTimbre(-7, 30, 0.003, 0.9, 0.05, inharmonicity=1.5e-4, noise=0.01),
    "mallet": FamilyTimbre(-10, 6, 0.002, 0.25, 0.0, mallet=True),
    "organ": FamilyTimbre(-3, 16, 0.02, 2.0, 1.0),
    "reed": FamilyTimbre(-5, 24, 0.04, 0.6, 0.85, odd_boost_db=9, vibrato_cents=5, noise=0.04),
    "string": FamilyTimbre(-6, 36, 0.12, 0.9, 0.9, vibrato_cents=18, noise=0.05),
    "synth_lead": FamilyTimbre(-3, 40, 0.01, 0.4, 0.7, odd_boost_db=12, vibrato_cents=10),
    "vocal": FamilyTimbre(-8, 30, 0.08, 0.6, 0.8, vibrato_cents=25, noise=0.03, formant_hz=700),
}
MALLET_MODES = np.array([1.0, 3.93, 9.42, 16.7, 25.9, 37.2])


@dataclasses.dataclass(frozen=True)
class Instrument:
    """One synthetic instrument: family timbre plus its own perturbations."""

    name: str
    family: str
    source_type: str
    slope_db_oct: float
    partial_gains_db: tuple[float, ...]
    attack_s: float
    decay_s: float
    sustain: float
    inharmonicity: float
    odd_boost_db: float
    vibrato_cents: float
    vibrato_hz: float
    noise: float
    formant_hz: float
    brightness_per_velocity: float
    mallet: bool


def make_instrument(name: str, family: str, source_type: str, seed: int) -> Instrument:
    """Draw an instrument's parameters around its family's timbre."""
    rng = np.random.default_rng(seed)
    base = FAMILIES[family]
    electronic = source_type != "acoustic"
    return Instrument(
        name=name,
        family=family,
        source_type=source_type,
        slope_db_oct=base.slope_db_oct + rng.uniform(-2.5, 2.5),
        partial_gains_db=tuple(rng.normal(0.0, 5.0, size=base.n_partials)),
        attack_s=base.attack_s * rng.uniform(0.6, 1.6),
        decay_s=base.decay_s * rng.uniform(0.6, 1.6),
        sustain=float(np.clip(base.sustain * rng.uniform(0.7, 1.1), 0.0, 1.0)),
        inharmonicity=0.0 if source_type == "synthetic" else base.inharmonicity * rng.uniform(0.5, 2.0),
        odd_boost_db=base.odd_boost_db + (rng.uniform(0, 8) if source_type == "synthetic" else 0.0),
        vibrato_cents=base.vibrato_cents * rng.uniform(0.5, 1.5),
        vibrato_hz=rng.uniform(4.5, 6.5),
        noise=base.noise * (0.3 if electronic else 1.0) * rng.uniform(0.5, 1.5),
        formant_hz=base.formant_hz * rng.uniform(0.7, 1.4) if base.formant_hz else float(rng.uniform(800, 3500)),
        brightness_per_velocity=rng.uniform(3.0, 8.0),
        mallet=base.mallet,
    )


def synthesize_note(
    instrument: Instrument,
    pitch: int,
    velocity: int,
    seconds: float,
    rng: np.random.Generator,
    room_kind: str = "simple",
) -> np.ndarray:
    """``(round(seconds*16000),)`` float64 note of ``instrument`` with recording variation from ``rng``."""
    n = int(round(seconds * SAMPLE_RATE))
    cents = rng.normal(0.0, 4.0)
    f0 = 440.0 * 2 ** ((pitch - 69 + cents / 100) / 12)
    t = np.arange(n) / SAMPLE_RATE
    vibrato = instrument.vibrato_cents * np.clip(t / 0.3, 0, 1) * np.sin(2 * np.pi * instrument.vibrato_hz * t)
    f0_track = f0 * 2 ** (vibrato / 1200)
    loudness = (velocity / 127.0) ** 1.5
    brightness = instrument.brightness_per_velocity * (velocity / 127.0 - 0.6)  # dB/octave added
    k = np.arange(1, len(instrument.partial_gains_db) + 1, dtype=float)
    gains_db = (instrument.slope_db_oct + brightness) * np.log2(k) + np.asarray(instrument.partial_gains_db)
    gains_db += np.where(k % 2 == 1, instrument.odd_boost_db, 0.0) * (k > 1)
    if instrument.formant_hz:
        gains_db += 6.0 * np.exp(-0.5 * (np.log2(k * f0 / instrument.formant_hz) / 0.5) ** 2)
    amps = 10 ** (gains_db / 20)
    env = adsr(n, instrument.attack_s, instrument.decay_s, instrument.sustain, 0.05)
    if instrument.mallet:
        ratios = MALLET_MODES[: len(amps)]
        decay = instrument.decay_s / (1.0 + np.arange(len(ratios)))
        amp_env = amps[: len(ratios), None] * np.exp(-t[None, :] / decay[:, None]) * np.minimum(t / 0.002, 1)
        tone = harmonic_tone(rng, f0_track, amp_env, partial_ratios=ratios)
    elif instrument.sustain < 0.1:  # plucked / struck: upper partials die faster
        decay = instrument.decay_s / (1.0 + 0.15 * (k - 1))
        amp_env = amps[:, None] * np.exp(-t[None, :] / decay[:, None]) * np.minimum(t / instrument.attack_s, 1)
        tone = harmonic_tone(rng, f0_track, amp_env, inharmonicity=instrument.inharmonicity)
    else:
        tone = harmonic_tone(rng, f0_track, amps, inharmonicity=instrument.inharmonicity) * env
    tone /= np.sqrt(np.mean(tone**2)) + 1e-12
    if instrument.noise:
        breath = band_noise(rng, n, 0.7 * f0, min(7900.0, 12 * f0 + 2000)) * env
        tone = tone + instrument.noise * 3 * breath
    onset = int(rng.uniform(0.0, 0.015) * SAMPLE_RATE)
    audio = np.concatenate([np.zeros(onset), tone[: n - onset]]) * loudness
    audio = apply_room(room_kind, rng, audio, rt60_s=rng.uniform(0.08, 0.5), wet=rng.uniform(0.05, 0.3))
    floor = np.sqrt(np.mean(audio**2)) * 10 ** (rng.uniform(-60, -40) / 20)
    return audio + floor * rng.standard_normal(n)


class SyntheticInstrumentLibrary(SourceLibrary):
    """Embedded NSynth-like library: one of three disjoint sets of 53 synthetic instruments.

    Args:
        instrument_set: 1, 2 or 3 (Sets 2 and 3 have ``calibration`` recordings at pitches
            ≡ 3 mod 8; Set 1 only ``train``/``eval``).
        seconds: note length in seconds (NSynth notes last 4 s; excerpts need at most 1.28 s).
        velocities: MIDI velocities to include.
        pitch_step: keep every ``pitch_step``-th pitch of 36-84 (1 = all 49 pitches).
        eval_fraction: fraction of each instrument's notes that go to ``eval``.
        seed: changes every instrument and note (a different embedded "world").
        cache_size: recordings kept in memory.
        cache_dir: optional on-disk cache of synthesised notes (see :class:`SourceLibrary`).
        room: ``"simple"`` or ``"pyroomacoustics"`` (image-source shoebox rooms; needs the package).
    """

    name = "synthetic_instruments"

    def __init__(
        self,
        instrument_set: int = 1,
        *,
        seconds: float = 1.5,
        velocities: tuple[int, ...] = VELOCITIES,
        pitch_step: int = 1,
        eval_fraction: float = 0.25,
        seed: int = 0,
        cache_size: int = 1024,
        cache_dir: str | Path | None = None,
        room: str = "simple",
    ) -> None:
        check_room(room)
        self.room = room
        if instrument_set not in (1, 2, 3):
            raise MemgymError(f"instrument_set must be 1, 2 or 3, got {instrument_set}")
        if seconds < 1.28:
            raise MemgymError(f"synthetic instrument notes must last >= 1.28 s (one excerpt), got seconds={seconds}")
        self.instrument_set = instrument_set
        self.seconds = seconds
        self.seed = seed
        self.instruments: dict[str, Instrument] = {}
        infos: list[RecordingInfo] = []
        index = 0
        for family, source_type, count in FAMILY_LAYOUT:
            for _ in range(count):
                name = f"{family}_{source_type}_{instrument_set}{index:02d}"
                self.instruments[name] = make_instrument(
                    name, family, source_type, stable_seed("instrument", seed, instrument_set, index)
                )
                index += 1
                for pitch in PITCHES[::pitch_step]:
                    for velocity in velocities:
                        note_id = f"{name}-{pitch:03d}-{velocity:03d}"
                        if instrument_set > 1 and pitch % 8 == 3:
                            split = "calibration"
                        else:
                            u = stable_seed("split", seed, note_id) / 2**63
                            split = "eval" if u < eval_fraction else "train"
                        infos.append(
                            RecordingInfo(
                                recording_id=note_id,
                                identity=name,
                                split=split,
                                family=family,
                                source_type=source_type,
                                pitch=pitch,
                                velocity=velocity,
                                excerpt_start="zero",
                            )
                        )
        super().__init__(infos, cache_size=cache_size, cache_dir=cache_dir)

    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        rng = np.random.default_rng(stable_seed("note", self.seed, info.recording_id))
        instrument = self.instruments[info.identity]
        note = synthesize_note(instrument, int(info.pitch), int(info.velocity), self.seconds, rng, self.room)
        return note.astype(np.float32)

    def num_samples(self, recording_id: str) -> int:
        self.info(recording_id)
        return int(round(self.seconds * SAMPLE_RATE))

    def fingerprint(self) -> str:
        room = "" if self.room == "simple" else f":{self.room}"
        return f"{self.name}:set{self.instrument_set}:seed{self.seed}:{self.seconds}:{len(self.all_infos())}{room}"
