"""``VoxMemAgent``: a spoken-history memory and a model answering VoxMem items through the env.

Formation: the memory observes every ``memgym/VoxMem-v0`` observation (user audio, assistant text,
session index and time) as the env presents it. Use: the memory turns the question observation
(its text and the asker's spoken question) into the complete chat
(:class:`~memgym.memory.voxmem.base.VoxMemMemory`), the model replies, and the reply is the
action the env scores. :func:`play_voxmem_item` plays one episode and returns the reply with the
env's verdict.

Ground-truth probes (``evidence_only``, ``oracle_tags``) read the episode being played: the agent
gets it through the memory protocol's ``bind_episode(episode, asker=...)``, which the agents' loop
calls after each reset, before formation.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from memgym.agents.agent import Agent, run_episode
from memgym.core.protocols import Memory, Reasoner
from memgym.memory.voxmem.base import VoxMemMemory


class VoxMemAgent(Agent):
    """Memory + model (module docstring).

    Args:
        memory: a VoxMem memory.
        model: the reasoner answering the memory's chat.
        max_new_tokens: longest reply, tokens.
    Attributes:
        last_reply: the reply to the last question.
    """

    def __init__(self, memory: VoxMemMemory, model: Reasoner, max_new_tokens: int = 32) -> None:
        super().__init__(memory)
        self.model = model
        self.max_new_tokens = max_new_tokens
        self.last_reply = ""

    def reset(self) -> None:
        super().reset()
        self.last_reply = ""

    def answer(self, observation: Any, info: dict[str, Any]) -> str:
        messages = self.memory.retrieve(observation)
        self.last_reply = self.model.generate(messages, max_new_tokens=self.max_new_tokens)
        return self.last_reply


def play_voxmem_item(env: gymnasium.Env, agent: VoxMemAgent, episode: Any, asker: str = "") -> tuple[str, dict]:
    """Play a one-item VoxMem ``episode`` in ``env`` with ``agent``: ``(reply, the env's score)``."""
    result = run_episode(env, agent, episode=episode, context={"asker": asker})
    score = {k: v for k, v in result.scores[0].items() if k != "item_id"}
    return agent.last_reply, score


def form_memory(env: gymnasium.Env, memory: Memory, episode: Any) -> Any:
    """Reset ``env`` on ``episode`` and let ``memory`` observe its whole formation phase (the memory
    is reset first); returns the first use-phase observation (the question)."""
    observation, info = env.reset(options={"episode": episode})
    memory.reset()
    while info["phase"] == "formation":
        memory.observe(observation)
        observation, _, _, _, info = env.step(env.unwrapped.formation_action())
    return observation
