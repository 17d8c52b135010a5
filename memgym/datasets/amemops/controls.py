"""Recording controls (paper section 2): re-choose recordings while keeping everything else.

Applied to a generated *original* stream, a control changes only ``recording_id`` and
``start_sample`` of events and queries; timing, attributes, answers and the noise seed are
unchanged, so original and control streams are paired.

* ``original`` — unchanged: each occurrence has its own random recording and excerpt start.
* ``fixed`` — every occurrence of a source (events and queries) replays the source's *first*
  recording (the one of its earliest occurrence) from the start.
* ``cycle2`` / ``cycle4`` — occurrence ``i`` of a source uses recording ``pool[i % k]`` from the
  start, where ``pool`` holds the source's distinct recordings in order of occurrence, topped up
  to ``k`` with further recordings of the split in library order (fewer if the source has fewer).
* ``unrestricted`` — the original recordings (all of them), each from the start.
"""

from __future__ import annotations

import dataclasses

from memgym.core.errors import ConfigError
from memgym.datasets.amemops.config import RECORDING_CONTROLS
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.datasets.sources.library import SourceLibrary


def apply_recording_control(stream: AMemOpsStream, control: str, library: SourceLibrary) -> AMemOpsStream:
    """``stream`` with the recordings chosen by ``control`` (see the module docstring)."""
    if control not in RECORDING_CONTROLS:
        raise ConfigError(
            f"recordings='{control}' is not a recording control; expected one of {list(RECORDING_CONTROLS)}"
        )
    if control == "original":
        return stream
    occurrences: dict[str, list[int]] = {}
    for k, event in enumerate(stream.events):  # events are in time order
        occurrences.setdefault(event.identity, []).append(k)
    events = list(stream.events)
    for identity, indices in occurrences.items():
        originals = [stream.events[k].recording_id for k in indices]
        if control == "fixed":
            pool = originals[:1]
        elif control == "unrestricted":
            pool = originals
        else:
            size = int(control.removeprefix("cycle"))
            pool = list(dict.fromkeys(originals))[:size]
            for extra in library.recording_ids(identity, stream.split):
                if len(pool) >= size:
                    break
                if extra not in pool:
                    pool.append(extra)
        for i, k in enumerate(indices):
            events[k] = _replay(events[k], pool[i % len(pool)])
    return dataclasses.replace(stream, events=tuple(events), recordings=control)


def _replay(event: StreamEvent, recording_id: str) -> StreamEvent:
    return dataclasses.replace(event, recording_id=recording_id, start_sample=0)
