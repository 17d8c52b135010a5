"""Spoken-history turns as memories hold them, and the history as a model sees it.

A :class:`VoxMemTurn` is one formation step of ``VoxMemEnv`` (or of a VoxMem episode read
directly): user turns carry ``(N,) float32`` 16 kHz audio, assistant turns text, both with their
session index and the session's start time. :func:`audio_history_messages` is the one history
every audio LM receives:

* a system message (:data:`SYSTEM_PROMPT`) saying what the history is and that unsupported
  questions are declined;
* per session, its turns in order: user turns as ``user`` messages holding the audio, assistant
  turns as ``assistant`` text messages; the first message of a session starts with the text header
  ``"Session <k> - <YYYY-MM-DD HH:MM>"``;
* a final ``user`` message with the question (its text, and its audio in the asker's voice when
  given).

:func:`text_history_messages` is the same layout with each user turn replaced by a line of text
(a transcript, possibly with acoustic tags), for text LMs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgym.core.chat import AudioPart, Message, TextPart
from memgym.datasets.voxmem.audio_files import SAMPLE_RATE, turn_audio

SYSTEM_PROMPT = (
    "You are a voice assistant. Below are your earlier conversations with the users of this device, "
    "session by session, each with the date and time it began. The users' turns are their recorded "
    "speech; your own replies are text. Then a user asks a question about those conversations. "
    "Answer briefly (a few words) from the conversations. If they do not contain what the question "
    "needs, say that you cannot tell."
)
HEADER = "Session {index} - {timestamp}"


@dataclasses.dataclass(frozen=True, eq=False)
class VoxMemTurn:
    """One turn of a spoken history.

    Attributes:
        session: 0-based session index.
        timestamp: the session's start time (``YYYY-MM-DD HH:MM``).
        role: ``"user"`` (audio) or ``"assistant"`` (text).
        audio: ``(N,) float32`` waveform at 16 kHz (empty for assistant turns).
        text: assistant text ("" for user turns).
    """

    session: int
    timestamp: str
    role: str
    audio: np.ndarray
    text: str = ""

    @functools.cached_property
    def key(self) -> str:
        """Content hash of the turn's audio (user turns) or text: the cache key of its analyses
        (computed once per turn)."""
        payload = np.ascontiguousarray(self.audio, dtype=np.float32).tobytes() if self.role == "user" else self.text
        return hashlib.sha256(payload if isinstance(payload, bytes) else payload.encode()).hexdigest()[:24]


@dataclasses.dataclass(frozen=True, eq=False)
class VoxMemQuery:
    """A use-phase question: its words and, when given, its ``(N,) float32`` 16 kHz audio."""

    text: str
    audio: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))


def turn_from_observation(observation: Mapping[str, Any]) -> VoxMemTurn:
    """The :class:`VoxMemTurn` of one ``VoxMemEnv`` formation observation."""
    role = "user" if int(observation["role"]) == 0 else "assistant"
    length = int(np.asarray(observation["audio_length"]).reshape(-1)[0])
    audio = turn_audio(observation["audio"], length) if role == "user" else np.zeros(0, np.float32)
    return VoxMemTurn(
        session=int(np.asarray(observation["session_index"]).reshape(-1)[0]),
        timestamp=str(observation["timestamp"]),
        role=role,
        audio=audio,
        text="" if role == "user" else str(observation["text"]),
    )


def query_of(query: Any) -> VoxMemQuery:
    """A :class:`VoxMemQuery` from a string, a VoxMemQuery or a use-phase observation mapping."""
    if isinstance(query, VoxMemQuery):
        return query
    if isinstance(query, Mapping):
        length = int(np.asarray(query.get("audio_length", [0])).reshape(-1)[0])
        audio = turn_audio(query.get("audio", np.zeros(0)), length)
        return VoxMemQuery(str(query.get("text", "")), audio)
    return VoxMemQuery(str(query))


def sessions_of(turns: Sequence[VoxMemTurn]) -> list[list[VoxMemTurn]]:
    """Turns grouped by session, in order of first appearance."""
    groups: dict[int, list[VoxMemTurn]] = {}
    for turn in turns:
        groups.setdefault(turn.session, []).append(turn)
    return list(groups.values())


def _question_message(query: VoxMemQuery, with_audio: bool) -> Message:
    parts: list[Any] = []
    if with_audio and query.audio.size:
        parts.append(AudioPart(query.audio, SAMPLE_RATE))
    parts.append(TextPart(f"Question: {query.text}"))
    return Message("user", tuple(parts))


def audio_history_messages(
    sessions: Sequence[Sequence[VoxMemTurn]], query: VoxMemQuery, *, question_audio: bool = True
) -> list[Message]:
    """The history as an audio LM sees it (module docstring); ``sessions`` in history order."""
    messages = [Message.text("system", SYSTEM_PROMPT)]
    for number, turns in enumerate(sessions, start=1):
        header = HEADER.format(index=number, timestamp=turns[0].timestamp) + "\n"
        for k, turn in enumerate(turns):
            prefix = [TextPart(header)] if k == 0 else []
            if turn.role == "user":
                messages.append(Message("user", (*prefix, AudioPart(turn.audio, SAMPLE_RATE))))
            else:
                messages.append(Message("assistant", (*prefix, TextPart(turn.text))))
    messages.append(_question_message(query, question_audio))
    return messages


def text_history_messages(
    sessions: Sequence[Sequence[VoxMemTurn]], user_lines: Mapping[str, str], query: VoxMemQuery, note: str = ""
) -> list[Message]:
    """The history for a text LM: one text message with every session, user turns replaced by
    ``user_lines[turn.key]``, then the question; ``note`` explains any tags the lines carry."""
    blocks = []
    for number, turns in enumerate(sessions, start=1):
        lines = [HEADER.format(index=number, timestamp=turns[0].timestamp)]
        for turn in turns:
            lines.append(f"User: {user_lines[turn.key]}" if turn.role == "user" else f"Assistant: {turn.text}")
        blocks.append("\n".join(lines))
    system = SYSTEM_PROMPT.replace("recorded speech", "speech, written out below") + (f" {note}" if note else "")
    body = "\n\n".join(blocks) if blocks else "(no conversations)"
    return [Message.text("system", system), Message.text("user", f"{body}\n\nQuestion: {query.text}")]
