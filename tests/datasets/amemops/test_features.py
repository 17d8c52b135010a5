import numpy as np

from memgym.datasets.amemops.audio import render_audio
from memgym.datasets.amemops.config import IGNORE_INDEX, StreamConfig
from memgym.datasets.amemops.features import N_FEATURES, stream_features, stream_labels
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.sources.similarity import SimilarityPools
from memgym.sensors.log_mel import log_mel


def test_features_flags_and_labels(tones):
    stream = StreamGenerator(StreamConfig(), tones, SimilarityPools(tones, recordings_per_identity=1)).generate(0, 0)
    audio = render_audio(stream, tones)
    features = stream_features(stream, audio)
    assert features.shape == (2048, N_FEATURES) == (2048, 131) and features.dtype == np.float32
    np.testing.assert_array_equal(features[:, :128], log_mel(audio).numpy())
    gain, pan = stream_labels(stream)
    assert gain.dtype == pan.dtype == np.int64
    expected_query = np.zeros(2048)
    for item in stream.items:
        a = item.annotations
        frames = slice(a["onset_frame"], a["end_frame"] + 1)
        expected_query[frames] = 1
        asked = a["attribute"] == "gain"
        assert (features[frames, 129] == asked).all() and (features[frames, 130] == (not asked)).all()
        head, other = (gain, pan) if asked else (pan, gain)
        assert head[a["end_frame"]] == item.answer and other[a["end_frame"]] == IGNORE_INDEX
    np.testing.assert_array_equal(features[:, 128], expected_query)
    assert (features[:, 129] + features[:, 130] == features[:, 128]).all()
    assert (gain != IGNORE_INDEX).sum() + (pan != IGNORE_INDEX).sum() == len(stream.items)
