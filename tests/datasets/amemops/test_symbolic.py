"""Symbolic controls: one-hot identities and the generator's 16-value attributes."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.datasets.amemops.config import IGNORE_INDEX, StreamConfig
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.symbolic import symbolic_input_dim, symbolic_stream
from memgym.datasets.sources.factory import open_library

SMALL = StreamConfig(
    frames=512,
    n_initial=3,
    n_update=4,
    n_interference=0,
    n_absent=1,
    distractors=(2,),
    offset_seconds=(2.0, 8.0),
    attribute_values=16,
)


@pytest.fixture(scope="module")
def setup():
    library = open_library("synthetic_env")
    generator = StreamGenerator(SMALL, library)
    return library, [generator.generate(0, i) for i in range(6)]


def test_inputs_and_labels_follow_the_stream(setup):
    library, streams = setup
    identities = library.identities()
    n_id = len(identities)
    answers = []
    for stream in streams:
        x, gain, pan = symbolic_stream(stream, identities)
        assert x.shape == (512, symbolic_input_dim(n_id, 16)) == (512, n_id + 35) and x.dtype == np.float32
        for event in stream.events:
            frame = x[event.onset_frame]
            assert frame[identities.index(event.identity)] == 1.0 and frame[:n_id].sum() == 1.0
            gains, pans = frame[n_id : n_id + 16], frame[n_id + 16 : n_id + 32]
            if event.role == "query":
                assert gains.sum() == pans.sum() == 0 and frame[-3] == 1.0
            else:
                assert gains.sum() == pans.sum() == 1.0
                assert gains[event.attribute_class("gain")] == 1.0 and pans[event.attribute_class("pan")] == 1.0
        for item in stream.items:
            labels = gain if item.annotations["attribute"] == "gain" else pan
            assert labels[item.annotations["end_frame"]] == item.answer
            assert item.answer == 16 if item.annotations["type"] == "absent" else 0 <= item.answer < 16
            answers.append(item.answer)
        assert (gain != IGNORE_INDEX).sum() + (pan != IGNORE_INDEX).sum() == len(stream.items)
    assert 16 in answers and len(set(answers)) > 5


def test_unknown_identity_is_named(setup):
    library, streams = setup
    with pytest.raises(ValueError, match="is not in the vocabulary"):
        symbolic_stream(streams[0], library.identities()[:1])
