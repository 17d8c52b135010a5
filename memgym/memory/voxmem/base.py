"""What every VoxMem memory shares: turns heard in formation, the chat it hands a model.

A VoxMem memory observes ``VoxMemEnv`` formation observations (or :class:`VoxMemTurn`
records) and, for a question, returns the complete chat (``list[Message]``) that its reasoner
answers; :attr:`VoxMemMemory.modality` says whether that chat holds audio (an audio LM reads it)
or only text (a text LM reads it). It builds itself from a
:class:`~memgym.memory.voxmem.options.VoxMemOptions` (the memory protocol's ``from_options``;
the default takes none), and
:attr:`VoxMemMemory.reads` says what it reads: the user turns' audio and the dialogue (assistant
text, session times); ground-truth probes also read ``truth``.

:meth:`VoxMemMemory.seen` says what the memory saw: the history indices of the sessions it formed
from and of those its last chat handed the model (every turn of a handed session is in the
chat); the error taxonomy attributes a wrong answer only to sessions the model was handed.
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
        self.handed: list[int] | None = None

    def reset(self) -> None:
        self.turns = []
        self._session = []
        self.handed = None

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
        """The chat for ``query``; implementations record the sessions it holds with :meth:`hand`."""
        raise NotImplementedError

    def hand(self, sessions: list[list[VoxMemTurn]]) -> list[list[VoxMemTurn]]:
        """Record ``sessions`` as the ones the current chat hands the model; returns them."""
        self.handed = [session[0].session for session in sessions]
        return sessions

    def seen(self) -> dict[str, Any]:
        """What the memory saw: ``formed_sessions`` (history indices of the sessions it kept and
        formed from), ``handed_sessions`` (those its last chat holds, history order; a memory
        that records none with :meth:`hand` is taken to hand all it formed from) and
        ``handed_turns`` (their turns, user and assistant)."""
        formed = sorted({t.session for t in self.turns})
        handed = formed if self.handed is None else list(self.handed)
        return {
            "formed_sessions": formed,
            "handed_sessions": handed,
            "handed_turns": sum(1 for t in self.turns if t.session in set(handed)),
        }

    def state_dict(self) -> dict[str, Any]:
        """The turns kept, and those of the session still open (formed at the next :meth:`retrieve`)."""
        return {"turns": list(self.turns), "open_session": list(self._session)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.turns = list(state["turns"])
        self._session = list(state.get("open_session", ()))
