"""``transcript``: every user turn through ASR, then the whole written history to a text LM.

It answers what words can answer (semantics) and shows what a transcript cannot: who spoke, how,
and over which sound. Transcripts are cached per turn audio (:class:`TurnCache`).
"""

from __future__ import annotations

from typing import Any

from memgym.core.chat import Message
from memgym.core.registry import register_memory
from memgym.memory.voxmem.base import VoxMemMemory
from memgym.memory.voxmem.cache import Transcriber, TurnCache, identity_of
from memgym.memory.voxmem.history import SAMPLE_RATE, VoxMemTurn, query_of, text_history_messages
from memgym.memory.voxmem.options import VoxMemOptions, voxmem_options


def transcripts(turns: list[VoxMemTurn], asr: Transcriber, cache: TurnCache) -> dict[str, str]:
    """``turn key -> words`` of every user turn (cached per audio); the turns not yet cached go
    to the recogniser together when it has ``transcribe_batch``, else one by one."""
    users = [t for t in turns if t.role == "user"]
    batch = getattr(asr, "transcribe_batch", None)

    def compute(indices: list[int]) -> list[str]:
        clips = [users[i].audio for i in indices]
        return batch(clips, SAMPLE_RATE) if batch else [asr.transcribe(a, SAMPLE_RATE) for a in clips]

    words = cache.get_or_compute_many("asr:" + identity_of(asr), [t.key for t in users], compute)
    return {t.key: w for t, w in zip(users, words)}


@register_memory("transcript")
class TranscriptMemory(VoxMemMemory):
    """ASR of every user turn, then :func:`text_history_messages` of the whole history.

    Args:
        asr: an object with ``transcribe(audio, sample_rate) -> str``.
        cache: shared per-turn cache (a new in-memory one when None).
    """

    def __init__(self, asr: Transcriber, cache: TurnCache | None = None) -> None:
        super().__init__()
        self.asr = asr
        self.cache = cache if cache is not None else TurnCache()

    @classmethod
    def from_options(cls, options: VoxMemOptions) -> TranscriptMemory:
        """Takes the recogniser and the shared turn cache of ``options``."""
        options = voxmem_options(options, cls)
        return cls(options.asr(), options.cache)

    def form(self, turns: list[VoxMemTurn]) -> None:
        transcripts(turns, self.asr, self.cache)

    def retrieve(self, query: Any) -> list[Message]:
        self.finish_formation()
        lines = transcripts(self.turns, self.asr, self.cache)
        return text_history_messages(self.hand(self.sessions()), lines, query_of(query))
