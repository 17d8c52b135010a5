"""Fresh audio training streams (``data.pool=0``, ``preset=cpu-audio-fresh``): every batch a function
of (seed, step), equal to the reference renderer and front end, the clip cache memory-only, and
the other presets' settings untouched."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from memgym.core.config import load_config
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.audio import render_audio
from memgym.datasets.amemops.features import stream_features, stream_labels
from memgym.datasets.sources.factory import open_library
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig
from memgym.pipelines.amemops.presets import CPU_AUDIO_FRESH_STEPS, PRESETS, apply_preset
from memgym.pipelines.amemops.streams import StreamBatches, StreamTensors

AUDIO = (
    "data.stream.library.kind=tones",
    "data.stream.frames=160",
    "data.stream.n_initial=2",
    "data.stream.n_update=2",
    "data.stream.n_interference=0",
    "data.stream.n_absent=0",
    "data.stream.distractors=[0]",
    "data.stream.excerpt_frames=[6,10]",
    "data.stream.offset_seconds=[0.5,1]",
    "data.stream.query_offset_seconds=[0.5,1]",
)
"""Short audio streams of the fast tones library (a few milliseconds each)."""


def _batches(*overrides: str, seed: int = 0, batch_size: int = 2) -> StreamBatches:
    config = load_config(AMemOpsTrainConfig, overrides=(*AUDIO, "data.pool=0", *overrides))
    return StreamBatches(StreamTensors(config.data), batch_size, seed)


def _equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return all(torch.equal(a[k], b[k]) for k in ("features", "gain_labels", "pan_labels"))


def test_fresh_batches_are_a_function_of_seed_and_step():
    first, again, other_seed = _batches(), _batches(), _batches(seed=1)
    assert first.indices(3, 0, 1) == [6, 7] and other_seed.indices(3, 0, 1) == [10_000_006, 10_000_007]
    assert _equal(first(3, 0, 1), again(3, 0, 1))  # a new loader (a resumed run) sees the same batch
    assert not _equal(first(3, 0, 1), first(4, 0, 1)) and not _equal(first(3, 0, 1), other_seed(3, 0, 1))
    resumed = next(again.iterate(3, 0, 1))
    assert _equal(resumed, first(3, 0, 1))


def test_fresh_batches_are_the_reference_renderer_and_front_end():
    batches = _batches()
    batch = batches(1, 0, 1)
    library = open_library(batches.tensors.data.stream.library)
    for row, index in enumerate(batches.indices(1, 0, 1)):
        stream = batches.tensors.stream(index)
        features = stream_features(stream, render_audio(stream, library))
        gain, pan = stream_labels(stream)
        assert np.array_equal(batch["features"][row].numpy(), features)
        assert np.array_equal(batch["gain_labels"][row].numpy(), gain) and np.array_equal(
            batch["pan_labels"][row].numpy(), pan
        )


def test_clip_cache_keeps_recordings_in_memory_and_changes_no_batch():
    plain = _batches()
    library = plain.tensors.library
    before = library._cache_size
    cached = _batches(f"data.clip_cache={before + 7}")
    assert cached.tensors.library is library and library._cache_size == before + 7
    assert _equal(cached(2, 0, 1), plain(2, 0, 1))
    library.keep_in_memory(1)  # never lowers it
    assert library._cache_size == before + 7
    with_cache = load_config(AMemOpsTrainConfig, overrides=(*AUDIO, "data.clip_cache=5"))
    assert config_hash(with_cache) == config_hash(load_config(AMemOpsTrainConfig, overrides=AUDIO))


def test_cpu_audio_fresh_draws_fresh_streams_and_holds_every_clip():
    train = load_config(AMemOpsTrainConfig, overrides=apply_preset(("preset=cpu-audio-fresh",), "train")[0])
    assert train.data.pool == 0 and train.data.workers == 0 and train.steps == CPU_AUDIO_FRESH_STEPS
    assert train.data.inputs == "audio" and train.checkpoint_steps[-1] == train.steps
    assert train.data.clip_cache >= len(open_library(train.data.stream.library).all_infos())
    evaluation = load_config(AMemOpsEvalConfig, overrides=apply_preset(("preset=cpu-audio-fresh",), "eval")[0])
    assert evaluation.checkpoints == (train.steps,) and evaluation.data.stream.split == "eval"
    assert all(m.endswith("@cpu-audio-fresh") for m in evaluation.models) and evaluation.update_interactions
    assert evaluation.data.stream.frames == train.data.stream.frames


@pytest.mark.parametrize(
    ("preset", "train_hash", "eval_hash"),
    [
        ("cpu-small", "83229c4838e04dc4", "3990b36cb1ab4fb0"),
        ("cpu-tiny", "fe59c6ce21e020a4", "a4787f26b00ae071"),
        ("cpu-update-control", "5bcf7df9fbc6b3ba", "9ca0f7b15bad076f"),
        ("cpu-audio", "4077f7a42029d467", "376d0a25514f0ab9"),
    ],
)
def test_other_presets_keep_their_settings(preset, train_hash, eval_hash):
    """Hashes of the presets as they were before ``cpu-audio-fresh`` and ``data.clip_cache``."""
    assert config_hash(load_config(AMemOpsTrainConfig, overrides=PRESETS[preset]["train"])) == train_hash
    assert config_hash(load_config(AMemOpsEvalConfig, overrides=PRESETS[preset]["eval"])) == eval_hash
