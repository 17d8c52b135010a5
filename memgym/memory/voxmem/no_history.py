"""``no_history``: a baseline that hands the model no conversation at all, only the question.

The chat is the audio layout's system prompt and the question (:func:`audio_history_messages` of no
sessions), so it differs from ``evidence_only`` and ``full_history`` only by the sessions left out.
What a model answers here comes from the question and its priors (a counting question answered
"twice", a yes/no question "no"); the gap between another memory and this one is what the history
gave. It holds no audio, so any model can answer it.
"""

from __future__ import annotations

from typing import Any

from memgym.core.chat import Message
from memgym.core.registry import register_memory
from memgym.memory.voxmem.base import VoxMemMemory
from memgym.memory.voxmem.history import audio_history_messages, query_of


@register_memory("no_history")
class NoHistoryMemory(VoxMemMemory):
    """Forgets every turn; ``retrieve`` returns the system prompt and the question's text."""

    # declared as full_history's, so that only VoxMem, whose histories it is handed, offers it
    reads: frozenset[str] = frozenset({"audio", "dialogue"})

    def observe(self, observation: Any) -> None:
        """Nothing is kept."""

    def retrieve(self, query: Any) -> list[Message]:
        return audio_history_messages(self.hand([]), query_of(query), question_audio=False)
