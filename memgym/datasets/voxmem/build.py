"""Building a VoxMem dataset: plans -> words -> audio -> nested histories -> QC -> files.

Output folder::

    manifest.jsonl     one VoxMemEpisode per (item, budget): sessions with timestamps, question
    plans.jsonl        the plans (question, gold answer, evidence, constraints)
    qc_report.json/md  the quality-control report
    config.yaml        the config that built it
    audio/             content-hashed FLAC per user turn (+ cue/sound-removed pairs)

Items cycle through the 15 cells (and their subtypes). An AR item is derived from an IE, MSR or
TET item of the same evidence type in the same dataset (its source,
:meth:`ItemLayout.layout <memgym.datasets.voxmem.layout.ItemLayout.layout>`) and reuses that
item's history: the edited evidence sessions keep their words and turns
(:meth:`SessionWriter.edited_session <memgym.datasets.voxmem.sessions.SessionWriter.edited_session>`),
every other session is shared. An item whose plan fails QC is redrawn (up to ``max_revisions``
times) and otherwise discarded.

The steps live beside this module: the config (:mod:`~memgym.datasets.voxmem.config`), which item
is which and its plan (:mod:`~memgym.datasets.voxmem.layout`), sessions
(:mod:`~memgym.datasets.voxmem.sessions`), nested histories (:mod:`~memgym.datasets.voxmem.assembly`)
and the checks (:mod:`~memgym.datasets.voxmem.qc`).

Redrawing, for checks that reject a draw: an item is redrawn by :meth:`VoxMemBuilder.attempt`
with the next ``attempt`` (a new plan and history from the item's sub-seed); a topical session by
``SessionWriter.topical_session`` with ``redraw > 0`` (new words for the same fact); a filler by
``SessionWriter.filler_session`` with another generator. An AR item's edited sessions are not
redrawn (their words are the source's); its next attempt takes another source.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.backends.tts import make_tts_backend
from memgym.core.config import dump_config
from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError
from memgym.core.outcome import note_dropped
from memgym.core.protocols import Reasoner
from memgym.core.records import write_jsonl
from memgym.core.seeding import episode_rng
from memgym.datasets.sources.factory import open_library
from memgym.datasets.voxmem import qc
from memgym.datasets.voxmem.assembly import History, HistoryAssembler
from memgym.datasets.voxmem.config import VoxMemConfig, draw_digest, parse_budget, voice_bank
from memgym.datasets.voxmem.filler import GeneratedFillerCorpus, InstructS2SCorpus
from memgym.datasets.voxmem.history import BudgetFillError, BudgetTooSmallError
from memgym.datasets.voxmem.layout import ItemLayout
from memgym.datasets.voxmem.plans import MIN_USERS
from memgym.datasets.voxmem.qc_model import ModelQC
from memgym.datasets.voxmem.qc_model import report_section as qc_model_report
from memgym.datasets.voxmem.records import Plan, Session, VoxMemEpisode
from memgym.datasets.voxmem.refusal import derive_refusal
from memgym.datasets.voxmem.render import TurnRenderer, library_clip_source
from memgym.datasets.voxmem.separability import derivation_families, fold_groups, separability
from memgym.datasets.voxmem.sessions import SessionWriter
from memgym.datasets.voxmem.taxonomy import BUILDABLE_CELLS, CELLS, cell_name
from memgym.datasets.voxmem.tokens import TokenCounter
from memgym.datasets.voxmem.writing import DialogueWriter, LLMWriter, TemplateWriter


class VoxMemBuilder:
    """Builds datasets and single episodes.

    Its parts: :attr:`items` (which item is which, and the plans), :attr:`sessions` (writing and
    rendering sessions; :attr:`renderer` speaks the turns), :attr:`assembler` (nested histories)
    and the QC checks (:attr:`gate`, :attr:`model_qc`, :attr:`qc_reasoner`).

    Args:
        config: the build config.
        reasoner: a :class:`~memgym.core.protocols.Reasoner` for the LLM writer (overrides
            ``config.reasoner``).
        qc_reasoner: a text-only Reasoner for the transcript QC check (overrides ``config.qc_reasoner``).
        qc_model: the audio LM of ``config.qc_model`` when that is a model spec.
        progress: show progress bars.
    """

    def __init__(
        self, config: VoxMemConfig, *, reasoner=None, qc_reasoner=None, qc_model=None, progress: bool = False
    ) -> None:
        self.config = config
        self.budgets = sorted({parse_budget(b) for b in config.budgets})
        self.cells = self._cells(config)
        self.out = Path(config.out)
        self.progress = progress
        # seeds plans and histories; the length control, refusal scope and redraw cap draw no item
        self.digest = draw_digest(config)
        self.backend = make_tts_backend(config.tts)
        self.voice_bank = voice_bank(config)
        self._check_counts(config)
        self.sound_classes = list(config.sound_classes)
        self.renderer = self._renderer(config)
        self.tokens = TokenCounter(config.tokenizer)
        fillers = InstructS2SCorpus(config.filler_path) if config.filler_path else GeneratedFillerCorpus()
        writer = self._writer(config, reasoner)
        self.sessions = SessionWriter(
            writer, self.renderer, self.tokens, fillers, self.sound_classes,
            cue_rate=config.filler_cue_rate, sound_rate=config.filler_sound_rate,
        )  # fmt: skip
        self.items = ItemLayout(config, self.cells, self.digest, self.sound_classes, writer)
        self.assembler = HistoryAssembler(config, self.budgets, self.sessions, self.items, self.voice_bank)
        if qc_reasoner is None and config.qc_reasoner:
            from memgym.core.registry import REASONERS

            qc_reasoner = REASONERS.get(config.qc_reasoner)()
        self.qc_reasoner = qc_reasoner
        self.gate = qc.intelligibility_gate(self.out, config.asr)  # None with asr.kind=none
        self.model_qc = self._model_qc(qc_model)
        self.check_failures: dict[str, int] = {}
        self.per_cell: dict[str, dict[str, int]] = {}

    # ----- setup ---------------------------------------------------------------------------------------
    def _cells(self, config: VoxMemConfig) -> list[tuple[str, str]]:
        """The (evidence, operation) cells ``config.cells`` names (the paper's 15 when empty; semantics
        IE only when named)."""
        if not self.budgets:
            raise ConfigError("budgets is empty; expected e.g. [8k,16k,32k,64k]")
        if config.items < 1:
            raise ConfigError(f"items must be at least 1, got {config.items}")
        names = {cell_name(*c): c for c in BUILDABLE_CELLS}
        unknown = [c for c in config.cells if c not in names]
        if unknown:
            raise ConfigError(f"cells {unknown} are not VoxMem cells; valid: {sorted(names)}")
        return [names[c] for c in config.cells] or list(CELLS)

    def _check_counts(self, config: VoxMemConfig) -> None:
        """Users per history within the voice bank, and a non-negative haystack count."""
        if not MIN_USERS <= config.users <= len(self.voice_bank):
            raise ConfigError(
                f"users: expected {MIN_USERS} to {len(self.voice_bank)} users per history (speaker questions and "
                f"answer refusal need two voices; the {config.tts.kind} voice bank has {len(self.voice_bank)}), "
                f"got {config.users}"
            )
        if config.haystacks_per_level < 0:
            raise ConfigError(f"haystacks_per_level must be >= 0, got {config.haystacks_per_level}")

    def _renderer(self, config: VoxMemConfig) -> TurnRenderer:
        """The turn renderer over ``config.library``, whose sound classes must hold ``sound_classes``."""
        library = open_library(config.library)
        known = set(library.identities())
        missing = [s for s in config.sound_classes if s not in known]
        if missing:
            raise ConfigError(f"sound_classes {missing} are not in the '{config.library.kind}' sound library")
        return TurnRenderer(
            self.out,
            self.backend,
            library_clip_source(library),
            library.fingerprint(),
            config.snr_db,
            config.lead_silence_s,
        )

    def _writer(self, config: VoxMemConfig, reasoner) -> DialogueWriter:
        """The template writer, or for ``writer=llm`` the LLM writer over ``reasoner`` (else
        ``config.reasoner``)."""
        if config.writer != "llm":
            return TemplateWriter()
        if reasoner is None:
            if not config.reasoner:
                raise ConfigError("writer=llm needs reasoner=<registered reasoner name>")
            from memgym.core.registry import REASONERS

            reasoner = REASONERS.get(config.reasoner)()
        return LLMWriter(reasoner, sound_labels=[s.replace("_", " ") for s in self.sound_classes])

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

    def episodes(self, plan: Plan, history: History, core: list[Session]) -> list[VoxMemEpisode]:
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
                task="spoken_qa",  # stored in every manifest: the old name is kept
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
        schedule, _ = self.items.layout()
        pool = [self.items.plan(i, 0, word=False) for i, cell in enumerate(schedule) if cell[1] != "AR"]
        kept: dict[int, tuple[Plan, list[VoxMemEpisode]]] = {}
        built: dict[str, tuple[History, list[Session]]] = {}
        discarded, revised = [], 0
        self.per_cell.clear()
        order = sorted(range(self.config.items), key=lambda i: (schedule[i][1] == "AR", i))
        for index in tqdm(order, desc="voxmem items", disable=not self.progress):
            revised += self._build_item(index, schedule[index], pool, kept, built, discarded)
        self._write_dataset(kept, discarded, revised)
        return self.out

    def _build_item(
        self,
        index: int,
        cell_key: tuple,
        pool: list[Plan],
        kept: dict[int, tuple[Plan, list[VoxMemEpisode]]],
        built: dict[str, tuple[History, list[Session]]],
        discarded: list[dict],
    ) -> int:
        """Draw item ``index`` (schedule entry ``cell_key``) up to ``max_revisions + 1`` times.

        The first draw that passes every check goes into ``kept`` and ``built`` (and the
        assembler's session usage); an item whose draws all fail goes into ``discarded``. Updates
        the cell's counts and :attr:`check_failures`; returns the number of redraws.

        Raises:
            BudgetTooSmallError: no draw of the item fits its budgets.
        """
        too_small: list[BudgetTooSmallError] = []
        asked = {i: plan for i, (plan, _) in kept.items() if plan.operation != "AR"}
        taken = {plan.source_plan_id for plan, _ in kept.values()}
        cell = self.per_cell.setdefault(cell_name(*cell_key[:2]), _cell_counts())
        cell["planned"] += 1
        revised = 0
        for attempt in range(self.config.max_revisions + 1):
            plan, failed, result = self.attempt(index, attempt, built, pool, asked, taken)
            if plan is None:  # an AR item without a source left
                discarded.append({"item": f"vox{index:05d}", "failed": ["no_source"]})
                cell["dropped"] += 1
                return revised
            for name in failed:
                key = name.split("@")[0]
                self.check_failures[key] = self.check_failures.get(key, 0) + 1
            cell["draws"] += 1
            cell["gate_failed_draws"] += "session_intelligible" in failed
            if isinstance(result, BudgetTooSmallError):
                too_small.append(result)
            if not failed:
                break
            revised += 1
            cell["redraws"] += 1
        else:
            if len(too_small) == self.config.max_revisions + 1:
                raise too_small[-1]  # no draw fits: the budget is too small, not the draw
            discarded.append({"item": plan.plan_id, "failed": failed})
            cell["dropped"] += 1
            return revised
        cell["kept"] += 1
        history, core, item_episodes = result
        kept[index] = (plan, item_episodes)
        built[plan.plan_id] = (history, core)
        for sid in {s.session_id for s in item_episodes[-1].sessions}:
            self.assembler.usage.setdefault(sid, set()).add(plan.plan_id)
        return revised

    def _write_dataset(
        self, kept: dict[int, tuple[Plan, list[VoxMemEpisode]]], discarded: list[dict], revised: int
    ) -> None:
        """Write the kept items (in index order) as ``manifest.jsonl`` and ``plans.jsonl``, the
        config and the QC report; note the dropped items for the CLI."""
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

    def attempt(
        self, index: int, attempt: int, built: dict, pool: list[Plan], asked: dict[int, Plan], taken: set[str]
    ) -> tuple[Plan | None, list[str], Any]:
        """One draw of item ``index``: ``(plan, failed checks, (history, core, episodes) or the error)``.

        A non-AR item draws plan ``attempt`` and assembles a fresh history from the item's
        sub-seed. An AR item derives from a source in ``asked`` (``ItemLayout.refusal_plan``) and reuses
        the source's built history (``built``: plan id -> (history, core sessions)) with only the
        edited sessions replaced; once no source is left it derives from a stand-in source drawn and
        assembled from its own sub-seed (``ItemLayout.standin_source``), so an AR item is redrawn
        like any other; ``(None, [], None)`` when no stand-in can be refused either.
        """
        rng = episode_rng(self.digest, self.config.seed, 1_000_000 + index + 100_003 * attempt)
        try:  # an assembled history that does not fit its budgets fails the draw (``plan``: what was assembled)
            if self.items.layout()[0][index][1] == "AR":
                plan = self.items.refusal_plan(index, attempt, asked, taken)
                if plan is not None:
                    history, source_core = built[plan.source_plan_id]
                else:
                    plan = self.items.standin_source(index, attempt)
                    if plan is None:
                        return None, [], None
                    history, source_core = self.assembler.assemble(plan, pool, rng)
                    plan = derive_refusal(plan, plan.plan_id, self.config.refusal_scope)
                core = [
                    self.sessions.edited_session(c, s.fact, history.voices, plan.ar_edits[s.key])
                    if s.key in plan.ar_edits
                    else c
                    for s, c in zip(plan.sessions, source_core)
                ]
            else:
                plan = self.items.plan(index, attempt)
                history, core = self.assembler.assemble(plan, pool, rng)
        except BudgetFillError as exc:
            return plan, ["budget_fill"], exc
        except BudgetTooSmallError as exc:
            return plan, ["budget_core"], exc
        item_episodes = self.episodes(plan, history, core)
        return plan, self._failures(plan, item_episodes, attempt), (history, core, item_episodes)

    def separability(self, episodes: list[VoxMemEpisode]) -> dict[str, Any]:
        """The text-only separability check over every evidence and haystack session of the
        dataset (each once, under the first item holding it), folds grouped by derivation family, or
        by topic family when a large build chains its items into too few (:func:`fold_groups`;
        ``"grouping"`` says which)."""
        longest = {e.items[0].item_id: e for e in episodes if e.budget == self.budgets[-1]}
        items = [(i, e.items[0].annotations.get("source_item"), e.sessions) for i, e in sorted(longest.items())]
        families = derivation_families(items)
        first: dict[str, tuple[Session, str]] = {}
        for _, e in sorted(longest.items()):
            for s in e.sessions:
                if s.role in ("evidence", "haystack"):
                    first.setdefault(s.session_id, (s, e.items[0].annotations["evidence"]))
        ordered = [first[k] for k in sorted(first)]
        sessions = [s for s, _ in ordered]
        groups, grouping = fold_groups(families, sessions)
        result = separability(sessions, groups, [t for _, t in ordered], seed=self.config.seed)
        return {**result, "grouping": grouping}

    def write_qc(self, plans: list[Plan], episodes: list[VoxMemEpisode], discarded: list, revised: int) -> Path:
        """Write the QC report next to the manifest.

        Besides the checks it records which item every AR item derives from (``ar_sources``) and
        the sessions of each role per budget, summed over items (``sessions_per_budget``).
        """
        # max_session_reuse bounds the histories drawn: counted without AR items (each re-speaks its
        # source's history), and with them beside it; an item's longest history (its last episode)
        sessions = {e.items[0].item_id: {s.session_id for s in e.sessions} for e in episodes}
        refusals = {p.plan_id for p in plans if p.operation == "AR"}
        counts = qc.reuse_counts({i: ids for i, ids in sessions.items() if i not in refusals})
        with_ar = qc.reuse_counts(sessions)
        turns = {t.audio: t.duration_s for e in episodes for s in e.sessions for t in s.turns if t.role == "user"}
        per_cell = dict(collections.Counter(p.cell for p in plans))
        roles = _sessions_per_budget(episodes, self.budgets)
        report = {
            "items_planned": self.config.items,
            "items_kept": len(plans),
            "discarded": discarded,
            "revised": revised,
            "check_failures": dict(self.check_failures),
            "items_per_cell": per_cell,
            "per_cell": {name: _cell_rates(counts) for name, counts in sorted(self.per_cell.items())},
            "ar_sources": {p.plan_id: p.source_plan_id for p in plans if p.operation == "AR"},
            "sessions_per_budget": roles,
            "max_session_reuse": max(counts.values(), default=0),
            "max_session_reuse_with_ar": max(with_ar.values(), default=0),
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
            report["transcript_llm"] = _transcript_llm(self.qc_reasoner, episodes, self.budgets[0])
        return qc.write_report(self.out, report)


def _sessions_per_budget(episodes: list[VoxMemEpisode], budgets: Sequence[int]) -> dict[int, dict[str, int]]:
    """Budget -> sessions of each role (evidence, haystack, filler), summed over the items."""
    roles = {budget: {"evidence": 0, "haystack": 0, "filler": 0} for budget in budgets}
    for e in episodes:
        for s in e.sessions:
            roles[e.budget][s.role] += 1
    return roles


def _transcript_llm(reasoner: Reasoner, episodes: list[VoxMemEpisode], budget: int) -> dict[str, Any]:
    """Which audio-native items of the smallest ``budget`` a text-only reasoner solves from the
    transcript, and the count chance would give (a half for yes/no items)."""
    smallest = [e for e in episodes if e.budget == budget and e.items[0].annotations["audio_native"]]
    solved = [e.items[0].item_id for e in smallest if qc.transcript_llm_solves(reasoner, e)]
    chance = sum(0.5 if e.items[0].answer in ("yes", "no") else 0.0 for e in smallest)
    return {"asked": len(smallest), "solved": len(solved), "items": solved, "chance": chance}


def _cell_counts() -> dict[str, int]:
    """A cell's build counters: items planned, kept and dropped; draws, redraws and draws that
    failed the intelligibility gate."""
    return dict.fromkeys(("planned", "kept", "dropped", "draws", "redraws", "gate_failed_draws"), 0)


def _cell_rates(counts: dict[str, int]) -> dict[str, float | int]:
    """The counters with the cell's drop rate (dropped / planned), redraw rate (redraws / draws)
    and gate failure rate (gate-failed draws / draws)."""
    return {
        **counts,
        "drop_rate": counts["dropped"] / max(counts["planned"], 1),
        "redraw_rate": counts["redraws"] / max(counts["draws"], 1),
        "gate_fail_rate": counts["gate_failed_draws"] / max(counts["draws"], 1),
    }
