"""What every VoxMem memory shares: turns heard in formation, the chat it hands a model.

A VoxMem memory observes ``VoxMemEnv`` formation observations (or :class:`VoxMemTurn`
records) and, for a question, returns the complete chat (``list[Message]``) that its reasoner
answers; :attr:`VoxMemMemory.modality` says whether that chat holds audio (an audio LM reads it)
or only text (a text LM reads it). It builds itself from a
:class:`~memgym.memory.voxmem.options.VoxMemOptions` (the memory protocol's ``from_options``;
the default takes none), and
:attr:`VoxMemMemory.reads` says what it reads: the user turns' audio and the dialogue (assistant
text, session times); ground-truth probes also read ``truth``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from memgym.core.chat import Message
from memgym.core.protocols import Memory
from memgym.memory.voxmem.history import VoxMemTurn, sessions_of, turn_from_observation


class VoxMemMemory(Memory):
    """Base class: keeps the turns; subclasses implement :meth:`retrieve`."""

    modality: ClassVar[Literal["audio", "text"]] = "text"
    reads: frozenset[str] = frozenset({"audio", "dialogue"})

    def __init__(self) -> None:
        self.turns: list[VoxMemTurn] = []
        self._session: list[VoxMemTurn] = []

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
