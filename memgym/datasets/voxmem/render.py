"""Rendering user turns to audio with content-hashed caching.

A user turn is ``(voice, words, cue, sound)``. Its audio file is named by the SHA-256 of
everything that determines it (rendering version, TTS engine identity, the voice record, words,
cue, sound class, SNR, sound-library fingerprint, sample rate), so re-generating a dataset reuses every file it
already has, and identical turns in different items share one file. Each rendered turn writes::

    audio/ab/<key>.flac        the turn as heard (cue spoken, sound mixed at the SNR)
    audio/ab/<key>.plain.flac  the paired rendition: same words and voice, cue and sound removed
    audio/ab/<key>.json        duration, achieved SNR, cue feature delta, clipped fraction (for QC)

Every turn starts with :data:`LEAD_SILENCE_S` of silence before its speech (the sound, if any, is
mixed over it too): Whisper mis-hears the first words of a clip whose speech starts at once, and
eSpeak leaves 0-0.1 s (measured in docs/voxmem.md#intelligibility).

Audio is 16 kHz mono 16-bit FLAC. Turns longer than :data:`MAX_USER_TURN_S` are shortened by
dropping trailing words until they fit (the stored words are the spoken ones).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np

from memgym.backends.tts.base import TTSBackend, Voice
from memgym.core.errors import MemgymError
from memgym.datasets.speech.acoustics import clipped_fraction
from memgym.datasets.speech.cues import cue_feature_delta, render_cue_pair
from memgym.datasets.speech.mixing import SoundClipSource, mix_at_snr
from memgym.datasets.voxmem.records import Turn

MAX_USER_TURN_S = 30.0
"""Longest allowed user turn in seconds."""
LEAD_SILENCE_S = 0.5
"""Default silence (seconds) before the speech of every rendered turn."""
RENDERING = 3
"""Version of how a turn becomes audio (cue styles, mixing, engine seeding); part of every cache key,
so files rendered by earlier code are never reused. 2: fast cue at x1.35, eSpeak noise re-seeded;
3: silence before the speech (its length is part of the key)."""


@dataclasses.dataclass(frozen=True)
class RenderedTurn:
    """The rendered turn's words, files and measurements."""

    text: str
    audio: str
    plain_audio: str
    duration_s: float
    snr_db: float | None
    cue_delta: float | None
    clipped: float


