"""Building a VoxMem dataset: plans -> words -> audio -> nested histories -> QC -> files.

Output folder::

    manifest.jsonl     one VoxMemEpisode per (item, budget): sessions with timestamps, question
    plans.jsonl        the plans (question, gold answer, evidence, constraints)
    qc_report.json/md  the quality-control report
    config.yaml        the config that built it
    audio/             content-hashed FLAC per user turn (+ cue/sound-removed pairs)

Items cycle through the 15 cells (and their subtypes). An AR item is derived from an IE, MSR or
TET item of the same evidence type in the same dataset (its source, :meth:`VoxMemBuilder.layout`)
and reuses that item's history: the edited evidence sessions keep their words and turns
(:meth:`VoxMemBuilder.edited_session`), every other session is shared. An item whose plan fails
QC is redrawn (up to ``max_revisions`` times) and otherwise discarded.

Redrawing, for checks that reject a draw: an item is redrawn by :meth:`VoxMemBuilder.attempt`
with the next ``attempt`` (a new plan and history from the item's sub-seed); a topical session by
:meth:`VoxMemBuilder.topical_session` with ``redraw > 0`` (new words for the same fact); a filler
by :meth:`VoxMemBuilder.filler_session` with another generator. An AR item's edited sessions are
not redrawn (their words are the source's); its next attempt takes another source.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memgym.backends.asr import ASRConfig
from memgym.backends.tts import TTSConfig, make_tts_backend
from memgym.backends.tts.base import Voice
from memgym.core.config import dump_config
from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError, MemgymError
from memgym.core.executors import executor_field
from memgym.core.outcome import note_dropped
from memgym.core.records import write_jsonl
from memgym.core.seeding import ADDED_FIELD, config_hash, episode_rng
from memgym.datasets.sources.factory import LibraryConfig, open_library
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.speech.vctk import VCTKCorpus
from memgym.datasets.speech.voices import assign_voices, espeak_voice_bank, named_voice_bank
from memgym.datasets.voxmem import qc
from memgym.datasets.voxmem.filler import FillerCorpus, GeneratedFillerCorpus, InstructS2SCorpus
from memgym.datasets.voxmem.history import (
    HEADER_TEMPLATE,
    BudgetFillError,
    BudgetTooSmallError,
    core_order,
    nest_histories,
    timestamps,
)
from memgym.datasets.voxmem.oracle import answer_query, sound_label
from memgym.datasets.voxmem.plans import MIN_USERS, STATE_CUES, derive_refusal, plan_item, refusal_edit
from memgym.datasets.voxmem.qc_model import ModelQC
from memgym.datasets.voxmem.qc_model import report_section as qc_model_report
from memgym.datasets.voxmem.records import Plan, Query, Session, SessionFact, Turn, VoxMemEpisode
from memgym.datasets.voxmem.render import TurnRenderer, library_clip_source
from memgym.datasets.voxmem.separability import derivation_families, item_root, separability
from memgym.datasets.voxmem.taxonomy import CELLS, OPERATIONS, REFUSAL, SUBTYPES, cell_name
from memgym.datasets.voxmem.tokens import TokenCounter, audio_tokens
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME
from memgym.datasets.voxmem.writing import (
    DialogueWriter,
    LLMWriter,
    TemplateWriter,
    paraphrase_question,
    replace_phrase,
)

AR_HEADROOM = 0.4
"""Share of the evidence's tokens left free in the histories of items an AR item can be derived
from, so the edit (a statement re-voiced by a slower voice: at most 200/145 wpm = +38 %, or a cue
removed) cannot push the reused history over its budget."""
FIT_ATTEMPTS = 6
"""New candidate sessions tried when the next one does not fit the remaining budget."""
HAYSTACK_TRIES = 20
"""Candidate haystacks drawn per added haystack before a level falls back to fillers."""

DEFAULT_SOUND_CLASSES: tuple[str, ...] = (
    "airplane", "car_horn", "chainsaw", "chirping_birds", "church_bells", "clock_alarm", "clock_tick",
    "crackling_fire", "crickets", "dog", "door_wood_knock", "engine", "footsteps", "hand_saw", "helicopter",
    "keyboard_typing", "pouring_water", "rain", "rooster", "sea_waves", "siren", "thunderstorm", "toilet_flush",
    "train", "vacuum_cleaner", "washing_machine", "water_drops", "wind",
)  # fmt: skip
"""Background sounds (traffic, alarms, machinery, household, weather, animals); no human vocal sounds."""


@dataclasses.dataclass(frozen=True)
class VoxMemConfig:
    """Configuration of ``memgym generate voxmem``."""

    items: int = dataclasses.field(default=15, metadata={"help": "number of items (cycling over the cells)", "min": 1})
    cells: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "cells to build, e.g. [speaker/IE,sound/IE,sound/AR] (AR needs a source cell); empty = all 15"
        },
    )
    budgets: tuple[str, ...] = dataclasses.field(
        default=("8k", "16k", "32k", "64k"), metadata={"help": "context budgets (8k = 8192 tokens)"}
    )
    seed: int = dataclasses.field(default=0, metadata={"help": "dataset seed"})
    out: str = dataclasses.field(default="runs/voxmem/dataset", metadata={"help": "output dataset folder"})
    tts: TTSConfig = dataclasses.field(default_factory=TTSConfig, metadata={"help": "speech synthesis backend"})
    library: LibraryConfig = dataclasses.field(
        default_factory=LibraryConfig, metadata={"help": "environmental sound library (synthetic_env or esc50)"}
    )
    sound_classes: tuple[str, ...] = dataclasses.field(
        default=DEFAULT_SOUND_CLASSES, metadata={"help": "sound classes used as background sounds"}
    )
    snr_db: float = dataclasses.field(
        default=15.0, metadata={"help": "speech-to-sound SNR in dB on the speech's active region (see docs/voxmem.md)"}
    )
    users: int = dataclasses.field(default=3, metadata={"help": "users per history (distinct voices)", "min": 1})
    writer: Literal["template", "llm"] = dataclasses.field(
        default="template", metadata={"help": "dialogue writer: template (offline) or llm (needs reasoner)"}
    )
    reasoner: str = dataclasses.field(default="", metadata={"help": "registered reasoner name for writer=llm"})
    qc_reasoner: str = dataclasses.field(
        default="", metadata={"help": "registered reasoner answering from transcripts only (QC report); empty = off"}
    )
    vctk_root: str = dataclasses.field(
        default="", metadata={"help": "VCTK folder: user voices are VCTK speakers (tts.kind openai or hf)"}
    )
    filler_path: str = dataclasses.field(
        default="", metadata={"help": "InstructS2S JSON/JSONL file or folder; empty = generated fillers"}
    )
    tokenizer: str = dataclasses.field(
        default="gpt2-pretok", metadata={"help": "text tokenizer: gpt2-pretok or hf:<local folder>"}
    )
    max_session_reuse: int = dataclasses.field(
        default=4, metadata={"help": "most items whose histories may share one session"}
    )
    haystacks_per_level: int = dataclasses.field(
        default=2,
        metadata={
            "help": "haystacks added at every budget level (borrowed from items on the same topic family, else written)"
        },
    )
    length_control: Literal["none", "fixed_competition"] = dataclasses.field(
        default="none",
        metadata={
            "help": "none: every budget level adds same-subject haystacks; fixed_competition: only the first "
            "(smallest) budget does, longer histories add other-subject haystacks and fillers only",
            **ADDED_FIELD,
        },
    )
    refusal_scope: Literal["words_kept", "every_subtype"] = dataclasses.field(
        default="words_kept",
        metadata={
            "help": "answer refusal: words_kept (audio-native items refused only by removing their tone, sound or "
            "voice link) or every_subtype (also by removing the evidence's subject, so every IE/MSR/TET subtype "
            "yields AR items; those are visible in the transcript)",
            **ADDED_FIELD,
        },
    )
    filler_cue_rate: float = dataclasses.field(default=0.2, metadata={"help": "share of filler sessions with a cue"})
    filler_sound_rate: float = dataclasses.field(default=0.3, metadata={"help": "share of filler sessions with sound"})
    max_revisions: int = dataclasses.field(default=2, metadata={"help": "redraws of an item that fails QC"})
    asr: ASRConfig = dataclasses.field(
        default_factory=ASRConfig,
        metadata={"help": "speech recogniser of the QC intelligibility gate (asr.kind=none: no gate)"},
    )
    qc_model: str = dataclasses.field(
        default="",
        metadata={
            "help": "QC-1 model pass over evidence sessions: '' (off), offline (recogniser + signal measurements), "
            "or an audio LM spec (hf_audio:<folder>, openai:<model>@<url>)",
            **ADDED_FIELD,
        },
    )
    executor: Literal["local", "ray"] = executor_field(
        "local only: items build on earlier items' sessions (ray is refused; eval voxmem takes it)"
    )


def voice_bank(config: VoxMemConfig) -> list[Voice]:
    """The user voices: eSpeak's embedded bank, the backend's named voices, or VCTK speakers.

    With ``vctk_root`` each voice is one VCTK speaker carrying a reference recording; for ``hf``
    models its name is the speaker's index in ``speaker-info.txt`` order (the speaker id of
    multi-speaker models trained on VCTK), for ``openai`` the VCTK id (``p225``).
    """
    kind = config.tts.kind
    if config.vctk_root:
        if kind == "espeak":
            raise ConfigError("vctk_root needs tts.kind=openai or tts.kind=hf (eSpeak cannot speak VCTK voices)")
        corpus = VCTKCorpus(config.vctk_root)
        order = sorted(corpus.speakers)
        voices = corpus.voices(kind)
        return [dataclasses.replace(v, name=str(order.index(v.name))) for v in voices] if kind == "hf" else voices
    return espeak_voice_bank() if kind == "espeak" else named_voice_bank(kind, config.tts.voices)


def parse_budget(text: str) -> int:
    """``"8k"`` -> 8192, ``"8192"`` -> 8192."""
    raw = str(text).strip().lower()
    try:
        value = int(float(raw[:-1]) * 1024) if raw.endswith("k") else int(raw)
    except ValueError:
        raise ConfigError(f"budgets: '{text}' is not a token count like 8k or 8192") from None
    if value <= 0:
        raise ConfigError(f"budgets: '{text}' must be positive")
    return value


def _ordered_facts(plan: Plan) -> list[SessionFact]:
    """The plan's facts with ranked (TET) sessions first in rank order, as the oracle reads them."""
    return [s.fact for s in sorted(plan.sessions, key=lambda s: (s.order < 0, s.order))]


