import pytest
import torch

from memgym.core.errors import ConfigError
from memgym.datasets.amemops.config import IGNORE_INDEX, StreamConfig
from memgym.datasets.amemops.sampler import StreamDataset, make_loader
from memgym.datasets.sources.similarity import SimilarityPools


def test_batches_deterministic_across_workers_and_cache(tones, tmp_path):
    config = StreamConfig(distractors=(4,))
    SimilarityPools(tones, recordings_per_identity=1)
    plain = next(iter(make_loader(config, batch_size=3, steps=1, library=tones)))
    assert plain["features"].shape == (3, 2048, 131) and plain["features"].dtype == torch.float32
    assert plain["gain_labels"].shape == (3, 2048) and plain["gain_labels"].dtype == torch.int64
    q = len(plain["query_frame"])
    assert q == sum(len(x) for x in plain["queries"])
    for key in ("query_stream", "query_head", "query_answer", "query_type"):
        assert plain[key].shape == (q,)
    labels = torch.where(
        plain["query_head"] == 0,
        plain["gain_labels"][plain["query_stream"], plain["query_frame"]],
        plain["pan_labels"][plain["query_stream"], plain["query_frame"]],
    )
    assert torch.equal(labels, plain["query_answer"])
    assert int((plain["gain_labels"] != IGNORE_INDEX).sum() + (plain["pan_labels"] != IGNORE_INDEX).sum()) == q
    workers = next(iter(make_loader(config, batch_size=3, steps=1, library=tones, num_workers=2)))
    for key in ("features", "gain_labels", "pan_labels", "query_answer"):
        assert torch.equal(plain[key], workers[key])
    cached = StreamDataset(config, library=tones, cache_dir=tmp_path)
    first = cached[1]
    again = StreamDataset(config, library=tones, cache_dir=tmp_path)[1]
    assert len(list(tmp_path.rglob("*.npz"))) == 1
    assert torch.equal(first["features"], plain["features"][1]) and torch.equal(again["features"], first["features"])
    assert again["queries"] == plain["queries"][1]
    resumed = next(iter(make_loader(config, batch_size=1, steps=1, start_step=2, library=tones)))
    assert torch.equal(resumed["features"][0], plain["features"][2])


def test_dataset_pickles_for_spawned_workers(tones):
    import pickle

    dataset = StreamDataset(StreamConfig(distractors=(4,)), library=tones)
    first = dataset[0]
    clone = pickle.loads(pickle.dumps(dataset))
    assert clone._library.fingerprint() == tones.fingerprint() and not clone._library._cache
    assert torch.equal(clone[0]["features"], first["features"])


def test_audio_sampler_refuses_symbolic_values(tones):
    with pytest.raises(ConfigError, match=r"StreamConfig.attribute_values=16: audio streams need 4 values"):
        StreamDataset(StreamConfig(attribute_values=16), library=tones)
