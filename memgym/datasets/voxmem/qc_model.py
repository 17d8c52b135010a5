"""QC-1 model pass (``qc_model``): a listener checks every evidence session of an item as heard.

The deterministic QC-1 checks look at each rendered turn on its own; this pass asks whether a
listener hears in the assembled history what the item needs. Per user turn of every evidence
session of the item's longest history (as heard: cue spoken, sound mixed):

============================  ==================================================================
check                         ``qc_model=offline`` (the build's recogniser + signal measurements)
============================  ==================================================================
``model_transcript``          the recogniser's transcript has WER <= :data:`MAX_WER` against the
                              turn's script (transcript fidelity)
``model_speaker``             the turn's voice vector (MFCC statistics, standardised over the
                              history's user turns) is nearer the centroid of its speaker's other
                              turns than any other user's centroid (speaker consistency)
``model_cue``                 a cued turn scores its cue above 0 against the median of its
                              speaker's neutral turns in the history
                              (:func:`~memgym.datasets.speech.turn_features.cue_scores`)
``model_sound``               a turn with a background sound has its quietest frames at least
                              :data:`SOUND_MIN_DB` above the median of its speaker's turns
                              without one (cue perceptibility, background)
============================  ==================================================================

With an audio LM (``qc_model=hf_audio:<folder>`` or ``openai:<model>@<url>``, passed to the
builder as a :class:`~memgym.core.protocols.Reasoner`) the same four questions are put to the
model: a transcription (WER as above), "are these two recordings the same person?" (the turn and
another turn of its speaker, yes expected), "does the speaker sound <cue>?" and "can you hear
<sound> in the background?" (yes expected).

A failing session fails its item (``session_model_*``); the builder redraws the item with a new
sub-seed and drops it after ``max_revisions`` redraws. :attr:`ModelQC.log` records every failing
session (item, attempt, session, check, turn and the measured value) for the QC report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.chat import AudioPart, Message, TextPart
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.speech.intelligibility import word_errors
from memgym.datasets.speech.turn_features import cue_scores, measure_turn
from memgym.datasets.voxmem.audio_files import SAMPLE_RATE, read_turn_audio
from memgym.datasets.voxmem.records import Session, Turn

MAX_WER = 0.5
"""Highest word error rate of an evidence turn's transcript."""
SOUND_MIN_DB = 6.0
"""How far (dB) a turn's quietest frames must rise above its speaker's clean turns when a sound is mixed."""
CHECKS = ("model_transcript", "model_speaker", "model_cue", "model_sound")


@dataclasses.dataclass(frozen=True)
class Finding:
    """One failed check of one evidence turn: the check, the turn's audio and what was measured."""

    session: str
    check: str
    audio: str
    detail: str


