"""Serialisable AMemOps stream records.

A stream is fully described by its events (identity, timing, gain, pan, recording and excerpt
start) and a noise seed: :func:`~memgym.datasets.amemops.audio.render_audio` rebuilds the exact
audio from the record and the source library, so a stream set on disk is a JSONL manifest.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.core.episode import Episode
from memgym.core.records import Record, record
from memgym.datasets.amemops.config import GAINS_DB, PANS, PHYSICAL_VALUES

Role = Literal["target", "interferer", "distractor", "query"]


@record("amemops.event")
@dataclasses.dataclass(frozen=True, kw_only=True)
class StreamEvent(Record):
    """One sound placed in a stream.

    Attributes:
        identity: sound class / instrument.
        role: ``target`` (an event of a queried source), ``interferer`` (a similar source in an
            interference history), ``distractor`` or ``query``.
        onset_frame: first 25 Hz frame.
        frames: length in frames (samples = frames * 640).
        gain_db: gain in dB (queries: -3); None on the source events of a stream whose
            ``attribute_values`` is not 4 (symbolic values have no physical gain).
        pan: equal-power pan in [0, 1] (0 left, 1 right; queries: 0.5); None like ``gain_db``.
        recording_id: library recording the excerpt comes from.
        start_sample: excerpt start in the recording (16 kHz samples).
        group: proposal the event belongs to (``""`` for distractors).
        query_id: the task item id for ``role == "query"``, else ``""``.
        gain_index: gain class of a source event without a physical gain (``gain_db`` None), else None.
        pan_index: pan class likewise.
    """

    identity: str
    role: Role
    onset_frame: int
    frames: int
    gain_db: float | None = None
    pan: float | None = None
    recording_id: str
    start_sample: int
    group: str = ""
    query_id: str = ""
    gain_index: int | None = None
    pan_index: int | None = None

    def attribute_class(self, attribute: str) -> int:
        """Class of ``attribute`` (``"gain"``/``"pan"``) of a source event: the stored index, or the
        index of the physical value in :data:`GAINS_DB` / the nearest of :data:`PANS`."""
        if attribute == "gain":
            return self.gain_index if self.gain_index is not None else GAINS_DB.index(self.gain_db)
        if self.pan_index is not None:
            return self.pan_index
        return min(range(len(PANS)), key=lambda k: abs(self.pan - PANS[k]))

    @property
    def end_frame(self) -> int:
        """One past the last frame."""
        return self.onset_frame + self.frames


@record("amemops.stream")
@dataclasses.dataclass(frozen=True, kw_only=True)
class AMemOpsStream(Episode):
    """An AMemOps stream: events in time order plus query task items.

    Task items (``task == "attribute_query"``) are in time order; ``answer`` is the class
    index of the requested attribute (``0..attribute_values-1``, or ``attribute_values`` = none) and ``annotations`` hold ``type``
    (initial/update/interference/absent), ``operation`` (initial/updated/retained/interference/
    absent), ``attribute`` (gain/pan), ``onset_frame``, ``end_frame`` (the query's last frame,
    where the label sits), ``delay_s`` (latest source event end -> query end; None when absent),
    ``identity`` and ``group``.

    Attributes:
        frames: stream length in 25 Hz frames.
        library: fingerprint of the source library.
        split: library split used.
        events: every event, sorted by onset.
        noise_seed: seed of the per-channel white noise.
        noise_db: noise level below the RMS reference.
        rms: recording RMS reference.
        fade_ms: excerpt fade length.
        recordings: recording control applied.
        attribute_values: values per attribute (4: the physical gains/pans; else symbolic only).
    """

    frames: int
    library: str
    split: str
    events: tuple[StreamEvent, ...]
    noise_seed: int
    noise_db: float = 45.0
    rms: float = 0.05
    fade_ms: float = 10.0
    recordings: str = "original"
    attribute_values: int = PHYSICAL_VALUES

    def queries(self) -> list[StreamEvent]:
        """Query events in time order."""
        return [e for e in self.events if e.role == "query"]
