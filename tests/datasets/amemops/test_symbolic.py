"""Symbolic controls: one-hot identities, 16-value attributes that keep the planned relations."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.datasets.amemops.config import GAINS_DB, IGNORE_INDEX, StreamConfig
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.symbolic import SYMBOLIC_VALUES, symbolic_input_dim, symbolic_stream, value_maps
from memgym.datasets.sources.factory import open_library

SMALL = StreamConfig(
    frames=512, n_initial=3, n_update=4, n_interference=0, n_absent=1, distractors=(2,), offset_seconds=(2.0, 8.0)
)


@pytest.fixture(scope="module")
def setup():
    library = open_library("synthetic_env")
    generator = StreamGenerator(SMALL, library)
    return library, [generator.generate(0, i) for i in range(6)]


def test_inputs_and_labels_follow_the_stream(setup):
    library, streams = setup
    identities = library.identities()
    for stream in streams:
        x, gain, pan = symbolic_stream(stream, identities)
        assert x.shape == (512, symbolic_input_dim(len(identities))) and x.dtype == np.float32
        gain_map, pan_map = value_maps(stream)
        for event in stream.events:
            frame = x[event.onset_frame]
            assert frame[identities.index(event.identity)] == 1.0 and frame[: len(identities)].sum() == 1.0
            attrs = frame[len(identities) : len(identities) + 2 * SYMBOLIC_VALUES]
            if event.role == "query":
                assert attrs.sum() == 0 and frame[-3] == 1.0
            else:
                assert attrs[gain_map[GAINS_DB.index(event.gain_db)]] == 1.0 and attrs.sum() == 2.0
        for item in stream.items:
            labels = gain if item.annotations["attribute"] == "gain" else pan
            mapping = gain_map if item.annotations["attribute"] == "gain" else pan_map
            assert labels[item.annotations["end_frame"]] == mapping[item.answer]
        assert (gain != IGNORE_INDEX).sum() + (pan != IGNORE_INDEX).sum() == len(stream.items)


def test_value_maps_are_injective_and_none_is_last(setup):
    _, streams = setup
    seen = set()
    for stream in streams:
        for mapping in value_maps(stream):
            assert len(set(mapping[:4].tolist())) == 4 and mapping[4] == SYMBOLIC_VALUES
            seen.update(mapping[:4].tolist())
    assert len(seen) > 8  # different streams use different values of the 16


def test_unknown_identity_is_named(setup):
    library, streams = setup
    with pytest.raises(ValueError, match="is not in the vocabulary"):
        symbolic_stream(streams[0], library.identities()[:1])
