"""Reader of a local VCTK 0.92 folder: speaker metadata, transcripts and voice prompts.

Layout (as distributed)::

    ROOT/speaker-info.txt                          "ID AGE GENDER ACCENTS REGION" table
    ROOT/txt/pNNN/pNNN_XXX.txt                     one transcript per utterance
    ROOT/wav48_silence_trimmed/pNNN/pNNN_XXX_mic1.flac   48 kHz recordings (mic1 used)

The voices it makes (:meth:`VCTKCorpus.voices`) carry a reference recording in
``Voice.speaker_ref`` for voice-prompted TTS models, one fixed VCTK speaker per user.
"""

from __future__ import annotations

import dataclasses
from math import gcd
from pathlib import Path

import numpy as np

from memgym.backends.tts.base import Voice
from memgym.core.errors import MemgymError
from memgym.core.paths import require_folder
from memgym.core.textfiles import read_text


@dataclasses.dataclass(frozen=True)
class VCTKSpeaker:
    """One row of ``speaker-info.txt``."""

    speaker_id: str
    age: int
    gender: str
    accent: str
    region: str


@dataclasses.dataclass(frozen=True)
class VCTKUtterance:
    """One transcript + recording pair."""

    speaker_id: str
    utterance_id: str
    text: str
    audio_path: Path


class VCTKCorpus:
    """A VCTK folder.

    Args:
        root: the folder holding ``speaker-info.txt``, ``txt/`` and ``wav48_silence_trimmed/``.
    Raises:
        MemgymError: a missing part of the layout or an unparsable speaker table.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = require_folder(root, "VCTK folder", "the VCTK 0.92 folder")
        for part in ("speaker-info.txt", "txt", "wav48_silence_trimmed"):
            if not (self.root / part).exists():
                raise MemgymError(f"VCTK folder {self.root} has no {part} (expected the VCTK 0.92 layout)")
        self.speakers = self._read_speakers(self.root / "speaker-info.txt")

    @staticmethod
    def _read_speakers(path: Path) -> dict[str, VCTKSpeaker]:
        speakers: dict[str, VCTKSpeaker] = {}
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            fields = line.split()
            if not fields or fields[0].upper() == "ID":
                continue
            if len(fields) < 4 or not fields[1].isdigit():
                raise MemgymError(f"{path}:{number}: expected 'ID AGE GENDER ACCENT [REGION]', got {line!r}")
            sid = fields[0] if fields[0].startswith(("p", "s")) else f"p{fields[0]}"
            speakers[sid] = VCTKSpeaker(sid, int(fields[1]), fields[2], fields[3], " ".join(fields[4:]))
        if not speakers:
            raise MemgymError(f"{path} lists no speakers")
        return speakers

    def utterances(self, speaker_id: str) -> list[VCTKUtterance]:
        """Utterances of a speaker that have both a transcript and a mic1 recording, sorted by id."""
        if speaker_id not in self.speakers:
            raise MemgymError(f"VCTK folder {self.root}: no speaker '{speaker_id}' in speaker-info.txt")
        out = []
        for txt in sorted((self.root / "txt" / speaker_id).glob("*.txt")):
            audio = self.root / "wav48_silence_trimmed" / speaker_id / f"{txt.stem}_mic1.flac"
            if audio.is_file():
                out.append(VCTKUtterance(speaker_id, txt.stem, read_text(txt).strip(), audio))
        return out

    def load_audio(self, utterance: VCTKUtterance, sample_rate: int = 16000) -> np.ndarray:
        """``(N,) float32`` mono recording resampled to ``sample_rate`` Hz."""
        import soundfile
        from scipy.signal import resample_poly

        try:
            audio, rate = soundfile.read(str(utterance.audio_path), dtype="float32", always_2d=True)
        except Exception as exc:
            raise MemgymError(f"cannot read VCTK recording {utterance.audio_path}: {exc}") from None
        audio = audio.mean(axis=1)
        if rate != sample_rate:
            g = gcd(int(rate), sample_rate)
            audio = resample_poly(audio, sample_rate // g, int(rate) // g).astype(np.float32)
        return audio

    def voices(self, backend: str, limit: int | None = None) -> list[Voice]:
        """One voice per speaker with a usable recording; ``speaker_ref`` = its first mic1 file."""
        out = []
        for sid, speaker in sorted(self.speakers.items()):
            utterances = self.utterances(sid)
            if not utterances:
                continue
            out.append(
                Voice(
                    voice_id=f"vctk-{sid}",
                    backend=backend,
                    name=sid,
                    speaker_ref=str(utterances[0].audio_path),
                    description=f"VCTK {sid}: {speaker.gender}, {speaker.age}, {speaker.accent} {speaker.region}".strip(),
                )
            )
            if limit is not None and len(out) >= limit:
                break
        if not out:
            raise MemgymError(f"VCTK folder {self.root}: no speaker has a *_mic1.flac recording with a transcript")
        return out
