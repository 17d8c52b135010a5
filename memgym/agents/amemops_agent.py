"""An agent that answers AMemOps queries with a model memory's own answers.

During formation the agent's memory (one of the registered core memories,
:mod:`memgym.memory.recurrent.core_memory`) observes every block of the stream, query frames
included, and keeps its output at each query's last frame. In the use phase each observation
repeats one query's frames; the agent returns the answer the memory formed at that query's end,
as ``(gain class, pan class)`` for ``AudioStreamEnv``'s ``MultiDiscrete([5, 5])`` action space.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memgym.agents.agent import Agent


class MemoryAnswerAgent(Agent):
    """``answer(obs, info)`` -> ``np.array([gain, pan], int64)`` from ``memory.retrieve(obs)``."""

    def answer(self, observation: Any, info: dict[str, Any]) -> np.ndarray:
        reply = self.memory.retrieve(observation)
        return np.array([reply["gain"], reply["pan"]], dtype=np.int64)
