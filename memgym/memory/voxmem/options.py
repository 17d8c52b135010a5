"""What VoxMem memories build themselves from (:meth:`VoxMemMemory.from_options`).

An evaluation makes one :class:`VoxMemOptions` and every memory takes from it what it uses:
``top_sessions`` (``cascaded``, ``oracle_tags``), the recogniser (``transcript``, ``cascaded``),
the sound tagger (``cascaded``) and the per-turn cache they share. The recogniser and the tagger
are built on first use, once, so an evaluation of ``full_history`` alone loads neither.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from memgym.core.errors import ConfigError, MemgymError
from memgym.memory.voxmem.cache import Transcriber, TurnCache


@dataclasses.dataclass
class VoxMemOptions:
    """Settings and shared perception of VoxMem memories.

    Args:
        top_sessions: sessions a retrieving memory hands its LM (0 = all).
        cache: per-turn analyses shared by every memory (a fresh in-memory one by default).
        make_asr: builds the speech recogniser (``transcribe(audio, sample_rate) -> str``).
        make_sound_tagger: builds the background-sound tagger (None: no sound tags).
    """

    top_sessions: int = 6
    cache: TurnCache = dataclasses.field(default_factory=TurnCache)
    make_asr: Callable[[], Transcriber] | None = None
    make_sound_tagger: Callable[[], Any] | None = None
    _built: dict[str, Any] = dataclasses.field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, init=False, repr=False)

    def asr(self) -> Transcriber:
        """The recogniser, built on the first call.

        Raises:
            MemgymError: no ``make_asr`` was given.
        """
        if self.make_asr is None:
            raise MemgymError("this memory transcribes turns: give VoxMemOptions(make_asr=...)")
        return self._once("asr", self.make_asr)

    def sound_tagger(self) -> Any:
        """The sound tagger (built on the first call), or None without ``make_sound_tagger``."""
        return None if self.make_sound_tagger is None else self._once("tagger", self.make_sound_tagger)

    def _once(self, key: str, make: Callable[[], Any]) -> Any:
        with self._lock:  # memories built in several threads share one recogniser and tagger
            if key not in self._built:
                self._built[key] = make()
            return self._built[key]


def voxmem_options(options: Any, memory: type) -> VoxMemOptions:
    """``options`` when it is a :class:`VoxMemOptions`, for building ``memory`` (a memory class).

    Raises:
        ConfigError: anything else, naming the memory and what it builds from.
    """
    if not isinstance(options, VoxMemOptions):
        name = getattr(memory, "registered_name", memory.__name__)
        raise ConfigError(
            f"memory '{name}' builds from VoxMemOptions (top_sessions, a recogniser, a sound tagger), "
            f"got {type(options).__name__}"
        )
    return options
