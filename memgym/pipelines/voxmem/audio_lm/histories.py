"""VoxMem-style histories of pool clips for stage 1c, in the chat format the evaluation uses.

A VoxMem ``evidence_only`` or ``full_history`` prompt is not one clip and a question: it is a system
prompt, sessions with a header each, user turns of audio between the assistant's text replies, then
``Question: ...`` (:func:`memgym.memory.voxmem.history.audio_history_messages`). Here such a history
is made of training-pool clips (one statement each, distinct subjects; sometimes a later clip
restating a subject with another value), and the questions asked after it are

==========  ===========================================================  ===============================
kind        question                                                     answer
==========  ===========================================================  ===============================
``said``    what <slot> was given for <subject>? (a subject stated once)  its value
``latest``  what <slot> was given last for <subject>? (stated twice)      the later value
``absent``  what <slot> was given for <subject>? (a subject never stated) the reader's refusal sentence
==========  ===========================================================  ===============================

:func:`history_chat` renders a history through the evaluation's own message builder and the
``qwen2_audio`` chat format, so training and evaluation prompts are laid out alike.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from memgym.datasets.voxmem.records import SessionFact
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME, TOPIC_FAMILIES
from memgym.datasets.voxmem.writing import TemplateWriter
from memgym.pipelines.voxmem.audio_lm.data import Clip, Example

ABSENT_SHARE = 0.5
"""Share of histories followed by a question about a subject they never state as well."""
UPDATE_SHARE = 0.5
"""Share of histories in which one subject is stated a second time with another value."""
MAX_SESSIONS = 3
"""Most sessions a history's turns are split into (uniform 1..min(this, turns))."""


@dataclasses.dataclass(frozen=True)
class History:
    """User clips with the assistant's reply after each, in sessions.

    Attributes:
        sessions: per session, its ``(clip, assistant reply)`` turns in order.
        timestamps: each session's start time (``YYYY-MM-DD HH:MM``).
    """

    sessions: tuple[tuple[tuple[Clip, str], ...], ...]
    timestamps: tuple[str, ...]

    @property
    def clips(self) -> tuple[Clip, ...]:
        """The user clips in history order (the order of the prompt's audio parts)."""
        return tuple(clip for session in self.sessions for clip, _ in session)


def _question(clip: Clip, last: bool = False) -> str:
    family = FAMILY_BY_NAME[clip.family]
    return f"What {family.slot} was given {'last ' if last else ''}for {clip.subject}?"


def _value_question(kind: str, turns: list[Clip], clip: Clip) -> Example:
    """The ``said`` / ``latest`` question about ``clip``'s subject, answered by its value."""
    values = tuple(FAMILY_BY_NAME[clip.family].values)
    return Example(kind, tuple(turns), _question(clip, last=kind == "latest"), clip.value, values)


def _distinct_subjects(pool: list[Clip], count: int, rng: np.random.Generator) -> list[Clip]:
    chosen: list[Clip] = []
    seen: set[tuple[str, str]] = set()
    for k in rng.permutation(len(pool)):
        clip = pool[int(k)]
        if (clip.family, clip.subject) not in seen:
            seen.add((clip.family, clip.subject))
            chosen.append(clip)
            if len(chosen) == count:
                break
    return chosen


def _add_update(turns: list[Clip], pool: list[Clip], rng: np.random.Generator) -> Clip | None:
    """Insert, after a uniform turn, a pool clip restating its subject with another value; returns
    the restated turn's new clip (None when the pool has none)."""
    first = int(rng.integers(len(turns)))
    target = turns[first]
    later = [c for c in pool if (c.family, c.subject) == (target.family, target.subject) and c.value != target.value]
    if not later:
        return None
    clip = later[int(rng.integers(len(later)))]
    turns.insert(int(rng.integers(first + 1, len(turns) + 1)), clip)
    return clip


def _absent_question(stated: set[tuple[str, str]], rng: np.random.Generator) -> Example:
    from memgym.pipelines.voxmem.reader import REFUSAL

    pairs = [(f.name, s) for f in TOPIC_FAMILIES for s in f.subjects if (f.name, s) not in stated]
    family, subject = pairs[int(rng.integers(len(pairs)))]
    slot = FAMILY_BY_NAME[family].slot
    return Example("absent", (), f"What {slot} was given for {subject}?", REFUSAL, ())


def history_group(pool: list[Clip], max_turns: int, rng: np.random.Generator) -> tuple[History, tuple[Example, ...]]:
    """A history of 2-``max_turns`` user turns of ``pool`` clips and the questions asked after it
    (module docstring): ``said`` about one subject stated once, ``latest`` when a subject was
    restated, ``absent`` in :data:`ABSENT_SHARE` of histories.

    Raises:
        ValueError: ``max_turns`` < 2, or the pool has fewer than two subjects.
    """
    if max_turns < 2:
        raise ValueError(f"read_turns must be >= 2, got {max_turns}")
    restate = rng.random() < UPDATE_SHARE
    turns = _distinct_subjects(pool, int(rng.integers(2, max_turns + (0 if restate else 1))), rng)
    if len(turns) < 2:
        raise ValueError("clip_pool: fewer than two subjects to build a history from")
    later = _add_update(turns, pool, rng) if restate else None
    restated = {(later.family, later.subject)} if later else set()
    once = [c for c in turns if (c.family, c.subject) not in restated]
    said = once[int(rng.integers(len(once)))]
    examples = [_value_question("said", turns, said)]
    if later is not None:
        examples.append(_value_question("latest", turns, later))
    if rng.random() < ABSENT_SHARE:
        examples.append(_absent_question({(c.family, c.subject) for c in turns}, rng))
    return _in_sessions(turns, rng), tuple(examples)


def _in_sessions(turns: list[Clip], rng: np.random.Generator) -> History:
    from memgym.datasets.voxmem.history import timestamps

    count = int(rng.integers(1, min(MAX_SESSIONS, len(turns)) + 1))
    cuts = sorted(int(c) for c in rng.choice(np.arange(1, len(turns)), size=count - 1, replace=False))
    writer = TemplateWriter()
    replies = [
        writer.assistant_side(SessionFact(family=c.family, subject=c.subject, value=c.value, update=False), 1, rng)[0]
        for c in turns
    ]
    bounds = [0, *cuts, len(turns)]
    sessions = tuple(tuple(zip(turns[a:b], replies[a:b])) for a, b in zip(bounds, bounds[1:]))
    return History(sessions, tuple(timestamps(count, rng)))


def history_chat(history: History, question: str) -> list[dict[str, Any]]:
    """``history`` and ``question`` as the ``qwen2_audio`` chat messages the evaluation builds for
    them (audio parts ``audio-<k>`` in :attr:`History.clips` order; the waveforms are not needed)."""
    from memgym.backends.hf_audio import AUDIO_FORMATS, to_audio_chat
    from memgym.memory.voxmem.history import VoxMemQuery, VoxMemTurn, audio_history_messages

    placeholder = np.zeros(1, np.float32)  # only the parts' order matters: the tokens come from the pool
    sessions = [
        [
            turn
            for clip, reply in session
            for turn in (
                VoxMemTurn(number, stamp, "user", placeholder),
                VoxMemTurn(number, stamp, "assistant", np.zeros(0, np.float32), reply),
            )
        ]
        for number, (session, stamp) in enumerate(zip(history.sessions, history.timestamps))
    ]
    messages = audio_history_messages(sessions, VoxMemQuery(question), question_audio=False)
    chat, _ = to_audio_chat(messages, AUDIO_FORMATS["qwen2_audio"])
    return chat
