"""``memgym eval amemops`` plays its streams through ``memgym/AMemOps-v0`` and the agent loop.

Its one acceleration, features computed once and handed to the env (``reset(options={"features":
...})``) instead of rendered per model, must give the rows of the env rendering its own inputs,
item by item; and both must answer what one chunked pass of the model over the whole stream answers
at each query's last frame (the eval's numbers before it ran through the env), on symbolic and audio
streams. The step form through the same loop answers the same.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.sources.factory import LibraryConfig
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.pipelines.amemops.configs import DataConfig
from memgym.pipelines.amemops.evaluate import eval_agent, score_stream, stream_env
from memgym.pipelines.amemops.streams import stream_tensors

SHORT = {"n_initial": 2, "n_update": 2, "n_interference": 0, "n_absent": 1, "distractors": (1,)}
DATA = {
    "symbolic": DataConfig(
        inputs="symbolic", stream=StreamConfig(frames=256, offset_seconds=(2, 4), split="eval", **SHORT)
    ),
    "audio": DataConfig(
        stream=StreamConfig(
            frames=256, offset_seconds=(2, 4), split="eval", library=LibraryConfig(kind="tones"), **SHORT
        ),
        block_frames=24,
    ),
}


def _model(tensors, core: str = "gdn") -> AMemOpsModel:
    torch.manual_seed(0)
    config = ModelConfig(
        core=core,
        input_dim=tensors.input_dim,
        width=16,
        heads=1,
        head_dim=8,
        mlp_hidden=16,
        n_gain=tensors.n_classes,
        n_pan=tensors.n_classes,
    )
    return AMemOpsModel(config).eval()


def _whole_stream_predictions(model: AMemOpsModel, stream, features: np.ndarray) -> list[int]:
    """One chunked pass over the stream, the argmax at every query item's last frame."""
    with torch.no_grad():
        out = model(torch.from_numpy(features)[None])
    return [int(out[i.annotations["attribute"]][0, i.annotations["end_frame"]].argmax()) for i in stream.items]


@pytest.mark.parametrize("inputs", ["symbolic", "audio"])
def test_env_loop_rows_equal_the_cached_feature_path_and_the_whole_stream_pass(inputs):
    data = DATA[inputs]
    tensors = stream_tensors(data)
    model = _model(tensors)
    env = stream_env(data, tensors.library)
    chunked, step = eval_agent(model, "chunked"), eval_agent(model, "step")
    compared = 0
    for index in range(3):
        stream = tensors.stream(index)
        features = tensors.arrays(index)[0]
        rendered = score_stream(env, chunked, stream)  # the env makes its own inputs
        cached = score_stream(env, chunked, stream, features)
        assert np.array_equal(env.unwrapped.features, features)
        assert rendered == cached
        assert [r["prediction"] for r in cached] == _whole_stream_predictions(model, stream, features)
        assert [r["prediction"] for r in score_stream(env, step, stream, features)] == [r["prediction"] for r in cached]
        assert [r["query"] for r in cached] == [i.item_id for i in stream.items]
        assert all(r["correct"] == int(r["prediction"] == r["answer"]) for r in cached)
        compared += len(cached)
    assert compared >= 8
    env.close()


def test_given_features_of_the_wrong_shape_are_refused():
    from memgym.core.errors import MemgymError

    data = DATA["symbolic"]
    tensors = stream_tensors(data)
    env = stream_env(data, tensors.library)
    with pytest.raises(MemgymError, match=r"options\['features'\]"):
        env.reset(options={"episode": tensors.stream(0), "features": np.zeros((3, tensors.input_dim), np.float32)})
