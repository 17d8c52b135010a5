"""What every VoxMem memory shares: turns heard in formation, the chat it hands a model.

A VoxMem memory observes ``VoxMemEnv`` formation observations (or :class:`VoxMemTurn`
records) and, for a question, returns the complete chat (``list[Message]``) that its reasoner
answers; :attr:`VoxMemMemory.modality` says whether that chat holds audio (an audio LM reads it)
or only text (a text LM reads it). It builds itself from a
:class:`~memgym.memory.voxmem.options.VoxMemOptions` (:meth:`VoxMemMemory.from_options`), and
:attr:`VoxMemMemory.reads` says what it reads: the user turns' audio and the dialogue (assistant
text, session times); ground-truth probes also read ``truth``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeVar

from memgym.core.chat import Message
from memgym.core.protocols import Memory
from memgym.memory.voxmem.history import VoxMemTurn, sessions_of, turn_from_observation
from memgym.memory.voxmem.options import VoxMemOptions

M = TypeVar("M", bound="VoxMemMemory")


class VoxMemMemory(Memory):
    """Base class: keeps the turns; subclasses implement :meth:`retrieve`."""

    modality: ClassVar[Literal["audio", "text"]] = "text"
    reads: frozenset[str] = frozenset({"audio", "dialogue"})

    def __init__(self) -> None:
        self.turns: list[VoxMemTurn] = []
        self._session: list[VoxMemTurn] = []

    @classmethod
    def from_options(cls: type[M], options: VoxMemOptions) -> M:
        """A fresh memory built from an evaluation's ``options`` (default: it takes none)."""
        return cls()

    def bind_episode(self, episode: Any, **context: Any) -> None:
        """The episode about to be played, before formation (``context``: ``asker``, the asking
        user's id). Only ground-truth probes read it; default: ignored."""

    def reset(self) -> None:
        self.turns = []
        self._session = []

    def observe(self, observation: Any) -> None:
        """Keep one turn (a :class:`VoxMemTurn` or an env formation observation); when a new
        session starts, :meth:`form` the one that ended."""
        turn = observation if isinstance(observation, VoxMemTurn) else turn_from_observation(observation)
        if self._session and turn.session != self._session[-1].session:
            self.finish_formation()
        self.turns.append(turn)
        self._session.append(turn)

    def finish_formation(self) -> None:
        """:meth:`form` the turns of the session still open (the history's last one)."""
        if self._session:
            self.form(self._session)
        self._session = []

    def form(self, turns: list[VoxMemTurn]) -> None:
        """Analyse one finished session's turns during formation (default: keep them only)."""

    def sessions(self) -> list[list[VoxMemTurn]]:
        """The turns grouped by session, in history order."""
        return sessions_of(self.turns)

    def retrieve(self, query: Any) -> list[Message]:  # pragma: no cover - abstract
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        return {"turns": list(self.turns)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.turns = list(state["turns"])
        self._session = []
