"""The Dialogue baseline memory: keeps every utterance line, nothing else."""

from __future__ import annotations

import numpy as np

from memgym.core.registry import MEMORIES
from memgym.memory.embodied.dialogue import DialogueMemory


def test_keeps_lines_in_order_and_restores_state():
    memory = MEMORIES.get("dialogue")()
    assert isinstance(memory, DialogueMemory)
    memory.observe({"rgb": np.zeros((2, 2, 3), np.uint8), "text": ""})
    memory.observe({"text": "Amelia: That mug is mine.\nBen: No, it is mine."})
    memory.observe("Carla: The sofa is new.")
    assert (
        memory.retrieve("who owns the mug?")
        == "Amelia: That mug is mine.\nBen: No, it is mine.\nCarla: The sofa is new."
    )
    clone = DialogueMemory()
    clone.load_state_dict(memory.state_dict())
    assert clone.retrieve("") == memory.retrieve("")
    memory.reset()
    assert memory.retrieve("") == ""
