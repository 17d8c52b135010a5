"""Per-query conditions of an AMemOps stream that the paper's analyses split or filter by.

* :func:`pitch_differences`: how far (in semitones) a query's recording is from the recording
  of the source's latest earlier event, the one that carries the answer (Fig. 2a).
* :func:`intervening_events` / :func:`intervening_writes`: which (how many) other sources' events lie between the queried source's last
  event and the query (what an additive memory must see past; ``StreamConfig.gap_distractors``).
* :class:`AudioMatches`: whether a query's audio matches training audio, and whether a stream
  holds duplicate notes, by the first-second waveform cosine (> 0.9999 in the paper).
"""

from __future__ import annotations

import numpy as np

from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.datasets.sources.library import SourceLibrary

MATCH_COSINE = 0.9999
"""First-second waveform cosine above which two recordings count as the same audio."""
MATCH_SAMPLES = 16_000
"""The compared span: the first second at 16 kHz."""


def _earlier_events(stream: AMemOpsStream) -> dict[str, list[StreamEvent]]:
    """Per query item id: the non-query events of the queried source before the query, in time order."""
    events = sorted((e for e in stream.events if e.role != "query"), key=lambda e: e.onset_frame)
    return {
        q.query_id: [e for e in events if e.identity == q.identity and e.onset_frame < q.onset_frame]
        for q in stream.queries()
    }


def intervening_events(stream: AMemOpsStream) -> dict[str, list[StreamEvent] | None]:
    """``{query event id: other sources' events (queries not counted) with onsets after the queried
    source's last earlier event's onset and before the query}``; ``None`` for a source with no
    earlier event (absent sources)."""
    writes = [e for e in stream.events if e.role != "query"]
    earlier = _earlier_events(stream)
    out: dict[str, list[StreamEvent] | None] = {}
    for query in stream.queries():
        before = earlier[query.query_id]
        out[query.query_id] = (
            [
                e
                for e in writes
                if before[-1].onset_frame < e.onset_frame < query.onset_frame and e.identity != query.identity
            ]
            if before
            else None
        )
    return out


def intervening_writes(stream: AMemOpsStream) -> dict[str, int | None]:
    """``{query event id: how many}`` of :func:`intervening_events`."""
    return {q: None if events is None else len(events) for q, events in intervening_events(stream).items()}


def pitch_differences(stream: AMemOpsStream, library: SourceLibrary) -> dict[str, int | None]:
    """``{query item id: |pitch(query recording) - pitch(latest earlier event's recording)|}``
    in semitones (MIDI pitches). ``None`` when the source has no earlier event (absent sources)
    or a recording has no pitch (environmental sounds)."""
    earlier = _earlier_events(stream)
    out: dict[str, int | None] = {}
    for query in stream.queries():
        before = earlier[query.query_id]
        pitches = (
            (library.info(query.recording_id).pitch, library.info(before[-1].recording_id).pitch)
            if before
            else (None, None)
        )
        out[query.query_id] = None if None in pitches else abs(int(pitches[0]) - int(pitches[1]))
    return out


class AudioMatches:
    """Waveform matches within ``library`` (first-second cosine > :data:`MATCH_COSINE`), cached
    per recording.

    A recording *matches training audio* when a ``train``-split recording of the same identity
    and pitch (any, for recordings without pitch) matches it; a recording never matches itself.
    """

    def __init__(self, library: SourceLibrary) -> None:
        self.library = library
        self._heads: dict[str, np.ndarray] = {}
        self._training: dict[str, bool] = {}

    def head(self, recording_id: str) -> np.ndarray:
        """The unit-norm first second of a recording (zero-padded; zeros for silence)."""
        if recording_id not in self._heads:
            audio = np.zeros(MATCH_SAMPLES, dtype=np.float64)
            clip = self.library.load(recording_id)[:MATCH_SAMPLES]
            audio[: len(clip)] = clip
            norm = np.linalg.norm(audio)
            self._heads[recording_id] = audio / norm if norm > 0 else audio
        return self._heads[recording_id]

    def same_audio(self, a: str, b: str) -> bool:
        return float(self.head(a) @ self.head(b)) > MATCH_COSINE

    def matches_training(self, recording_id: str) -> bool:
        if recording_id not in self._training:
            info = self.library.info(recording_id)
            candidates = [
                other.recording_id
                for other in self.library.recording_infos(info.identity, "train")
                if other.pitch == info.pitch and other.recording_id != recording_id
            ]
            self._training[recording_id] = any(self.same_audio(recording_id, c) for c in candidates)
        return self._training[recording_id]

    def training_matches(self, stream: AMemOpsStream) -> dict[str, bool]:
        """Per query item id: its own recording or an earlier recording of the same source
        matches training audio (the paper's exclusion, Table 3 text)."""
        earlier = _earlier_events(stream)
        return {
            q.query_id: any(self.matches_training(e.recording_id) for e in (q, *earlier[q.query_id]))
            for q in stream.queries()
        }

    def has_duplicate_notes(self, stream: AMemOpsStream) -> bool:
        """Two different recordings in the stream (queries included) carry the same audio."""
        heads = np.stack([self.head(r) for r in sorted({e.recording_id for e in stream.events})])
        cosines = heads @ heads.T
        np.fill_diagonal(cosines, 0.0)
        return bool(np.any(cosines > MATCH_COSINE))
