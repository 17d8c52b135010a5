"""AMemOps as the memory contract plays it: ``memgym/AMemOps-v0`` on streams of the tone library
(no recordings to load), each core memory built from a
:class:`~memgym.memory.recurrent.core_memory.CoreMemoryOptions` holding an untrained, seeded
one-layer model of its core (the contract checks the memory's plumbing, not what a model learnt),
in the chunked form ``memgym eval amemops`` uses, answering through a
:class:`~memgym.agents.amemops_agent.MemoryAnswerAgent`. The stream inputs are rendered once per
episode and handed to the env (``options={"features": ...}``), as the evaluation does."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from memgym.agents.agent import Agent
from memgym.core.episode import Episode
from memgym.core.protocols import Memory
from memgym.testing.harness_base import Harness, add_harness

SMALL_MODEL: dict[str, int] = {"width": 16, "layers": 1, "heads": 2, "head_dim": 8, "mlp_hidden": 32, "chunk_size": 16}
"""Architecture of the contract's models (:class:`~memgym.memory.recurrent.model.ModelConfig` fields)."""
MODEL_SEED = 0
"""Seed of their initial weights."""


@add_harness
class AMemOpsHarness(Harness):
    """AMemOps (module docstring)."""

    benchmark = "amemops"

    def __init__(self) -> None:
        super().__init__()
        self._env: gymnasium.Env | None = None
        self._episodes: tuple[Episode, Episode] | None = None
        self._features: dict[str, np.ndarray] = {}

    def takes(self, cls: type[Memory]) -> bool:
        if "audio" not in cls.reads:  # decided without importing the core memories (torch)
            return False
        from memgym.memory.recurrent.core_memory import CoreMemory

        return issubclass(cls, CoreMemory)

    def options(self, name: str) -> Any:
        import torch

        from memgym.core.registry import MEMORIES
        from memgym.memory.recurrent.core_memory import CoreMemoryOptions
        from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig

        env = self.env(None)  # type: ignore[arg-type]  (the same env for every core memory)
        config = ModelConfig(core=MEMORIES.get(name).core, input_dim=env.unwrapped.input_dim, **SMALL_MODEL)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(MODEL_SEED)
            model = AMemOpsModel(config)
        return CoreMemoryOptions(model, form="chunked")

    def env(self, memory: Memory) -> gymnasium.Env:
        if self._env is None:
            self._env = gymnasium.make("memgym/AMemOps-v0", library="tones", max_episode_steps=-1)
        return self._env

    def episodes(self) -> tuple[Episode, Episode]:
        if self._episodes is None:
            env = self.env(None)  # type: ignore[arg-type]
            played = []
            for seed in (0, 1):
                env.reset(seed=seed)
                played.append(env.unwrapped.episode)
                self._features[played[-1].episode_id] = env.unwrapped.features
            self._episodes = (played[0], played[1])
        return self._episodes

    def reset_options(self, episode: Episode) -> dict[str, Any] | None:
        features = self._features.get(episode.episode_id)
        return None if features is None else {"features": features}

    def agent(self, memory: Memory) -> Agent:
        from memgym.agents.amemops_agent import MemoryAnswerAgent

        return MemoryAnswerAgent(memory)

    def evidence_problem(self, evidence: Any, memory: Memory) -> str | None:
        if not isinstance(evidence, dict) or not {"gain", "pan"} <= set(evidence):
            return f"retrieve returned {type(evidence).__name__}: the agent reads a dict with 'gain' and 'pan' classes"
        space = self.env(memory).action_space
        answer = np.array([evidence["gain"], evidence["pan"]], dtype=np.int64)
        return None if space.contains(answer) else f"the answer {answer.tolist()} is outside the action space {space}"
