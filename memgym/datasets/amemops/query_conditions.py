"""Per-query conditions of an AMemOps stream that the paper's analyses split or filter by.

* :func:`pitch_differences`: how far (in semitones) a query's recording is from the recording
  of the source's latest earlier event, the one that carries the answer (Fig. 2a).
"""

from __future__ import annotations

from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.sources.library import SourceLibrary


def pitch_differences(stream: AMemOpsStream, library: SourceLibrary) -> dict[str, int | None]:
    """``{query item id: |pitch(query recording) - pitch(latest earlier event's recording)|}``
    in semitones (MIDI pitches). ``None`` when the source has no earlier event (absent sources)
    or a recording has no pitch (environmental sounds)."""
    out: dict[str, int | None] = {}
    events = sorted((e for e in stream.events if e.role != "query"), key=lambda e: e.onset_frame)
    for query in stream.queries():
        earlier = [e for e in events if e.identity == query.identity and e.onset_frame < query.onset_frame]
        pitches = (
            (library.info(query.recording_id).pitch, library.info(earlier[-1].recording_id).pitch)
            if earlier
            else (None, None)
        )
        out[query.query_id] = None if None in pitches else abs(int(pitches[0]) - int(pitches[1]))
    return out
