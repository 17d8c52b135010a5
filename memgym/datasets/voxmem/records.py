"""VoxMem's records: plans (question + evidence before any words), sessions, episodes.

A :class:`Plan` fixes the question, the gold answer and the sessions the history needs, each as
a :class:`SessionFact` (structured content: subject, stated value, speaker, cue, background
sound). Dialogue writing turns each fact into :class:`Turn` texts; rendering adds audio; the
history assembler orders sessions, adds haystacks and fillers and stamps times. A
:class:`VoxMemEpisode` is one item at one context budget: the ordered sessions (formation) and
the question (use).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.core.episode import Episode
from memgym.core.records import Record, record

SessionRole = Literal["evidence", "haystack", "filler"]


@record("voxmem.fact")
@dataclasses.dataclass(frozen=True, kw_only=True)
class SessionFact(Record):
    """What a topical session conveys, in structured form (the oracle reads these).

    Attributes:
        family: topic family name.
        subject: what the session is about ("the kitchen renovation").
        value: the slot value the user states; ``""`` when the session states none.
        speaker: the user id who speaks in the session (one user per session).
        cue: paralinguistic cue the user's turns are spoken with (``"neutral"`` if none).
        sound: environmental sound class audible under the user's turns; ``""`` for none.
        update: the value is phrased as an explicit change ("the budget is now ...").
    """

    family: str
    subject: str
    value: str = ""
    speaker: str = ""
    cue: str = "neutral"
    sound: str = ""
    update: bool = False


@record("voxmem.query")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Query(Record):
    """The structured question the oracle answers over a history's facts.

    Attributes:
        evidence, operation, subtype: the cell and subtype (for AR: of the source question).
        asker: user id whose voice asks the question ("I" in the question).
        family: topic family.
        subjects: the subject(s) the question names.
        cue: target cue (cue-to-fact, counting) or ``""``.
        sound: target sound class or ``""``.
        options: the two options of a comparing question.
        point: 0-based occurrence index for at-a-point questions.
    """

    evidence: str
    operation: str
    subtype: str
    asker: str
    family: str
    subjects: tuple[str, ...]
    cue: str = ""
    sound: str = ""
    options: tuple[str, ...] = ()
    point: int = 0


@record("voxmem.session_plan")
@dataclasses.dataclass(frozen=True, kw_only=True)
class SessionPlan(Record):
    """A session a plan needs: its role and fact, and its rank where order matters (TET)."""

    key: str
    role: SessionRole
    fact: SessionFact
    order: int = -1


@record("voxmem.plan")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Plan(Record):
    """One item before any words: question, gold answer, needed sessions, validity constraints.

    Attributes:
        plan_id: unique id.
        evidence, operation, subtype: the cell and subtype.
        query: structured question (the oracle recomputes ``answer`` from it).
        question: natural-language question (the asker's words).
        answer: gold answer.
        users: user ids of the history (``users[0]`` is not necessarily the asker).
        sessions: evidence and item-specific haystack sessions.
        audio_native: the answer must not be recoverable from transcripts.
        ordered: evidence order matters (kept when histories are assembled).
        source_plan_id: for AR items, the plan whose history is reused.
        ar_edits: for AR items, session key -> edit (``"drop_context"``, ``"drop_cue"`` or ``"revoice"``).
    """

    plan_id: str
    evidence: str
    operation: str
    subtype: str
    query: Query
    question: str
    answer: str
    users: tuple[str, ...]
    sessions: tuple[SessionPlan, ...]
    audio_native: bool
    ordered: bool = False
    source_plan_id: str = ""
    ar_edits: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def cell(self) -> str:
        """``"evidence/operation"``."""
        return f"{self.evidence}/{self.operation}"


@record("voxmem.turn")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Turn(Record):
    """One turn. User turns are audio (+ their words as transcript); assistant turns are text.

    Attributes:
        role: ``"user"`` or ``"assistant"``.
        text: the words (the transcript; never names speaker, tone or sound).
        user: speaking user id (user turns).
        cue: paralinguistic cue the turn is spoken with.
        sound: environmental sound class mixed under the turn (``""`` = none).
        audio: dataset-relative path of the rendered FLAC (user turns, after rendering).
        plain_audio: path of the paired rendition with cue and sound removed (``""`` if identical).
        duration_s: audio duration in seconds.
        snr_db: achieved SNR of the mixed sound (``nan`` when no sound).
        cue_delta: the cue's acoustic feature difference against the plain pair (QC).
        clipped: fraction of samples at full scale (QC).
    """

    role: Literal["user", "assistant"]
    text: str
    user: str = ""
    cue: str = "neutral"
    sound: str = ""
    audio: str = ""
    plain_audio: str = ""
    duration_s: float = 0.0
    snr_db: float | None = None
    cue_delta: float | None = None
    clipped: float = 0.0


@record("voxmem.session")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Session(Record):
    """One session of a history.

    Attributes:
        session_id: content-derived id (same content -> same id across items and budgets).
        role: evidence, haystack or filler.
        turns: alternating user / assistant turns.
        fact: structured content (``None`` for fillers).
        timestamp: ISO-8601 start time (set when placed in a history).
        tokens: Whisper-encoder audio tokens + text tokens of this session (incl. its header).
        source: where a haystack/filler came from (``"written"``, ``"borrowed:<plan>"``, corpus name).
    """

    session_id: str
    role: Literal["evidence", "haystack", "filler"]
    turns: tuple[Turn, ...]
    fact: SessionFact | None = None
    timestamp: str = ""
    tokens: int = 0
    source: str = "written"


@record("voxmem.episode")
@dataclasses.dataclass(frozen=True, kw_only=True)
class VoxMemEpisode(Episode):
    """One VoxMem item at one context budget.

    Attributes:
        budget: context budget in tokens (8192, 16384, 32768, 65536).
        sessions: the history, in order, with timestamps.
        tokens: the history's token count (audio at 50 tokens/s + text tokens).
        question_audio: dataset-relative path of the question spoken in the asker's voice.
    """

    budget: int = 0
    sessions: tuple[Session, ...] = ()
    tokens: int = 0
    question_audio: str = ""