class ModelQC:
    """The QC-1 model pass of the module docstring.

    Args:
        root: dataset folder (turn audio paths are relative to it).
        transcribe: ``audio path -> transcript`` (the intelligibility gate's cached recogniser);
            needed offline, unused with a model.
        model: an audio LM answering the checks; None = offline measurements.
    """

    def __init__(self, root: Path, transcribe=None, model: Reasoner | None = None) -> None:
        if model is None and transcribe is None:
            raise ConfigError("qc_model=offline needs the build's recogniser: set asr.kind (not none)")
        self.root = Path(root)
        self.transcribe = transcribe
        self.model = model
        self.log: list[dict[str, Any]] = []
        self._measures: dict[str, dict] = {}

    # ----- measurements ------------------------------------------------------------------------------
    def audio(self, turn: Turn) -> np.ndarray:
        return read_turn_audio(self.root / turn.audio)

    def measure(self, turn: Turn) -> dict:
        """Signal measurements of a user turn (cached per audio file), with ``rate`` from its script."""
        if turn.audio not in self._measures:
            measure = dict(measure_turn(self.audio(turn)))
            measure["rate"] = len(turn.text.split()) / max(float(measure["active_s"]), 0.1)
            self._measures[turn.audio] = measure
        return self._measures[turn.audio]

    # ----- checks --------------------------------------------------------------------------------------
    def findings(self, sessions: Sequence[Session]) -> list[Finding]:
        """Failed checks of the evidence turns of a history (``sessions`` in history order)."""
        users = [t for s in sessions for t in s.turns if t.role == "user" and t.audio]
        out: list[Finding] = []
        for session in sessions:
            if session.role != "evidence":
                continue
            for turn in (t for t in session.turns if t.role == "user" and t.audio):
                check = self._ask if self.model is not None else self._measure_checks
                out += [Finding(session.session_id, name, turn.audio, detail) for name, detail in check(turn, users)]
        return out

    def failures(self, sessions: Sequence[Session], item: str = "", attempt: int = 0) -> dict[str, list[str]]:
        """session id -> failed checks (only failing evidence sessions); each finding is logged."""
        out: dict[str, list[str]] = {}
        for finding in self.findings(sessions):
            out.setdefault(finding.session, [])
            if finding.check not in out[finding.session]:
                out[finding.session].append(finding.check)
            self.log.append({"item": item, "attempt": attempt, **dataclasses.asdict(finding)})
        return out

    def _measure_checks(self, turn: Turn, users: Sequence[Turn]) -> list[tuple[str, str]]:
        failed = []
        errors, words = word_errors(turn.text, self.transcribe(turn.audio))
        if words and errors / words > MAX_WER:
            failed.append(("model_transcript", f"WER {errors / words:.2f}"))
        nearest = self._nearest_speaker(turn, users)
        if nearest is not None and nearest != turn.user:
            failed.append(("model_speaker", f"voice nearest {nearest}"))
        same = [t for t in users if t.user == turn.user and t.audio != turn.audio]
        plain = [self.measure(t) for t in same if t.cue == "neutral"]
        if turn.cue != "neutral" and plain:
            typical = {
                k: float(np.nanmedian([m[k] for m in plain])) for k in ("rate", "f0_hz", "pause", "prominence_db")
            }
            score = cue_scores(self.measure(turn), typical, turn.text)[CUE_WORDS[turn.cue]]
            if not score > 0:
                failed.append(("model_cue", f"{CUE_WORDS[turn.cue]} score {score:.2f}"))
        clean = [self.measure(t)["background_db"] for t in same if not t.sound]
        if turn.sound and clean:
            rise = self.measure(turn)["background_db"] - float(np.median(clean))
            if rise < SOUND_MIN_DB:
                failed.append(("model_sound", f"background +{rise:.1f} dB"))
        return failed

    def _nearest_speaker(self, turn: Turn, users: Sequence[Turn]) -> str | None:
        """The user whose other turns' mean voice is nearest ``turn``'s (None with one user)."""
        speakers = sorted({t.user for t in users})
        if len(speakers) < 2:
            return None
        voices = np.asarray([self.measure(t)["voice"] for t in users], np.float64)
        voices = (voices - voices.mean(axis=0)) / (voices.std(axis=0) + 1e-9)
        own = voices[[t.audio == turn.audio for t in users].index(True)]
        distances = {}
        for speaker in speakers:
            rows = [i for i, t in enumerate(users) if t.user == speaker and t.audio != turn.audio]
            if rows:
                distances[speaker] = float(np.linalg.norm(voices[rows].mean(axis=0) - own))
        return min(distances, key=lambda s: (distances[s], s)) if distances else None

    def _ask(self, turn: Turn, users: Sequence[Turn]) -> list[tuple[str, str]]:
        clip = AudioPart(self.audio(turn), SAMPLE_RATE)
        failed = []
        heard = self._reply([clip, TextPart("Transcribe this recording word for word.")], 96)
        errors, words = word_errors(turn.text, heard)
        if words and errors / words > MAX_WER:
            failed.append(("model_transcript", f"WER {errors / words:.2f}"))
        other = next((t for t in users if t.user == turn.user and t.audio != turn.audio), None)
        if other is not None:
            parts = [clip, AudioPart(self.audio(other), SAMPLE_RATE),
                     TextPart("Are these two recordings spoken by the same person? Answer yes or no.")]  # fmt: skip
            if not _yes(self._reply(parts, 4)):
                failed.append(("model_speaker", "model: not the same person"))
        if turn.cue != "neutral":
            question = f"Does the speaker sound {CUE_WORDS[turn.cue]}? Answer yes or no."
            if not _yes(self._reply([clip, TextPart(question)], 4)):
                failed.append(("model_cue", f"model: not {CUE_WORDS[turn.cue]}"))
        if turn.sound:
            label = turn.sound.replace("_", " ")
            if not _yes(self._reply([clip, TextPart(f"Can you hear {label} in the background? Answer yes or no.")], 4)):
                failed.append(("model_sound", f"model: no {label}"))
        return failed

    def _reply(self, parts: list, max_new_tokens: int) -> str:
        return self.model.generate([Message("user", tuple(parts))], max_new_tokens=max_new_tokens)


def _yes(reply: str) -> bool:
    words = reply.strip().lower().replace(".", " ").replace(",", " ").split()
    return bool(words) and words[0] == "yes"


def report_section(log: Sequence[dict[str, Any]], spec: str) -> dict[str, Any]:
    """The QC report's ``model_qc`` entry: the listener, failures per check and every finding."""
    per_check = {name: sum(1 for f in log if f["check"] == name) for name in CHECKS}
    return {"model": spec, "failed_turns_per_check": per_check, "findings": list(log)}
