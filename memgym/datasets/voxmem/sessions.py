"""Writing and rendering one session of a VoxMem history: topical (evidence or haystack), edited
for answer refusal, or filler. A session's id hashes its turns and fact, so the same words in the
same voices give the same session in every item that uses it."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from memgym.backends.tts.base import Voice
from memgym.datasets.voxmem.filler import FillerCorpus
from memgym.datasets.voxmem.history import HEADER_TEMPLATE
from memgym.datasets.voxmem.plans import STATE_CUES
from memgym.datasets.voxmem.records import Session, SessionFact, Turn
from memgym.datasets.voxmem.render import TurnRenderer
from memgym.datasets.voxmem.tokens import TokenCounter, audio_tokens
from memgym.datasets.voxmem.writing import DialogueWriter, replace_phrase


@dataclasses.dataclass(eq=False)
class SessionWriter:
    """Writes a session's words (``writer`` or the filler corpus) and renders its user turns.

    Args:
        writer: writes topical dialogues for a fact.
        renderer: speaks user turns (cue spoken, sound mixed) into content-hashed files.
        tokens: counts the text turns' tokens (user turns count by duration).
        fillers: the filler dialogue corpus.
        sound_classes: background sounds a filler may carry.
        cue_rate, sound_rate: shares of filler sessions with a cue / a sound.
    Attributes:
        next_filler: index of the corpus dialogue the next filler session starts from (each
            item's history sets it from its own generator).
    """

    writer: DialogueWriter
    renderer: TurnRenderer
    tokens: TokenCounter
    fillers: FillerCorpus
    sound_classes: list[str]
    cue_rate: float = dataclasses.field(kw_only=True)
    sound_rate: float = dataclasses.field(kw_only=True)
    header_tokens: int = dataclasses.field(init=False)
    next_filler: int = dataclasses.field(default=0, init=False)

    def __post_init__(self) -> None:
        self.header_tokens = self.tokens.count(HEADER_TEMPLATE.format(index=100, timestamp="2025-01-01 12:00"))

    def topical_session(
        self, fact: SessionFact, role: str, voices: dict[str, Voice], source: str, *, redraw: int = 0
    ) -> Session:
        """Write and render a topical session (evidence or haystack).

        The words are drawn from a generator seeded by ``fact`` (same fact -> same words);
        ``redraw > 0`` draws other words for the same fact (for a check that rejects a session).
        """
        key = fact.to_json() + (f"#redraw{redraw}" if redraw else "")
        rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
        n_user = int(rng.integers(2, 4))
        user, assistant, writer = self.writer.write(fact, n_user, rng)
        voice = voices[fact.speaker]
        turns: list[Turn] = []
        for u, a in zip(user, assistant):
            turns.append(self.renderer.turn(voice, fact.speaker, u, fact.cue, fact.sound))
            turns.append(Turn(role="assistant", text=a))
        return self.session(tuple(turns), role, fact, f"{source}:{writer}")

    def edited_session(self, session: Session, fact: SessionFact, voices: dict[str, Voice], edit: str) -> Session:
        """``session`` after an answer-refusal ``edit`` that turned its fact into ``fact``.

        The turns keep their words: user turns are re-spoken in ``fact``'s speaker's voice with
        its cue and sound (the removed cue or voice link), assistant turns are kept. When the
        edit moved the session to another subject (``drop_context``), the new subject replaces
        the old one wherever the turns name it, and nothing else changes; a session whose user
        turns never name the old subject verbatim (possible with LLM-written words) is written
        afresh for ``fact`` instead, since replacing the subject could not remove it.
        """
        old, new = session.fact.subject, fact.subject
        if old != new and not any(old.lower() in t.text.lower() for t in session.turns if t.role == "user"):
            return self.topical_session(fact, session.role, voices, "written")
        turns = []
        for turn in session.turns:
            text = replace_phrase(turn.text, old, new) if old != new else turn.text
            if turn.role == "user":
                turns.append(self.renderer.turn(voices[fact.speaker], fact.speaker, text, fact.cue, fact.sound))
            else:
                turns.append(dataclasses.replace(turn, text=text))
        return self.session(tuple(turns), session.role, fact, f"{session.source}+{edit}")

    def filler_session(self, voices: dict[str, Voice], rng: np.random.Generator) -> Session:
        """A filler session, spoken by a random user, sometimes with a cue or sound.

        It takes exchanges from the next corpus dialogues until it has as many user turns as a
        topical session (2-3), so session length does not reveal a session's role.
        """
        n_user = int(rng.integers(2, 4))
        user_texts: list[str] = []
        assistant_texts: list[str] = []
        while len(user_texts) < n_user:
            users, assistants = self.fillers.dialogue(self.next_filler)
            self.next_filler += 1
            user_texts += users
            assistant_texts += assistants
        user_texts, assistant_texts = user_texts[:n_user], assistant_texts[:n_user]
        speaker = sorted(voices)[int(rng.integers(len(voices)))]
        cue = str(rng.choice(STATE_CUES)) if rng.random() < self.cue_rate else "neutral"
        sound = str(rng.choice(self.sound_classes)) if rng.random() < self.sound_rate else ""
        turns: list[Turn] = []
        for u, a in zip(user_texts, assistant_texts):
            turns.append(self.renderer.turn(voices[speaker], speaker, u, cue, sound))
            turns.append(Turn(role="assistant", text=a))
        return self.session(tuple(turns), "filler", None, self.fillers.name)

    def session(self, turns: tuple[Turn, ...], role: str, fact: SessionFact | None, source: str) -> Session:
        """The :class:`Session` of ``turns``: its tokens (header included) and content-hashed id."""
        count = self.header_tokens + sum(
            audio_tokens(t.duration_s) if t.role == "user" else self.tokens.count(t.text) for t in turns
        )
        content = "|".join(f"{t.role}:{t.audio or t.text}" for t in turns) + (fact.to_json() if fact else "")
        sid = hashlib.sha256(content.encode()).hexdigest()[:16]
        return Session(session_id=sid, role=role, turns=turns, fact=fact, tokens=count, source=source)
