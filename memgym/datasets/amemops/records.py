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
        gain_db: gain in dB (queries: -3).
        pan: equal-power pan in [0, 1] (0 left, 1 right; queries: 0.5).
        recording_id: library recording the excerpt comes from.
        start_sample: excerpt start in the recording (16 kHz samples).
        group: proposal the event belongs to (``""`` for distractors).
        query_id: the task item id for ``role == "query"``, else ``""``.
    """

    identity: str
    role: Role
    onset_frame: int
    frames: int
    gain_db: float
    pan: float
    recording_id: str
    start_sample: int
    group: str = ""
    query_id: str = ""

    @property
    def end_frame(self) -> int:
        """One past the last frame."""
        return self.onset_frame + self.frames


@record("amemops.stream")
@dataclasses.dataclass(frozen=True, kw_only=True)
class AMemOpsStream(Episode):
    """An AMemOps stream: events in time order plus query task items.

    Task items (``task == "attribute_query"``) are in time order; ``answer`` is the class
    index of the requested attribute (0-3, or 4 = none) and ``annotations`` hold ``type``
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

    def queries(self) -> list[StreamEvent]:
        """Query events in time order."""
        return [e for e in self.events if e.role == "query"]