class TurnRenderer:
    """Renders and caches user turns under ``root/audio``.

    Args:
        root: dataset folder (paths in turns are relative to it).
        backend: TTS backend.
        sounds: sound-clip source (``(class, rng) -> (N,) float32`` at ``backend.sample_rate``).
        sound_fingerprint: identity of the sound library (part of cache keys).
        snr_db: SNR of environmental sound under speech, measured on the speech's active region.
        lead_s: silence before the speech of every turn (seconds).
    """

    def __init__(
        self,
        root: Path,
        backend: TTSBackend,
        sounds: SoundClipSource | None,
        sound_fingerprint: str,
        snr_db: float,
        lead_s: float = LEAD_SILENCE_S,
    ) -> None:
        self.root = Path(root)
        self.backend = backend
        self.sounds = sounds
        self.sound_fingerprint = sound_fingerprint
        self.snr_db = float(snr_db)
        if lead_s < 0:
            raise MemgymError(f"lead silence must be >= 0 seconds, got {lead_s}")
        self.lead_s = float(lead_s)
        self.synthesized_s = 0.0
        self.reused = 0
        self.rendered = 0

    def key(self, voice: Voice, text: str, cue: str, sound: str) -> str:
        """Content hash naming the turn's files."""
        spec = {
            "rendering": RENDERING,
            "tts": self.backend.identity(),
            "sr": self.backend.sample_rate,
            "voice": voice.to_dict(),
            "text": text,
            "cue": cue,
            "sound": sound,
            "snr": self.snr_db if sound else None,
            "library": self.sound_fingerprint if sound else None,
            "lead_s": self.lead_s,
        }
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:32]

    def render(self, voice: Voice, text: str, cue: str = "neutral", sound: str = "") -> RenderedTurn:
        """Render (or reuse) one user turn."""
        words = text.split()
        while True:
            result = self._render_once(voice, " ".join(words), cue, sound)
            if result.duration_s <= MAX_USER_TURN_S:
                return result
            keep = max(1, int(len(words) * MAX_USER_TURN_S / result.duration_s * 0.95))
            if keep >= len(words):
                keep = len(words) - 1
            if keep < 1:
                raise MemgymError(f"user turn {text[:40]!r} cannot be spoken within {MAX_USER_TURN_S} s")
            words = words[:keep]
            words[-1] = words[-1].rstrip(",;:") + ("" if words[-1].endswith((".", "?", "!")) else ".")

    def _render_once(self, voice: Voice, text: str, cue: str, sound: str) -> RenderedTurn:
        import soundfile

        key = self.key(voice, text, cue, sound)
        folder = self.root / "audio" / key[:2]
        rel = f"audio/{key[:2]}/{key}"
        meta_path = folder / f"{key}.json"
        if meta_path.is_file() and (folder / f"{key}.flac").is_file():
            meta = json.loads(meta_path.read_text())
            self.reused += 1
            return RenderedTurn(
                text,
                f"{rel}.flac",
                meta["plain_audio"],
                meta["duration_s"],
                meta["snr_db"],
                meta["cue_delta"],
                meta["clipped"],
            )
        rng = np.random.default_rng(int(key[:16], 16))
        rate = self.backend.sample_rate
        pair = render_cue_pair(self.backend, voice, text, cue, rng)
        lead = np.zeros(int(round(self.lead_s * rate)), dtype=np.float32)
        cued, plain = np.concatenate([lead, pair.cued]), np.concatenate([lead, pair.plain])
        heard, snr = cued, None
        if sound:
            if self.sounds is None:
                raise MemgymError(f"turn needs environmental sound '{sound}' but no sound library is configured")
            mix = mix_at_snr(cued, self.sounds(sound, rng), rate, self.snr_db, rng)
            heard, snr = mix.mixture, mix.snr_db
        delta = cue_feature_delta(cue, cued, plain, rate)["delta"] if cue != "neutral" else None
        folder.mkdir(parents=True, exist_ok=True)
        soundfile.write(str(folder / f"{key}.flac"), heard, rate, subtype="PCM_16")
        plain_rel = ""
        if cue != "neutral" or sound:
            soundfile.write(str(folder / f"{key}.plain.flac"), plain, rate, subtype="PCM_16")
            plain_rel = f"{rel}.plain.flac"
        duration = len(heard) / rate
        clipped = clipped_fraction(heard)
        meta = {"plain_audio": plain_rel, "duration_s": duration, "snr_db": snr, "cue_delta": delta, "clipped": clipped}
        tmp = meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta))
        tmp.replace(meta_path)
        self.rendered += 1
        self.synthesized_s += duration
        return RenderedTurn(text, f"{rel}.flac", plain_rel, duration, snr, delta, clipped)

    def turn(self, voice: Voice, user: str, text: str, cue: str = "neutral", sound: str = "") -> Turn:
        """A rendered user :class:`Turn`."""
        r = self.render(voice, text, cue, sound)
        return Turn(
            role="user",
            text=r.text,
            user=user,
            cue=cue,
            sound=sound,
            audio=r.audio,
            plain_audio=r.plain_audio,
            duration_s=r.duration_s,
            snr_db=r.snr_db,
            cue_delta=r.cue_delta,
            clipped=r.clipped,
        )


def library_clip_source(library, split: str = "train") -> SoundClipSource:
    """A :data:`SoundClipSource` drawing one recording of a class from a shared ``SourceLibrary``."""

    def clip(sound_class: str, rng: np.random.Generator) -> np.ndarray:
        ids = library.recording_ids(sound_class, split)
        if not ids:
            raise MemgymError(f"sound library has no '{split}' recordings of class '{sound_class}'")
        return np.asarray(library.load(ids[int(rng.integers(len(ids)))]), dtype=np.float32)

    return clip
