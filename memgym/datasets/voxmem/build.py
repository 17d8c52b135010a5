"""Building a VoxMem dataset: plans -> words -> audio -> nested histories -> QC -> files.

Output folder::

    manifest.jsonl     one VoxMemEpisode per (item, budget): sessions with timestamps, question
    plans.jsonl        the plans (question, gold answer, evidence, constraints)
    qc_report.json/md  the quality-control report
    config.yaml        the config that built it
    audio/             content-hashed FLAC per user turn (+ cue/sound-removed pairs)

Items cycle through the 15 cells (and their subtypes). An AR item reuses the history of an
earlier item of the same evidence type (its source) with only the evidence sessions edited; when
no eligible source exists yet it derives from a source plan of its own that is not itself asked.
An item whose plan fails QC is redrawn (up to ``max_revisions`` times) and otherwise discarded.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memgym.backends.tts import TTSConfig, make_tts_backend
from memgym.backends.tts.base import Voice
from memgym.core.config import dump_config
from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError, MemgymError
from memgym.core.records import write_jsonl
from memgym.core.seeding import config_hash, episode_rng
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
from memgym.datasets.voxmem.plans import STATE_CUES, derive_refusal, plan_item, refusal_edit
from memgym.datasets.voxmem.records import Plan, Session, SessionFact, Turn, VoxMemEpisode
from memgym.datasets.voxmem.render import TurnRenderer, library_clip_source
from memgym.datasets.voxmem.taxonomy import CELLS, SUBTYPES, cell_name
from memgym.datasets.voxmem.tokens import TokenCounter, audio_tokens
from memgym.datasets.voxmem.writing import DialogueWriter, LLMWriter, TemplateWriter, paraphrase_question

AR_HEADROOM = 0.4
"""Share of the evidence's tokens left free in the histories of items an AR item can be derived
from, so the edit (a statement re-voiced by a slower voice: at most 200/145 wpm = +38 %, or a cue
removed) cannot push the reused history over its budget."""
FIT_ATTEMPTS = 6
"""New candidate sessions tried when the next one does not fit the remaining budget."""

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
        default=(), metadata={"help": "cells to build, e.g. [speaker/IE,sound/AR]; empty = all 15"}
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
    snr_db: float = dataclasses.field(default=10.0, metadata={"help": "speech-to-sound SNR on the active region"})
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
    borrow_per_level: int = dataclasses.field(
        default=2, metadata={"help": "borrowed haystacks added per budget level (when compatible ones exist)"}
    )
    filler_cue_rate: float = dataclasses.field(default=0.2, metadata={"help": "share of filler sessions with a cue"})
    filler_sound_rate: float = dataclasses.field(default=0.3, metadata={"help": "share of filler sessions with sound"})
    max_revisions: int = dataclasses.field(default=2, metadata={"help": "redraws of an item that fails QC"})


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

    def __init__(self, config: VoxMemConfig, *, reasoner=None, qc_reasoner=None, progress: bool = False) -> None:
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
        self.digest = config_hash(dataclasses.replace(config, out=""))
        self.backend = make_tts_backend(config.tts)
        self.voice_bank = voice_bank(config)
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
        self._filler_next = 0
        self._usage: dict[str, set[str]] = {}
        self.check_failures: dict[str, int] = {}

    # ----- plans ------------------------------------------------------------------------------------
    def schedule(self) -> list[tuple[str, str, str]]:
        """(evidence, operation, subtype) of every item, cycling cells then subtypes."""
        out = []
        for i in range(self.config.items):
            evidence, operation = self.cells[i % len(self.cells)]
            subs = SUBTYPES[operation]
            out.append((evidence, operation, subs[(i // len(self.cells)) % len(subs)]))
        return out

    def plan(self, index: int, attempt: int, asked: list[Plan], *, word: bool = True) -> Plan:
        """The plan of item ``index`` (redraw ``attempt``); AR items derive from ``asked`` plans.

        ``word=False`` skips rewording the question (plans only needed for their facts).
        """
        evidence, operation, subtype = self.schedule()[index]
        rng = episode_rng(self.digest, self.config.seed, index + 100_003 * attempt)
        plan_id = f"vox{index:05d}" + (f"r{attempt}" if attempt else "")
        if operation != "AR":
            plan = plan_item(plan_id, evidence, operation, subtype, self.sound_classes, rng)
            return self._worded(plan) if word else plan
        wanted = subtype.removeprefix("from_")
        ops = [wanted] + [op for op in ("IE", "MSR", "TET") if op != wanted and (evidence, op) in CELLS]
        ops = [op for op in ops if (evidence, op) in CELLS]
        for op in ops:  # prefer an asked item of the wanted operation, then of another one
            for source in reversed(asked):
                taken = any(p.source_plan_id == source.plan_id for p in asked)
                if source.evidence == evidence and source.operation == op and not taken and refusal_edit(source):
                    return derive_refusal(source, plan_id)
        for op in ops:  # no eligible asked source: a private one
            for sub in rng.permutation(SUBTYPES[op]):
                for _ in range(3):
                    source = self._worded(plan_item(plan_id + "src", evidence, op, str(sub), self.sound_classes, rng))
                    if refusal_edit(source):
                        return derive_refusal(source, plan_id)
        raise MemgymError(f"could not derive an AR item for {evidence}")

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
    def topical_session(self, fact: SessionFact, role: str, voices: dict[str, Voice], source: str) -> Session:
        """Write and render a topical session (evidence or haystack)."""
        seed = int.from_bytes(hashlib.sha256(fact.to_json().encode()).digest()[:8], "big")
        rng = np.random.default_rng(seed)
        n_user = int(rng.integers(2, 4))
        user, assistant, writer = self.writer.write(fact, n_user, rng)
        voice = voices[fact.speaker]
        turns: list[Turn] = []
        for u, a in zip(user, assistant):
            turns.append(self.renderer.turn(voice, fact.speaker, u, fact.cue, fact.sound))
            turns.append(Turn(role="assistant", text=a))
        return self._session(tuple(turns), role, fact, f"{source}:{writer}")

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
        """Render the plan's sessions and grow its nested histories."""
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
        facts = [s.fact for s in plan.sessions]
        state = {"borrowed_level": 0}
        pending: list[Session] = []  # rendered candidates that did not fit yet (used first later)

        def next_extra(remaining: int):
            for k, candidate in enumerate(pending):
                if candidate.tokens <= remaining:
                    return pending.pop(k), candidate.tokens
            for _ in range(FIT_ATTEMPTS):
                candidate = self._next_candidate(plan, borrowable, facts, voices, rng, state)
                if candidate.tokens <= remaining:
                    return candidate, candidate.tokens
                pending.append(candidate)
            return None

        evidence_tokens = sum(c.tokens for c, s in zip(core, plan.sessions) if s.role == "evidence")
        can_be_edited = plan.operation == "AR" or refusal_edit(plan) is not None
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

    def _next_candidate(self, plan, borrowable, facts, voices, rng, state) -> Session:
        while borrowable and state["borrowed_level"] < self.config.borrow_per_level * len(self.budgets):
            source_id, fact = borrowable.pop(0)
            fact = dataclasses.replace(fact, speaker=fact.speaker if fact.speaker in voices else plan.users[-1])
            if answer_query(plan.query, [*facts, fact]) != plan.answer:
                continue
            session = self.topical_session(fact, "haystack", voices, f"borrowed:{source_id}")
            if len(self._usage.get(session.session_id, ())) >= self.config.max_session_reuse:
                continue
            state["borrowed_level"] += 1
            return session
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

    def _failures(self, plan: Plan, episodes: list[VoxMemEpisode]) -> list[str]:
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
        return sorted(set(failed))

    # ----- dataset -------------------------------------------------------------------------------------
    def build(self) -> Path:
        """Build the whole dataset under ``config.out``; returns the folder."""
        from tqdm import tqdm

        self.out.mkdir(parents=True, exist_ok=True)
        asked: list[Plan] = []
        episodes: list[VoxMemEpisode] = []
        built: dict[str, tuple[_History, list[Session]]] = {}
        discarded, revised = [], 0
        schedule = self.schedule()
        all_plans = [
            self.plan(i, 0, [], word=False) if schedule[i][1] != "AR" else None for i in range(self.config.items)
        ]
        pool = [p for p in all_plans if p is not None]
        for index in tqdm(range(self.config.items), desc="voxmem items", disable=not self.progress):
            too_small: list[BudgetTooSmallError] = []
            for attempt in range(self.config.max_revisions + 1):
                plan, failed, result = self._attempt(index, attempt, asked, built, pool)
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
            history, core, item_episodes = result
            asked.append(plan)
            built[plan.plan_id] = (history, core)
            for sid in {s.session_id for s in item_episodes[-1].sessions}:
                self._usage.setdefault(sid, set()).add(plan.plan_id)
            episodes.extend(item_episodes)
        write_jsonl(self.out / "manifest.jsonl", episodes)
        write_jsonl(self.out / "plans.jsonl", asked)
        dump_config(self.config, self.out / "config.yaml")
        self.write_qc(asked, episodes, discarded, revised)
        return self.out

    def _attempt(self, index: int, attempt: int, asked: list[Plan], built: dict, pool: list[Plan]):
        """One draw of item ``index``: ``(plan, failed checks, (history, core, episodes) or the error)``."""
        plan = self.plan(index, attempt, asked)
        if plan.operation == "AR" and plan.source_plan_id in built:  # reuse the source's history
            history, source_core = built[plan.source_plan_id]
            core = [
                self.topical_session(s.fact, s.role, history.voices, "written") if s.key in plan.ar_edits else c
                for s, c in zip(plan.sessions, source_core)
            ]
        else:  # (an AR item with a private source is assembled around its edited evidence)
            rng = episode_rng(self.digest, self.config.seed, 1_000_000 + index + 100_003 * attempt)
            try:
                history, core = self.assemble(plan, pool, rng)
            except BudgetFillError as exc:
                return plan, ["budget_fill"], exc
            except BudgetTooSmallError as exc:
                return plan, ["budget_core"], exc
        item_episodes = self.episodes(plan, history, core)
        return plan, self._failures(plan, item_episodes), (history, core, item_episodes)

    def write_qc(self, plans: list[Plan], episodes: list[VoxMemEpisode], discarded: list, revised: int) -> Path:
        """Write the QC report next to the manifest."""
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
        report = {
            "items_planned": self.config.items,
            "items_kept": len(plans),
            "discarded": discarded,
            "revised": revised,
            "check_failures": dict(self.check_failures),
            "items_per_cell": per_cell,
            "max_session_reuse": max(counts.values(), default=0),
            "reuse_limit": self.config.max_session_reuse,
            "audio_hours": sum(turns.values()) / 3600.0,
            "user_turns": len(turns),
            "budgets": self.budgets,
            "tokenizer": self.tokens.name,
            "tts": self.backend.identity(),
        }
        topical = {s.session_id: s for e in episodes for s in e.sessions if s.role in ("evidence", "haystack")}
        report["separability"] = qc.separability(sorted(topical.values(), key=lambda s: s.session_id), self.config.seed)
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
