"""Symbolic controls: the same AMemOps streams with unit-vector identities and N-value attributes.

The paper's symbolic controls replace audio by symbols: every source is a unit vector (one-hot
over the library's identities), and gain and pan are two 16-value attributes plus "none". The
stream generator draws the values itself (``StreamConfig.attribute_values = 16`` in
``memgym/configs/amemops_symbolic*.yaml``): initial values uniform over the N classes, an update
changes to one of the other N-1, a retained attribute keeps its value, an interfering source
differs in the queried attribute. This module renders such a stream symbolically, so the event
timeline, query types and operations are exactly those of the generator; class N is "none".

Inputs ``(T, n_identities + 2·N + 3)`` float32 per frame: identity one-hot on event and query
frames, gain one-hot and pan one-hot on event frames, then the query / gain-request / pan-request
flags (as in the audio features). Labels are ``(T,)`` int64: the answer class (0..N-1, N = none)
at each query's last frame for the asked head, -100 elsewhere.
"""

from __future__ import annotations

import numpy as np

from memgym.datasets.amemops.features import query_flags, stream_labels
from memgym.datasets.amemops.records import AMemOpsStream


def symbolic_input_dim(n_identities: int, values: int) -> int:
    """Width of the symbolic input frames for ``values`` classes per attribute."""
    return n_identities + 2 * values + 3


def symbolic_stream(stream: AMemOpsStream, identities: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features (T, D) float32, gain labels (T,) int64, pan labels (T,) int64)`` of ``stream``.

    ``N = stream.attribute_values`` and ``D = symbolic_input_dim(len(identities), N)``.

    Args:
        identities: the identity vocabulary (index = one-hot position); must contain every
            identity of the stream.
    Raises:
        ValueError: an identity of the stream is not in ``identities``, or an answer is not a
            class ``0..N``.
    """
    index = {name: i for i, name in enumerate(identities)}
    values = stream.attribute_values
    n_id = len(identities)
    features = np.zeros((stream.frames, symbolic_input_dim(n_id, values)), dtype=np.float32)
    for event in stream.events:
        if event.identity not in index:
            raise ValueError(f"stream {stream.episode_id}: identity '{event.identity}' is not in the vocabulary")
        span = slice(event.onset_frame, event.end_frame)
        features[span, index[event.identity]] = 1.0
        if event.role != "query":
            features[span, n_id + event.attribute_class("gain")] = 1.0
            features[span, n_id + values + event.attribute_class("pan")] = 1.0
    features[:, n_id + 2 * values :] = query_flags(stream)
    for item in stream.items:
        if not 0 <= int(item.answer) <= values:
            raise ValueError(
                f"stream {stream.episode_id}: answer {item.answer} of {item.item_id} is not a class 0..{values}"
            )
    gain_labels, pan_labels = stream_labels(stream)
    return features, gain_labels, pan_labels
