"""What every spoken-history memory shares: turns heard in formation, the chat it hands a model.

A spoken memory observes ``SpokenHistoryEnv`` formation observations (or :class:`SpokenTurn`
records) and, for a question, returns the complete chat (``list[Message]``) that its reasoner
answers; :attr:`SpokenMemory.modality` says whether that chat holds audio (an audio LM reads it)
or only text (a text LM reads it).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from memgym.core.chat import Message
from memgym.core.protocols import Memory
from memgym.memory.spoken.history import SpokenTurn, sessions_of, turn_from_observation


class SpokenMemory(Memory):
    """Base class: keeps the turns; subclasses implement :meth:`retrieve`."""

    modality: ClassVar[Literal["audio", "text"]] = "text"
    reads = frozenset({"audio", "dialogue"})

    def __init__(self) -> None:
        self.turns: list[SpokenTurn] = []
        self._session: list[SpokenTurn] = []

    def reset(self) -> None:
        self.turns = []
        self._session = []

    def observe(self, observation: Any) -> None:
        """Keep one turn (a :class:`SpokenTurn` or an env formation observation); when a new
        session starts, :meth:`form` the one that ended."""
        turn = observation if isinstance(observation, SpokenTurn) else turn_from_observation(observation)
        if self._session and turn.session != self._session[-1].session:
            self.finish_formation()
        self.turns.append(turn)
        self._session.append(turn)

    def finish_formation(self) -> None:
        """:meth:`form` the turns of the session still open (the history's last one)."""
        if self._session:
            self.form(self._session)
        self._session = []

    def form(self, turns: list[SpokenTurn]) -> None:
        """Analyse one finished session's turns during formation (default: keep them only)."""

    def sessions(self) -> list[list[SpokenTurn]]:
        """The turns grouped by session, in history order."""
        return sessions_of(self.turns)

    def retrieve(self, query: Any) -> list[Message]:  # pragma: no cover - abstract
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        return {"turns": list(self.turns)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.turns = list(state["turns"])
        self._session = []
