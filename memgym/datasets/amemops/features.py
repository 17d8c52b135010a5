"""Model inputs and labels of a stream (paper section 2).

Features: ``(T, 131)`` float32 per 25 Hz frame —

* columns 0-63: left-channel log-mel, 64-127: right-channel log-mel
  (:func:`memgym.sensors.log_mel.log_mel`: 1,024 Hann, hop 640, 50-7,800 Hz, causal framing);
* column 128: query flag (1 on the 12 frames of every query);
* column 129: gain-request flag (1 on the frames of queries asking gain);
* column 130: pan-request flag (1 on the frames of queries asking pan).

Labels: two ``(T,)`` int64 arrays for the gain and pan heads. At the *last frame* of a query the
requested head's label is the answer class (0-3, or :data:`NONE_INDEX` = 4 for an absent
source; ``0..N-1`` and ``N`` for a stream with ``attribute_values = N``); every other position —
including the head not asked — is :data:`IGNORE_INDEX` (-100).
"""

from __future__ import annotations

import numpy as np

from memgym.datasets.amemops.config import IGNORE_INDEX
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.sensors.log_mel import N_MELS, log_mel

N_FEATURES = 2 * N_MELS + 3


def query_flags(stream: AMemOpsStream) -> np.ndarray:
    """``(T, 3)`` float32 query / gain-request / pan-request flags."""
    flags = np.zeros((stream.frames, 3), dtype=np.float32)
    for item in stream.items:
        onset, last = item.annotations["onset_frame"], item.annotations["end_frame"]
        flags[onset : last + 1, 0] = 1.0
        flags[onset : last + 1, 1 if item.annotations["attribute"] == "gain" else 2] = 1.0
    return flags


def stream_features(stream: AMemOpsStream, audio: np.ndarray) -> np.ndarray:
    """``(T, 131)`` float32 features of ``stream`` from its ``(2, T*640)`` audio."""
    mel = log_mel(audio).numpy()
    return np.concatenate([mel, query_flags(stream)], axis=1)


def stream_labels(stream: AMemOpsStream) -> tuple[np.ndarray, np.ndarray]:
    """``(gain, pan)`` labels, each ``(T,)`` int64 (see the module docstring)."""
    gain = np.full(stream.frames, IGNORE_INDEX, dtype=np.int64)
    pan = np.full(stream.frames, IGNORE_INDEX, dtype=np.int64)
    for item in stream.items:
        target = gain if item.annotations["attribute"] == "gain" else pan
        target[item.annotations["end_frame"]] = int(item.answer)
    return gain, pan