@dataclasses.dataclass
class _AnswerCheck:
    """A query, the facts of a history so far and the answer they must keep giving."""

    query: Query
    facts: list[SessionFact]
    answer: str

    def holds_with(self, fact: SessionFact) -> bool:
        """Whether the answer stays with ``fact`` added wherever it lands in the history (a
        haystack on the question's subject could otherwise change a latest or ordered answer)."""
        return all(
            answer_query(self.query, [*self.facts[:k], fact, *self.facts[k:]]) == self.answer
            for k in range(len(self.facts) + 1)
        )


@dataclasses.dataclass
class _History:
    """An item's assembled history (shared with the AR items derived from it)."""

    placed: list[Any]  # core index (int) or extra Session
    histories: dict[int, list[int]]
    stamps: list[str]
    voices: dict[str, Voice]


class VoxMemBuilder:
    """Builds datasets and single episodes.

    Args:
        config: the build config.
        reasoner: a :class:`~memgym.core.protocols.Reasoner` for the LLM writer (overrides
            ``config.reasoner``).
        qc_reasoner: a text-only Reasoner for the transcript QC check (overrides ``config.qc_reasoner``).
        progress: show progress bars.
    """

    def __init__(
        self, config: VoxMemConfig, *, reasoner=None, qc_reasoner=None, qc_model=None, progress: bool = False
    ) -> None:
        self.config = config
        self.budgets = sorted({parse_budget(b) for b in config.budgets})
        if not self.budgets:
            raise ConfigError("budgets is empty; expected e.g. [8k,16k,32k,64k]")
        if config.items < 1:
            raise ConfigError(f"items must be at least 1, got {config.items}")
        names = {cell_name(*c): c for c in CELLS}
        unknown = [c for c in config.cells if c not in names]
        if unknown:
            raise ConfigError(f"cells {unknown} are not VoxMem cells; valid: {sorted(names)}")
        self.cells = [names[c] for c in config.cells] or list(CELLS)
        self.out = Path(config.out)
        self.progress = progress
        # seeds plans and histories; the length control is left out so both settings draw the same items
        self.digest = config_hash(dataclasses.replace(config, out="", length_control="none"))
        self.backend = make_tts_backend(config.tts)
        self.voice_bank = voice_bank(config)
        if not MIN_USERS <= config.users <= len(self.voice_bank):
            raise ConfigError(
                f"users: expected {MIN_USERS} to {len(self.voice_bank)} users per history (speaker questions and "
                f"answer refusal need two voices; the {config.tts.kind} voice bank has {len(self.voice_bank)}), "
                f"got {config.users}"
            )
        if config.haystacks_per_level < 0:
            raise ConfigError(f"haystacks_per_level must be >= 0, got {config.haystacks_per_level}")
        library = open_library(config.library)
        known = set(library.identities())
        missing = [s for s in config.sound_classes if s not in known]
        if missing:
            raise ConfigError(f"sound_classes {missing} are not in the '{config.library.kind}' sound library")
        self.sound_classes = list(config.sound_classes)
        self.renderer = TurnRenderer(
            self.out, self.backend, library_clip_source(library), library.fingerprint(), config.snr_db
        )
        self.tokens = TokenCounter(config.tokenizer)
        self.header_tokens = self.tokens.count(HEADER_TEMPLATE.format(index=100, timestamp="2025-01-01 12:00"))
        self.fillers: FillerCorpus = (
            InstructS2SCorpus(config.filler_path) if config.filler_path else GeneratedFillerCorpus()
        )
        self.writer: DialogueWriter = TemplateWriter()
        if config.writer == "llm":
            if reasoner is None:
                if not config.reasoner:
                    raise ConfigError("writer=llm needs reasoner=<registered reasoner name>")
                from memgym.core.registry import REASONERS

                reasoner = REASONERS.get(config.reasoner)()
            self.writer = LLMWriter(reasoner, sound_labels=[s.replace("_", " ") for s in self.sound_classes])
        if qc_reasoner is None and config.qc_reasoner:
            from memgym.core.registry import REASONERS

            qc_reasoner = REASONERS.get(config.qc_reasoner)()
        self.qc_reasoner = qc_reasoner
        self.gate = qc.intelligibility_gate(self.out, config.asr)  # None with asr.kind=none
        self.model_qc = self._model_qc(qc_model)
        self._filler_next = 0
        self._usage: dict[str, set[str]] = {}
        self._layout: tuple[list[tuple[str, str, str]], dict[int, int]] | None = None
        self.check_failures: dict[str, int] = {}

    def _model_qc(self, model) -> ModelQC | None:
        """The QC-1 model pass ``config.qc_model`` names (``model``: the audio LM of a model spec)."""
        spec = self.config.qc_model
        if not spec:
            return None
        if spec == "offline":
            return ModelQC(self.out, transcribe=self.gate.transcript if self.gate is not None else None)
        if model is None:
            raise ConfigError(
                f"qc_model={spec}: pass the audio LM as VoxMemBuilder(config, qc_model=...) "
                "('memgym generate voxmem' builds it from the spec)"
            )
        return ModelQC(self.out, model=model)

    # ----- plans ------------------------------------------------------------------------------------
    def schedule(self) -> list[tuple[str, str, str]]:
        """(evidence, operation, subtype) of every item, cycling cells then subtypes (before :meth:`layout`)."""
        out = []
        for i in range(self.config.items):
            evidence, operation = self.cells[i % len(self.cells)]
            subs = SUBTYPES[operation]
            out.append((evidence, operation, subs[(i // len(self.cells)) % len(subs)]))
        return out

    def layout(self) -> tuple[list[tuple[str, str, str]], dict[int, int]]:
        """Every item's (evidence, operation, subtype), and the source item of every AR item.

        Each AR item gets its own non-AR item of the same evidence type from this dataset: the
        first unused one (of the operation its subtype names, then IE, MSR, TET) whose plan can be
        refused (:func:`refusal_edit`). When no unused one can, the first unused one whose cell
        has a refusable subtype is switched to that subtype (speaker and sound evidence can only
        be refused for some subtypes, e.g. speaker IE cue-to-fact but not context-to-cue).

        Returns:
            ``(schedule, sources)``: the schedule and AR item index -> source item index.
        Raises:
            ConfigError: an AR item has no possible source among the dataset's items.
        """
        if self._layout is not None:
            return self._layout
        schedule = self.schedule()
        sources: dict[int, int] = {}
        for index, (evidence, operation, subtype) in enumerate(schedule):
            if operation != "AR":
                continue
            wanted = subtype.removeprefix("from_")
            free = [
                j for j, (e, op, _) in enumerate(schedule) if e == evidence and op != "AR" and j not in sources.values()
            ]
            free.sort(key=lambda j: (schedule[j][1] != wanted, OPERATIONS.index(schedule[j][1]), j))
            pick = next((j for j in free if self._refusable(j, schedule[j])), None)
            for j in free if pick is None else ():
                sub = next((t for t in SUBTYPES[schedule[j][1]] if self._refusable(j, (*schedule[j][:2], t))), None)
                if sub is not None:
                    schedule[j], pick = (*schedule[j][:2], sub), j
                    break
            if pick is None:
                usable = [
                    f"{evidence}/{op} ({sub})"
                    for (e, op) in CELLS
                    if e == evidence and op != "AR"
                    for sub in SUBTYPES[op]
                    if self._refusable(index, (e, op, sub))
                ]
                raise ConfigError(
                    f"cells/items: AR item {index} ({evidence}/AR) has no {evidence} item left to derive from (an AR "
                    f"item reuses the history of its own item of the same evidence type); {evidence} AR items can "
                    f"derive from {', '.join(usable)}: add such cells or more items"
                )
            sources[index] = pick
        self._layout = (schedule, sources)
        return self._layout

    def _may_be_refused(self, plan: Plan) -> bool:
        """Whether an AR item may be derived from ``plan``, so its history keeps that item's refusal too.

        An edit that removes the evidence of an audio-native item (``drop_context`` under
        ``refusal_scope=every_subtype``) would also rule out every haystack on the question's
        subject, so it is kept only for the items :meth:`layout` pairs with an AR item; other
        items keep their same-subject haystacks (a redrawn AR item deriving from them is checked
        by QC like any other).
        """
        edit = refusal_edit(plan, self.config.refusal_scope)
        if edit is None:
            return False
        if edit != "drop_context" or plan.evidence == "semantics":
            return True
        return int(item_root(plan.plan_id).removeprefix("vox")) in self.layout()[1].values()

    def _refusable(self, index: int, cell: tuple[str, str, str]) -> bool:
        return refusal_edit(self._draw(index, 0, cell), self.config.refusal_scope) is not None

    def _draw(self, index: int, attempt: int, cell: tuple[str, str, str]) -> Plan:
        """The unworded plan of non-AR item ``index`` with (evidence, operation, subtype) ``cell``."""
        rng = episode_rng(self.digest, self.config.seed, index + 100_003 * attempt)
        plan_id = f"vox{index:05d}" + (f"r{attempt}" if attempt else "")
        return plan_item(plan_id, *cell, self.sound_classes, rng, users=self.config.users)

    def plan(self, index: int, attempt: int, *, word: bool = True) -> Plan:
        """The plan of non-AR item ``index`` (redraw ``attempt``); AR plans come from :meth:`refusal_plan`.

        ``word=False`` skips rewording the question (plans only needed for their facts).
        """
        cell = self.layout()[0][index]
        if cell[1] == "AR":
            raise MemgymError(f"item {index} is an AR item; its plan is derived from its source (refusal_plan)")
        plan = self._draw(index, attempt, cell)
        return self._worded(plan) if word else plan

    def refusal_plan(self, index: int, attempt: int, asked: dict[int, Plan], taken: set[str]) -> Plan | None:
        """The plan of AR item ``index``, derived from a kept item of ``asked`` (index -> plan).

        Attempt 0 derives from the item :meth:`layout` paired it with; each further attempt from
        the next kept, refusable item of the same evidence type not ``taken`` by another AR item
        (its operation first, then by index). ``None`` when no source is left.
        """
        schedule, sources = self.layout()
        evidence, _, subtype = schedule[index]
        wanted = subtype.removeprefix("from_")
        scope = self.config.refusal_scope
        candidates = sorted(
            (
                j
                for j, p in asked.items()
                if p.evidence == evidence and p.plan_id not in taken and refusal_edit(p, scope)
            ),
            key=lambda j: (j != sources[index], asked[j].operation != wanted, j),
        )
        if attempt >= len(candidates):
            return None
        plan_id = f"vox{index:05d}" + (f"r{attempt}" if attempt else "")
        return derive_refusal(asked[candidates[attempt]], plan_id, scope)

    def _worded(self, plan: Plan) -> Plan:
        """The plan with its question reworded by the LLM writer's reasoner (template writer: unchanged)."""
        if not isinstance(self.writer, LLMWriter):
            return plan
        keep = [*plan.query.subjects, *(sound_label(o) for o in plan.query.options)]
        keep += [sound_label(plan.query.sound)] if plan.query.sound else []
        keep += [CUE_WORDS[plan.query.cue]] if plan.query.cue else []
        question, _ = paraphrase_question(self.writer.reasoner, plan.question, keep)
        return dataclasses.replace(plan, question=question)

    # ----- sessions ----------------------------------------------------------------------------------
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
        return self._session(tuple(turns), role, fact, f"{source}:{writer}")

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
        return self._session(tuple(turns), session.role, fact, f"{session.source}+{edit}")

    def filler_session(self, voices: dict[str, Voice], rng: np.random.Generator) -> Session:
        """A filler session, spoken by a random user, sometimes with a cue or sound.

        It takes exchanges from the next corpus dialogues until it has as many user turns as a
        topical session (2-3), so session length does not reveal a session's role.
        """
        n_user = int(rng.integers(2, 4))
        user_texts: list[str] = []
        assistant_texts: list[str] = []
        while len(user_texts) < n_user:
            users, assistants = self.fillers.dialogue(self._filler_next)
            self._filler_next += 1
            user_texts += users
            assistant_texts += assistants
        user_texts, assistant_texts = user_texts[:n_user], assistant_texts[:n_user]
        speaker = sorted(voices)[int(rng.integers(len(voices)))]
        cue = str(rng.choice(STATE_CUES)) if rng.random() < self.config.filler_cue_rate else "neutral"
        sound = str(rng.choice(self.sound_classes)) if rng.random() < self.config.filler_sound_rate else ""
        turns: list[Turn] = []
        for u, a in zip(user_texts, assistant_texts):
            turns.append(self.renderer.turn(voices[speaker], speaker, u, cue, sound))
            turns.append(Turn(role="assistant", text=a))
        return self._session(tuple(turns), "filler", None, self.fillers.name)

    def _session(self, turns: tuple[Turn, ...], role: str, fact: SessionFact | None, source: str) -> Session:
        count = self.header_tokens + sum(
            audio_tokens(t.duration_s) if t.role == "user" else self.tokens.count(t.text) for t in turns
        )
        content = "|".join(f"{t.role}:{t.audio or t.text}" for t in turns) + (fact.to_json() if fact else "")
        sid = hashlib.sha256(content.encode()).hexdigest()[:16]
        return Session(session_id=sid, role=role, turns=turns, fact=fact, tokens=count, source=source)

    # ----- histories ---------------------------------------------------------------------------------
    def assemble(self, plan: Plan, pool: list[Plan], rng: np.random.Generator) -> tuple[_History, list[Session]]:
        """Render the plan's sessions and grow its nested histories.

        Every budget level adds up to ``haystacks_per_level`` haystacks (:meth:`_next_haystack`)
        and then fillers, so each longer history holds more of both. Under
        ``length_control=fixed_competition`` the haystacks added above the smallest budget are
        never on the question's subjects (:meth:`fixed_competition`).
        """
        voices = assign_voices(list(plan.users), self.voice_bank, rng)
        self._filler_next = int(rng.integers(len(self.fillers)))  # fillers depend on this item's generator only
        core = [self.topical_session(s.fact, s.role, voices, "written") for s in plan.sessions]
        order = core_order([s.order for s in plan.sessions], rng)
        used_subjects = {s.fact.subject for s in plan.sessions} | set(plan.query.subjects)
        borrowable = [
            (p.plan_id, s.fact)
            for p in pool
            if p.query.family == plan.query.family and p.plan_id != plan.plan_id
            for s in p.sessions
            if s.role == "evidence" and s.fact.subject not in used_subjects
        ]
        can_be_edited = self._may_be_refused(plan)
        checks = [_AnswerCheck(plan.query, _ordered_facts(plan), plan.answer)]
        if can_be_edited:  # an added session must not give the AR item derived from this one an answer
            checks.append(
                _AnswerCheck(plan.query, _ordered_facts(derive_refusal(plan, "", self.config.refusal_scope)), REFUSAL)
            )
        level_haystacks = {budget: 0 for budget in self.budgets}  # haystacks placed at each level
        pending: list[Session] = []  # rendered candidates that did not fit yet (used first later)

        def competing(session: Session, budget: int) -> bool:  # a same-subject haystack the control keeps out
            return self.fixed_competition(budget) and session.fact.subject in plan.query.subjects

        def fresh(haystack: bool, budget: int) -> Session | None:
            if haystack:
                on_subject = not self.fixed_competition(budget)
                return self._next_haystack(plan, borrowable, checks, voices, rng, on_subject=on_subject)
            return self._next_filler(voices, rng)

        def next_extra(remaining: int, budget: int):
            kinds = (True, False) if level_haystacks[budget] < self.config.haystacks_per_level else (False,)
            for haystack in kinds:  # this level's haystacks first, then fillers
                fits = [
                    k
                    for k, c in enumerate(pending)
                    if (c.role == "haystack") == haystack
                    and c.tokens <= remaining
                    and not (haystack and competing(c, budget))
                ]
                candidate = pending.pop(fits[0]) if fits else None
                for _ in range(0 if candidate else FIT_ATTEMPTS):
                    new = fresh(haystack, budget)
                    if new is None or new.tokens <= remaining:
                        candidate = new
                        break
                    pending.append(new)
                if candidate is not None:
                    level_haystacks[budget] += haystack
                    return candidate, candidate.tokens
            return None

        evidence_tokens = sum(c.tokens for c, s in zip(core, plan.sessions) if s.role == "evidence")
        headroom = int(AR_HEADROOM * evidence_tokens) if can_be_edited else 0  # AR edits happen in place
        try:
            placed, histories = nest_histories(
                [s.tokens for s in core], order, self.budgets, next_extra, rng, headroom=headroom
            )
        except BudgetTooSmallError as exc:
            raise BudgetTooSmallError(f"item {plan.plan_id} ({plan.cell}/{plan.subtype}): {exc}") from None
        stamps = timestamps(len(placed), rng)
        order_long = histories[self.budgets[-1]]
        stamp_of = {idx: stamps[k] for k, idx in enumerate(order_long)}
        history = _History(placed, histories, [stamp_of[i] for i in range(len(placed))], voices)
        return history, core

    def fixed_competition(self, budget: int) -> bool:
        """Whether haystacks added while filling ``budget`` stay off the question's subjects
        (``length_control=fixed_competition`` above the smallest budget)."""
        return self.config.length_control == "fixed_competition" and budget > self.budgets[0]

    def _next_haystack(self, plan, borrowable, checks, voices, rng, *, on_subject: bool = True) -> Session | None:
        """A haystack for ``plan``'s history that supplies no alternative answer, or ``None``.

        For audio-native items every other haystack is first tried on the question's own subject
        (:meth:`_written_haystack` with ``same_subject``: told from the evidence only by voice, tone
        or background), so longer histories hold more sessions that topic matching cannot rule
        out; otherwise evidence sessions borrowed from other items on the same topic family come
        first, then sessions written for the item on other subjects. Each is kept only when the
        oracle still gives every answer in ``checks`` with it (the item's, and the refusal of the
        AR item derivable from it), its fact is not already in the history, and the session is not
        yet in ``max_session_reuse`` items' histories.
        """
        topical_first = on_subject and plan.audio_native and (len(checks[0].facts) - len(plan.sessions)) % 2 == 0
        for attempt in range(HAYSTACK_TRIES):
            if topical_first and attempt < HAYSTACK_TRIES // 2:
                fact, source = self._written_haystack(plan, rng, same_subject=True), "written"
            elif borrowable:
                source_id, fact = borrowable.pop(0)
                source = f"borrowed:{source_id}"
                fact = dataclasses.replace(fact, speaker=fact.speaker if fact.speaker in voices else plan.users[-1])
            else:
                fact, source = self._written_haystack(plan, rng), "written"
            if fact in checks[0].facts or not all(check.holds_with(fact) for check in checks):
                continue  # (a fact already in this history would repeat one of its sessions)
            session = self.topical_session(fact, "haystack", voices, source)
            if len(self._usage.get(session.session_id, ())) >= self.config.max_session_reuse:
                continue
            for check in checks:
                check.facts.append(fact)
            return session
        return None

    def _written_haystack(self, plan: Plan, rng: np.random.Generator, *, same_subject: bool = False) -> SessionFact:
        """A haystack written for ``plan``: one of its evidence sessions with another value (phrased
        the same way, so words do not tell it from evidence), by any user, in the question's cue or
        sound half the time for paralinguistic / sound items; moved to another subject of its
        family, or with ``same_subject`` kept on one of the question's subjects, where only the
        acoustic evidence (voice, tone, background) tells it from the evidence."""
        query = plan.query
        evidence = [s.fact for s in plan.sessions if s.role == "evidence"]
        like = evidence[int(rng.integers(len(evidence)))]
        family = FAMILY_BY_NAME[query.family]
        cue, sound = "neutral", ""
        if query.evidence == "paralinguistic":
            cue = query.cue if query.cue and rng.random() < 0.5 else str(rng.choice(STATE_CUES))
        targets = [x for x in (query.sound, *query.options) if x]
        if query.evidence == "sound":
            sound = str(rng.choice(targets)) if targets and rng.random() < 0.5 else str(rng.choice(self.sound_classes))
        elif rng.random() < 0.4:
            sound = str(rng.choice(self.sound_classes))
        return dataclasses.replace(
            like,
            subject=str(
                rng.choice(
                    list(query.subjects) if same_subject else [x for x in family.subjects if x not in query.subjects]
                )
            ),
            value=str(rng.choice([v for v in family.values if v != like.value])),
            speaker=str(rng.choice(plan.users)),
            cue=cue,
            sound=sound,
        )

    def _next_filler(self, voices: dict[str, Voice], rng: np.random.Generator) -> Session:
        for _ in range(len(self.fillers) + 1):
            session = self.filler_session(voices, rng)
            if len(self._usage.get(session.session_id, ())) < self.config.max_session_reuse:
                return session
        raise MemgymError(
            f"every filler dialogue is already used by {self.config.max_session_reuse} items; "
            "raise max_session_reuse or provide a larger filler corpus (filler_path)"
        )

    def episodes(self, plan: Plan, history: _History, core: list[Session]) -> list[VoxMemEpisode]:
        """One episode per budget (sessions stamped, headers implied by order)."""
        out = []
        for budget in self.budgets:
            sessions = []
            for idx in history.histories[budget]:
                session = core[idx] if isinstance(history.placed[idx], int) else history.placed[idx]
                sessions.append(dataclasses.replace(session, timestamp=history.stamps[idx]))
            asker_voice = history.voices[plan.query.asker]
            question_audio = self.renderer.render(asker_voice, plan.question).audio
            item = TaskItem(
                item_id=plan.plan_id,
                task="spoken_qa",
                prompt=plan.question,
                answer=plan.answer,
                annotations={
                    "cell": plan.cell,
                    "evidence": plan.evidence,
                    "operation": plan.operation,
                    "subtype": plan.subtype,
                    "budget": budget,
                    "audio_native": plan.audio_native,
                    "source_item": plan.source_plan_id,
                    "evidence_sessions": [
                        s.session_id
                        for s in sessions
                        if s.role == "evidence" and s.session_id in {c.session_id for c in core}
                    ],
                    "question_audio": question_audio,
                },
            )
            out.append(
                VoxMemEpisode(
                    episode_id=f"{plan.plan_id}@{budget}",
                    benchmark="voxmem",
                    items=(item,),
                    annotations={
                        "cell": plan.cell,
                        "budget": budget,
                        "tokenizer": self.tokens.name,
                        "voices": {user: voice.voice_id for user, voice in sorted(history.voices.items())},
                    },
                    budget=budget,
                    sessions=tuple(sessions),
                    tokens=sum(s.tokens for s in sessions),
                    question_audio=question_audio,
                )
            )
        return out

    def _failures(self, plan: Plan, episodes: list[VoxMemEpisode], attempt: int = 0) -> list[str]:
        histories = {e.budget: e.sessions for e in episodes}
        failed = qc.item_failures(plan, histories, {e.budget: e.tokens for e in episodes}, self.sound_classes)
        longest = episodes[-1].sessions
        core_ids = {s.session_id for s in longest if s.role != "filler"}
        failed += [
            f"session_{name}"
            for sid, names in qc.session_failures(longest, self.config.snr_db).items()
            if sid in core_ids
            for name in names
        ]
        if self.gate is not None:  # evidence turns must be heard by the offline recogniser
            failed += [f"session_{name}" for names in self.gate.failures(longest).values() for name in names]
        if self.model_qc is not None:  # a listener must hear what the evidence sessions carry
            found = self.model_qc.failures(longest, plan.plan_id, attempt)
            failed += [f"session_{name}" for names in found.values() for name in names]
        return sorted(set(failed))

    # ----- dataset -------------------------------------------------------------------------------------
    def build(self) -> Path:
        """Build the whole dataset under ``config.out``; returns the folder.

        Non-AR items are built first (in index order), then the AR items on their sources'
        histories; files list items in index order.
        """
        from tqdm import tqdm

        self.out.mkdir(parents=True, exist_ok=True)
        schedule, _ = self.layout()
        pool = [self.plan(i, 0, word=False) for i, cell in enumerate(schedule) if cell[1] != "AR"]
        kept: dict[int, tuple[Plan, list[VoxMemEpisode]]] = {}
        built: dict[str, tuple[_History, list[Session]]] = {}
        discarded, revised = [], 0
        order = sorted(range(self.config.items), key=lambda i: (schedule[i][1] == "AR", i))
        for index in tqdm(order, desc="voxmem items", disable=not self.progress):
            too_small: list[BudgetTooSmallError] = []
            asked = {i: plan for i, (plan, _) in kept.items() if plan.operation != "AR"}
            taken = {plan.source_plan_id for plan, _ in kept.values()}
            for attempt in range(self.config.max_revisions + 1):
                plan, failed, result = self.attempt(index, attempt, built, pool, asked, taken)
                if plan is None:  # an AR item without a source left
                    discarded.append({"item": f"vox{index:05d}", "failed": ["no_source"]})
                    break
                for name in failed:
                    key = name.split("@")[0]
                    self.check_failures[key] = self.check_failures.get(key, 0) + 1
                if isinstance(result, BudgetTooSmallError):
                    too_small.append(result)
                if not failed:
                    break
                revised += 1
            else:
                if len(too_small) == self.config.max_revisions + 1:
                    raise too_small[-1]  # no draw fits: the budget is too small, not the draw
                discarded.append({"item": plan.plan_id, "failed": failed})
                continue
            if plan is None:
                continue
            history, core, item_episodes = result
            kept[index] = (plan, item_episodes)
            built[plan.plan_id] = (history, core)
            for sid in {s.session_id for s in item_episodes[-1].sessions}:
                self._usage.setdefault(sid, set()).add(plan.plan_id)
        plans = [kept[i][0] for i in sorted(kept)]
        episodes = [e for i in sorted(kept) for e in kept[i][1]]
        write_jsonl(self.out / "manifest.jsonl", episodes)
        write_jsonl(self.out / "plans.jsonl", plans)
        dump_config(self.config, self.out / "config.yaml")
        self.write_qc(plans, episodes, discarded, revised)
        if discarded:  # said once on stderr by the CLI (memgym.core.outcome)
            first = discarded[0]
            hint = f"qc_report.md lists them; max_revisions={self.config.max_revisions} redraws each"
            note_dropped(
                len(discarded), self.config.items, f"{first['item']} failed {', '.join(first['failed'])}", hint
            )
        return self.out

    def attempt(
        self, index: int, attempt: int, built: dict, pool: list[Plan], asked: dict[int, Plan], taken: set[str]
    ) -> tuple[Plan | None, list[str], Any]:
        """One draw of item ``index``: ``(plan, failed checks, (history, core, episodes) or the error)``.

        A non-AR item draws plan ``attempt`` and assembles a fresh history from the item's
        sub-seed. An AR item derives from a source in ``asked`` (:meth:`refusal_plan`) and reuses
        the source's built history (``built``: plan id -> (history, core sessions)) with only the
        edited sessions replaced; ``(None, [], None)`` when no source is left.
        """
        if self.layout()[0][index][1] == "AR":
            plan = self.refusal_plan(index, attempt, asked, taken)
            if plan is None:
                return None, [], None
            history, source_core = built[plan.source_plan_id]
            core = [
                self.edited_session(c, s.fact, history.voices, plan.ar_edits[s.key]) if s.key in plan.ar_edits else c
                for s, c in zip(plan.sessions, source_core)
            ]
        else:
            plan = self.plan(index, attempt)
            rng = episode_rng(self.digest, self.config.seed, 1_000_000 + index + 100_003 * attempt)
            try:
                history, core = self.assemble(plan, pool, rng)
            except BudgetFillError as exc:
                return plan, ["budget_fill"], exc
            except BudgetTooSmallError as exc:
                return plan, ["budget_core"], exc
        item_episodes = self.episodes(plan, history, core)
        return plan, self._failures(plan, item_episodes, attempt), (history, core, item_episodes)

    def separability(self, episodes: list[VoxMemEpisode]) -> dict[str, Any]:
        """The text-only separability check over every evidence and haystack session of the
        dataset (each once, under the first item holding it), folds grouped by derivation family."""
        longest = {e.items[0].item_id: e for e in episodes if e.budget == self.budgets[-1]}
        items = [(i, e.items[0].annotations.get("source_item"), e.sessions) for i, e in sorted(longest.items())]
        families = derivation_families(items)
        first: dict[str, tuple[Session, str]] = {}
        for _, e in sorted(longest.items()):
            for s in e.sessions:
                if s.role in ("evidence", "haystack"):
                    first.setdefault(s.session_id, (s, e.items[0].annotations["evidence"]))
        ordered = [first[k] for k in sorted(first)]
        return separability(
            [s for s, _ in ordered],
            [families[s.session_id] for s, _ in ordered],
            [t for _, t in ordered],
            seed=self.config.seed,
        )

    def write_qc(self, plans: list[Plan], episodes: list[VoxMemEpisode], discarded: list, revised: int) -> Path:
        """Write the QC report next to the manifest.

        Besides the checks it records which item every AR item derives from (``ar_sources``) and
        the sessions of each role per budget, summed over items (``sessions_per_budget``).
        """
        counts = qc.reuse_counts(
            {
                p.plan_id: {s.session_id for s in e.sessions}
                for p in plans
                for e in episodes
                if e.items[0].item_id == p.plan_id
            }
        )
        turns = {t.audio: t.duration_s for e in episodes for s in e.sessions for t in s.turns if t.role == "user"}
        per_cell: dict[str, int] = {}
        for p in plans:
            per_cell[p.cell] = per_cell.get(p.cell, 0) + 1
        roles: dict[int, dict[str, int]] = {
            budget: {"evidence": 0, "haystack": 0, "filler": 0} for budget in self.budgets
        }
        for e in episodes:
            for s in e.sessions:
                roles[e.budget][s.role] += 1
        report = {
            "items_planned": self.config.items,
            "items_kept": len(plans),
            "discarded": discarded,
            "revised": revised,
            "check_failures": dict(self.check_failures),
            "items_per_cell": per_cell,
            "ar_sources": {p.plan_id: p.source_plan_id for p in plans if p.operation == "AR"},
            "sessions_per_budget": roles,
            "max_session_reuse": max(counts.values(), default=0),
            "reuse_limit": self.config.max_session_reuse,
            "audio_hours": sum(turns.values()) / 3600.0,
            "user_turns": len(turns),
            "budgets": self.budgets,
            "tokenizer": self.tokens.name,
            "tts": self.backend.identity(),
        }
        if self.gate is not None:
            report["intelligibility"] = self.gate.report(episodes)
        if self.model_qc is not None:
            report["model_qc"] = qc_model_report(self.model_qc.log, self.config.qc_model)
        report["separability"] = self.separability(episodes)
        if self.qc_reasoner is not None:
            smallest = [e for e in episodes if e.budget == self.budgets[0] and e.items[0].annotations["audio_native"]]
            solved = [e.items[0].item_id for e in smallest if qc.transcript_llm_solves(self.qc_reasoner, e)]
            chance = sum(0.5 if e.items[0].answer in ("yes", "no") else 0.0 for e in smallest)
            report["transcript_llm"] = {
                "asked": len(smallest),
                "solved": len(solved),
                "items": solved,
                "chance": chance,
            }
        return qc.write_report(self.out, report)
