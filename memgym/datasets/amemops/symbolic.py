"""Symbolic controls: the same AMemOps streams with unit-vector identities and 16-value attributes.

The paper's symbolic controls replace audio by symbols: every source is a unit vector (one-hot
over the library's identities), and gain and pan are two 16-value attributes plus "none". This
module renders a generated :class:`~memgym.datasets.amemops.records.AMemOpsStream` that way, so
the event timeline, query types and operations are exactly those of the audio streams.

Attribute values: each stream maps the generator's four gain (pan) classes injectively onto four
of :data:`SYMBOLIC_VALUES` classes, drawn from the stream's noise seed; across streams every one
of the 16 values occurs. One map per stream and attribute keeps every relation the generator
planned (an update changes the value, a retained attribute keeps it, an interfering source
differs). Class :data:`SYMBOLIC_VALUES` (16) is "none".

Inputs ``(T, n_identities + 2·16 + 3)`` float32 per frame: identity one-hot on event and query
frames, gain one-hot and pan one-hot on event frames, then the query / gain-request / pan-request
flags (as in the audio features). Labels are ``(T,)`` int64, -100 except at query ends.
"""

from __future__ import annotations

import numpy as np

from memgym.datasets.amemops.config import GAINS_DB, IGNORE_INDEX, NONE_INDEX, PANS
from memgym.datasets.amemops.features import query_flags
from memgym.datasets.amemops.records import AMemOpsStream

SYMBOLIC_VALUES = 16
"""Values per symbolic attribute (class 16 = none)."""


def symbolic_input_dim(n_identities: int, values: int = SYMBOLIC_VALUES) -> int:
    """Width of the symbolic input frames."""
    return n_identities + 2 * values + 3


def value_maps(stream: AMemOpsStream, values: int = SYMBOLIC_VALUES) -> tuple[np.ndarray, np.ndarray]:
    """``(gain_map, pan_map)``: ``(5,)`` int64 each, generator class (0-3, 4 = none) -> symbolic class."""
    if values < len(GAINS_DB):
        raise ValueError(f"symbolic attributes need at least {len(GAINS_DB)} values, got {values}")
    rng = np.random.default_rng([stream.noise_seed, 16_016])
    maps = []
    for _ in ("gain", "pan"):
        chosen = rng.choice(values, size=len(GAINS_DB), replace=False)
        maps.append(np.append(chosen, values).astype(np.int64))  # none -> values
    return maps[0], maps[1]


def symbolic_stream(
    stream: AMemOpsStream, identities: list[str], values: int = SYMBOLIC_VALUES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features (T, D) float32, gain labels (T,) int64, pan labels (T,) int64)`` of ``stream``.

    Args:
        identities: the identity vocabulary (index = one-hot position); must contain every
            identity of the stream.
    Raises:
        ValueError: an identity of the stream is not in ``identities``.
    """
    index = {name: i for i, name in enumerate(identities)}
    gain_map, pan_map = value_maps(stream, values)
    n_id = len(identities)
    features = np.zeros((stream.frames, symbolic_input_dim(n_id, values)), dtype=np.float32)
    for event in stream.events:
        if event.identity not in index:
            raise ValueError(f"stream {stream.episode_id}: identity '{event.identity}' is not in the vocabulary")
        span = slice(event.onset_frame, event.end_frame)
        features[span, index[event.identity]] = 1.0
        if event.role != "query":
            gain = gain_map[GAINS_DB.index(event.gain_db)]
            pan = pan_map[int(np.argmin([abs(event.pan - p) for p in PANS]))]
            features[span, n_id + gain] = 1.0
            features[span, n_id + values + pan] = 1.0
    features[:, n_id + 2 * values :] = query_flags(stream)
    gain_labels = np.full(stream.frames, IGNORE_INDEX, dtype=np.int64)
    pan_labels = np.full(stream.frames, IGNORE_INDEX, dtype=np.int64)
    for item in stream.items:
        attribute = item.annotations["attribute"]
        answer = int(item.answer)
        if not 0 <= answer <= NONE_INDEX:
            raise ValueError(f"stream {stream.episode_id}: answer {answer} is not a generator class")
        target, mapping = (gain_labels, gain_map) if attribute == "gain" else (pan_labels, pan_map)
        target[item.annotations["end_frame"]] = mapping[answer]
    return features, gain_labels, pan_labels
