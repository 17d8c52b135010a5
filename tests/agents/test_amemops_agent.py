"""A model memory answering AudioStreamEnv queries gives the chunked model's answers."""

from __future__ import annotations

import numpy as np
import torch

from memgym.agents.agent import run_episode
from memgym.agents.amemops_agent import MemoryAnswerAgent
from memgym.core.registry import MEMORIES
from memgym.datasets.amemops.config import StreamConfig
from memgym.envs.audio_stream_env import AudioStreamEnv
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig

SMALL = StreamConfig(
    frames=384, n_initial=2, n_update=2, n_interference=0, n_absent=1, distractors=(1,), offset_seconds=(2.0, 4.0)
)


def test_env_episode_with_model_memory_matches_chunked_answers():
    env = AudioStreamEnv(SMALL, library="synthetic_env", block_frames=32)
    torch.manual_seed(0)
    model = AMemOpsModel(ModelConfig(core="gdn2", width=32, heads=2, head_dim=16, mlp_hidden=32)).eval()
    agent = MemoryAnswerAgent(MEMORIES.get("gdn2")(model))
    result = run_episode(env, agent, seed=3)
    stream = env.unwrapped.episode
    assert len(result.scores) == len(stream.items) > 0
    with torch.no_grad():
        out = model(torch.from_numpy(np.clip(env.unwrapped.features, -24, 40))[None])
    for item, score in zip(stream.items, result.scores, strict=True):
        head = item.annotations["attribute"]
        assert score["predicted"] == int(out[head][0, item.annotations["end_frame"]].argmax())
    assert result.total_reward == sum(s["reward"] for s in result.scores)
