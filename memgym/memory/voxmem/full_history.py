"""``full_history``: the whole spoken history handed to an audio LM (VoxMem's own setting)."""

from __future__ import annotations

from typing import Any

from memgym.core.chat import Message
from memgym.core.registry import register_memory
from memgym.memory.voxmem.base import VoxMemMemory
from memgym.memory.voxmem.history import audio_history_messages, query_of


@register_memory("full_history")
class FullHistoryMemory(VoxMemMemory):
    """Keeps every turn; ``retrieve`` returns :func:`audio_history_messages` of all sessions.

    Args:
        question_audio: include the question spoken in the asker's voice (needed to tell "you"
            from "someone else"), besides its text.
    """

    modality = "audio"

    def __init__(self, question_audio: bool = True) -> None:
        super().__init__()
        self.question_audio = question_audio

    def retrieve(self, query: Any) -> list[Message]:
        return audio_history_messages(self.hand(self.sessions()), query_of(query), question_audio=self.question_audio)
