"""``memgym eval voxmem``: models x memories x budgets on a VoxMem dataset, resumable.

    memgym eval voxmem dataset=runs/voxmem/dataset models=[structured,smollm2] \\
        memories=[cascaded,transcript,oracle_tags] budgets=[8k,16k]
    memgym eval voxmem models=[hf_audio:/models/Qwen2-Audio-7B-Instruct] memories=[full_history,evidence_only]

For every (model, memory, budget) and every item at that budget the item is played through
``memgym/VoxMem-v0`` (:class:`~memgym.envs.voxmem_env.VoxMemEnv`) by a
:class:`~memgym.agents.voxmem_agent.VoxMemAgent`: the memory forms over the env's formation
observations turn by turn (user audio from the dataset's FLAC files, assistant text, session
index and time), receives the question observation (its text and its audio in the asker's
voice), and the model's reply to the chat the memory returns is the env's answer.
``memory=NAME`` is the same as ``memories=[NAME]``. The env scores the reply with the registered
scorer ``scorer=`` names (any scorer of ``spoken_qa`` items; default ``voxmem``, the
:class:`~memgym.tasks.voxmem.scoring.VoxMemScorer` verdict), given the ``judge=`` model when one
is set, and the row holds its ``info["score"]``. One row per item is appended to
``results.jsonl`` as it finishes (the model's raw reply included, and what the memory saw:
``formed_sessions``, ``handed_sessions``, ``handed_turns``), so an interrupted run resumes
where it stopped. A model failure is that item's ``error``; a history that does not fit the
model's context is recorded with ``status: over_context`` and the reason in ``over_context`` (counted
wrong, never truncated, not retried); an ``error`` row is retried when the command runs again. A
text-only model cannot hear the audio memories: those pairs are listed as not applicable.

``executor=ray`` (``ray_address=``, ``workers=``, ``worker_gpus=``) plays the items on Ray workers
(:mod:`memgym.core.executors`, docs/scaling.md); this process appends the same rows in the same
order, and the workers keep their turn and judge caches in memory. An ``openai:`` model (with an
``openai:`` judge or none, and ``asr.kind=openai`` when a memory transcribes) plays up to
``concurrency`` items at once in threads (:func:`items_at_once`), each with its own memory, env and
client, sharing the turn and judge caches; the rows, their order and the scores are those of one at
a time.

Outputs in the run folder: ``results.md`` (:func:`~memgym.tasks.voxmem.tables.results_markdown`:
4x4 cell grids, accuracy per budget with bootstrap CIs, by evidence type, by subtype, refusal
rates, evidence position; then the paper's analyses of :mod:`~memgym.tasks.voxmem.analyses`),
``accuracy_vs_budget.png``, ``semantic_gap.csv`` / ``semantic_gap.png`` (semantics minus
audio-native accuracy per operation with bootstrap CIs), ``error_taxonomy.csv`` /
``error_taxonomy.png`` (error categories per evidence type) and ``turn_cache.jsonl`` (transcripts and
acoustic measurements per turn audio, reused by every budget and by later runs; ``turn_cache=``
puts it elsewhere so several runs share it).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memgym.agents.voxmem_agent import VoxMemAgent, play_voxmem_item
from memgym.backends.errors import OverContextError, ReasonerError
from memgym.backends.throughput import record_counts, take_throughput
from memgym.core.benchmark import JobArgs, benchmark_info
from memgym.core.config import load_config
from memgym.core.dataset_kinds import require_dataset
from memgym.core.driver import Evaluation, drive, select_memories
from memgym.core.errors import ConfigError, MemgymError
from memgym.core.executors import executor_field, ray_address_field, worker_gpus_field, workers_field
from memgym.core.paths import require_folder
from memgym.core.records import read_jsonl
from memgym.core.registry import MEMORIES
from memgym.core.results import RunStore, run_name, to_csv, to_markdown
from memgym.core.scoring import Judge, judged_scorer, scorer_class
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED, config_hash
from memgym.datasets.voxmem import load_dataset
from memgym.datasets.voxmem.config import parse_budget
from memgym.datasets.voxmem.records import Plan, VoxMemEpisode
from memgym.envs.voxmem_env import VoxMemEnv
from memgym.memory.voxmem.base import VoxMemMemory
from memgym.memory.voxmem.cache import TurnCache
from memgym.memory.voxmem.options import VoxMemOptions
from memgym.pipelines.voxmem.models import (
    ASRConfig,
    build_asr,
    build_model,
    model_hears_audio,
    model_is_remote,
    warm_transcripts,
)
from memgym.pipelines.voxmem.presets import apply_preset
from memgym.tasks.llm_match import JudgeCache
from memgym.tasks.voxmem.analyses import (
    gap_markdown,
    plot_semantic_gap,
    plot_taxonomy,
    semantic_gap_table,
    taxonomy_percent,
    taxonomy_table,
)
from memgym.tasks.voxmem.scoring import load_answer_context
from memgym.tasks.voxmem.tables import evidence_position, plot_accuracy_vs_budget, results_markdown

DEFAULT_MEMORIES = ("cascaded", "transcript", "oracle_tags")
GIVES = benchmark_info("voxmem").gives
"""What a VoxMem evaluation gives its memories (words of their ``reads``; its registered
:attr:`~memgym.core.benchmark.BenchmarkInfo.gives`): the user turns' audio, the dialogue (assistant
text, session times) and, to ground-truth probes, the episode."""
TAGGER_SENTENCES = (
    "The weather has been lovely this week and we went for a long walk.",
    "Could you remind me to call the bank tomorrow morning?",
    "I think the blue one looks better than the green one.",
    "We should plan the trip before the prices go up again.",
    "My neighbour keeps asking about the garden party next month.",
    "Please write down the list so nobody forgets anything.",
)
"""Clean speech (eSpeak, several voices) under which the sound tagger's training clips are mixed."""
TAGGER_MIXES = 6
"""Training mixtures per sound recording (each under another speech sample) for datasets with lead silence."""
TAGGER_SPEECH = 48
"""Clean speech samples (TAGGER_SENTENCES by every voice of the bank in turn) for datasets with lead silence."""


@dataclasses.dataclass(frozen=True)
class VoxMemEvalConfig:
    """``memgym eval voxmem`` settings."""

    dataset: str = field(default="runs/voxmem/dataset", metadata={"help": "VoxMem dataset folder"})
    models: tuple[str, ...] = field(
        default=("structured",), metadata={"help": "model specs (structured, smollm2, hf:, hf_audio:, openai:)"}
    )
    memories: tuple[str, ...] = field(
        default=(),
        metadata={"help": "registered VoxMem memories (memgym list memories)"},
    )
    memory: str = field(default="", metadata={"help": "one memory: memory=NAME is memories=[NAME]", **ADDED_FIELD})
    budgets: tuple[str, ...] = field(default=(), metadata={"help": "budgets to evaluate (empty = all in the dataset)"})
    asr: ASRConfig = field(default_factory=ASRConfig, metadata={"help": "speech recogniser of transcript/cascaded"})
    top_sessions: int = field(default=6, metadata={"help": "sessions the cascade hands the LM (0 = all)"})
    max_new_tokens: int = field(default=32, metadata={"help": "longest reply in tokens"})
    judge: str = field(default="", metadata={"help": "judge model spec (empty = rule-based scoring only)"})
    scorer: str = field(
        default="voxmem",
        metadata={"help": "registered scorer of spoken_qa items (memgym list scorers)", **ADDED_FIELD},
    )
    max_items: int = field(default=0, metadata={"help": "evaluate only the first N items (0 = all)"})
    seed: int = field(default=0, metadata={"help": "bootstrap seed"})
    bootstrap: int = field(default=2000, metadata={"help": "bootstrap resamples", **NOT_HASHED})
    device: str = field(default="cpu", metadata={"help": "torch device of local models", **NOT_HASHED})
    turn_cache: str = field(
        default="", metadata={"help": "JSONL turn cache shared across runs (empty: in the run folder)", **NOT_HASHED}
    )
    name: str = field(default="", metadata={"help": "run folder name (default: config hash)", **NOT_HASHED})
    concurrency: int = field(
        default=8,
        metadata={"help": "openai models: items played at once, one request each in flight (1: one at a time)",
                  "min": 1, **NOT_HASHED, **ADDED_FIELD},
    )  # fmt: skip
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()
    worker_gpus: float = worker_gpus_field()

    def __post_init__(self) -> None:
        # memory=NAME is memories=[NAME], neither the default list: the same config, hash and run folder
        object.__setattr__(self, "memories", select_memories(self.memory, self.memories, DEFAULT_MEMORIES))
        object.__setattr__(self, "memory", "")
        scorer_class(self.scorer, "spoken_qa", "scorer")


def voxmem_memory(name: str) -> type[VoxMemMemory]:
    """The memory class registered as ``name``, if it reads VoxMem histories (a :class:`VoxMemMemory`
    reading only what :data:`GIVES`); otherwise a one-line error naming the ones VoxMem takes."""
    cls = MEMORIES.get(name) if name in MEMORIES else None
    if cls is None or not (issubclass(cls, VoxMemMemory) and cls.reads <= GIVES):
        what = "not a registered memory" if cls is None else "a memory of another benchmark"
        raise ConfigError(
            f"memories: '{name}' is not a VoxMem memory ({what}); VoxMem takes: {', '.join(voxmem_memory_names())}"
        )
    return cls


def voxmem_memory_names() -> list[str]:
    """memgym's registered VoxMem memories (those declared in :mod:`memgym.memory.voxmem`), found
    without importing any memory module; plugins' VoxMem memories are taken by name too."""
    return [n for n in MEMORIES.names() if MEMORIES.locate(n)[0].startswith("memgym.memory.voxmem.")]


def memory_options(config: VoxMemEvalConfig, dataset_dir: Path, turn_cache: Path | None) -> VoxMemOptions:
    """What the memories of an evaluation build from: ``top_sessions``, the recogniser of
    ``config.asr``, the dataset's sound tagger (:func:`train_sound_tagger`) and the turn cache at
    ``turn_cache`` (None: in memory only); the recogniser and tagger are built on first use."""
    return VoxMemOptions(
        top_sessions=config.top_sessions,
        cache=TurnCache(turn_cache),
        make_asr=lambda: build_asr(config.asr, device=config.device),
        make_sound_tagger=lambda: train_sound_tagger(dataset_dir),
    )


def hears(spec: str, memory_name: str) -> bool:
    """Whether model ``spec`` can read the chat of memory ``memory_name`` (audio needs an audio LM)."""
    return voxmem_memory(memory_name).modality != "audio" or model_hears_audio(spec)


def train_sound_tagger(dataset_dir: Path):
    """The cascade's sound tagger for a dataset (:func:`sound_tagger_setup`)."""
    from memgym.memory.voxmem.sound_tagger import SoundTagger

    library, classes, speech, settings = sound_tagger_setup(dataset_dir)
    return SoundTagger(library, classes, speech, **settings)


def sound_tagger_setup(dataset_dir: Path) -> tuple[Any, list[str], list[np.ndarray], dict[str, Any]]:
    """``(library, classes, speech, keyword settings)`` of a dataset's sound tagger, from its
    library, sound classes, SNR and the silence before each turn's speech (``config.yaml``).
    Datasets built with that silence (issue 38) get the ``rich`` tagger trained on
    :data:`TAGGER_SPEECH` sentences spoken by every voice of the bank in turn, :data:`TAGGER_MIXES`
    mixtures per recording; older datasets (no silence) keep the ``shape`` tagger they were
    measured with (4 voices, one mixture)."""
    import yaml

    from memgym.backends.tts.espeak import EspeakBackend
    from memgym.datasets.sources.factory import LibraryConfig, open_library
    from memgym.datasets.speech.voices import espeak_voice_bank

    data = yaml.safe_load((dataset_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    library_fields = {f.name for f in dataclasses.fields(LibraryConfig)}
    library = LibraryConfig(**{k: v for k, v in (data.get("library") or {}).items() if k in library_fields})
    tts, bank = EspeakBackend(), espeak_voice_bank()
    lead = np.zeros(int(round(float(data.get("lead_silence_s", 0.0)) * tts.sample_rate)), dtype=np.float32)
    classes, snr_db = list(data.get("sound_classes") or []), float(data.get("snr_db", 10.0))
    if not lead.size:  # datasets built before the lead silence: the tagger they were measured with
        speech = [tts.synthesize(text, bank[(5 * i) % len(bank)]) for i, text in enumerate(TAGGER_SENTENCES * 4)]
        return open_library(library), classes, speech, {"snr_db": snr_db}
    sentences = [TAGGER_SENTENCES[i % len(TAGGER_SENTENCES)] for i in range(TAGGER_SPEECH)]
    speech = [np.concatenate([lead, tts.synthesize(text, bank[i % len(bank)])]) for i, text in enumerate(sentences)]
    settings = {"snr_db": snr_db, "mixes": TAGGER_MIXES, "features": "rich", "lead_s": lead.size / tts.sample_rate}
    return open_library(library), classes, speech, settings


def _askers(dataset_dir: Path) -> dict[str, str]:
    plans = dataset_dir / "plans.jsonl"
    if not plans.is_file():
        return {}
    return {p.plan_id: p.query.asker for p in read_jsonl(plans) if isinstance(p, Plan)}


def evaluate(args: JobArgs) -> Path:
    """Run the evaluation of the module docstring; returns the run folder."""
    config = load_config(VoxMemEvalConfig, path=args.config_path, overrides=apply_preset(args.overrides, "eval")[0])
    require_dataset(config.dataset, "voxmem")
    dataset_dir = require_folder(
        config.dataset,
        "dataset",
        "a VoxMem dataset folder (with manifest.jsonl)",
        hint="build one with 'memgym generate voxmem'",
        error=ConfigError,
    )
    episodes = _eval_episodes(config, dataset_dir)
    name = config.name or run_name(
        args.runs_dir, "eval-voxmem", [",".join(config.memories), ",".join(config.models)], config_hash(config)
    )
    store = RunStore.open(args.runs_dir, "eval-voxmem", config, name=name, seeds=(config.seed,))
    return drive(VoxMemEvaluation(config, dataset_dir, episodes, store), store, progress=args.progress).folder


class VoxMemEvaluation(Evaluation):
    """The VoxMem run of :func:`evaluate` for :func:`~memgym.core.driver.drive`: one item per
    (model, memory, episode) a model can hear, model by model (each at :func:`items_at_once`);
    a row per item (:func:`run_item`) with its models' throughput."""

    fast_paths = {
        "items at once (threads, endpoint models)": "tests/pipelines/voxmem/test_evaluation.py::"
        "test_an_endpoint_model_plays_items_at_once_with_the_same_rows",
        "a history's turns transcribed in one batch (asr.batch_scope=history)": "tests/pipelines/voxmem/"
        "test_evaluation.py::test_history_batches_hear_each_item_in_one_call_with_the_same_replies",
    }

    def __init__(self, config: VoxMemEvalConfig, dataset_dir: Path, episodes: list[VoxMemEpisode], store: RunStore):
        super().__init__(config)
        self.dataset_dir, self.episodes, self.folder = dataset_dir, episodes, store.folder

    def work(self, done: set[str]) -> list[tuple[str, Any]]:
        config = self.config
        return [
            (f"{spec}|{memory_name}|{episode.episode_id}", (spec, memory_name, episode))
            for spec in config.models
            for memory_name in config.memories
            if hears(spec, memory_name)
            for episode in self.episodes
            if f"{spec}|{memory_name}|{episode.episode_id}" not in done
        ]

    def setup(self) -> Callable[..., ItemRunner]:
        return _item_runner(self.config, self.dataset_dir, self.folder)

    def groups(self, work: list[tuple[str, Any]]) -> list[tuple[list[tuple[str, Any]], int]]:
        """Model by model: each model's items at its own pace."""
        return [
            (list(group), items_at_once(self.config, spec))
            for spec, group in itertools.groupby(work, key=lambda pair: pair[1][0])
        ]

    def record(self, store: RunStore, key: str, result: Any) -> None:
        row, throughput = result
        store.append(key, row)
        record_counts(store, throughput)

    def write_tables(self, store: RunStore) -> Path:
        return write_outputs(store, self.config, self.episodes)


def _eval_episodes(config: VoxMemEvalConfig, dataset_dir: Path) -> list[VoxMemEpisode]:
    """The dataset's episodes the run plays, smaller budgets first (a stopped run has whole
    budgets): those of ``budgets`` when given, the first ``max_items`` items' when set.

    Raises:
        ConfigError: no manifest, an unknown memory, or a budget the dataset lacks.
    """
    manifest = dataset_dir / "manifest.jsonl"
    if not manifest.is_file():
        raise ConfigError(f"dataset {dataset_dir} has no manifest.jsonl; build one with 'memgym generate voxmem'")
    for name in config.memories:
        voxmem_memory(name)
    episodes = [e for e in load_dataset(dataset_dir) if isinstance(e, VoxMemEpisode)]
    episodes.sort(key=lambda e: (e.budget, e.episode_id))  # smaller budgets first: a stopped run has whole budgets
    if config.budgets:
        wanted = {parse_budget(b) for b in config.budgets}
        missing = wanted - {e.budget for e in episodes}
        if missing:
            raise ConfigError(
                f"budgets {sorted(missing)} are not in {manifest} (it has {sorted({e.budget for e in episodes})})"
            )
        episodes = [e for e in episodes if e.budget in wanted]
    if config.max_items:
        keep = list(dict.fromkeys(e.items[0].item_id for e in episodes))[: config.max_items]
        episodes = [e for e in episodes if e.items[0].item_id in keep]
    return episodes


def _item_runner(config: VoxMemEvalConfig, dataset_dir: Path, folder: Path) -> Callable[..., ItemRunner]:
    """What builds an :class:`ItemRunner` per thread or worker for the run in ``folder``."""
    # Ray workers do not write the run folder: their turn and judge caches live in memory only;
    # here every runner (one per thread) shares this process's
    runner = functools.partial(ItemRunner, config, dataset_dir)
    if config.executor == "local":
        turn_cache = Path(config.turn_cache) if config.turn_cache else folder / "turn_cache.jsonl"
        runner = functools.partial(
            runner, memory_options(config, dataset_dir, turn_cache), JudgeCache(folder / "judge_cache.jsonl")
        )
    return runner


def items_at_once(config: VoxMemEvalConfig, spec: str) -> int:
    """Items of model ``spec`` played at once: ``config.concurrency`` when the model and the judge
    (if any) are endpoints (``openai:``) and no memory of the run transcribes with a local
    recogniser (their one recogniser is shared), else 1."""
    from memgym.memory.voxmem.cascaded import CascadedMemory
    from memgym.memory.voxmem.transcript import TranscriptMemory

    transcribing = any(issubclass(voxmem_memory(m), (TranscriptMemory, CascadedMemory)) for m in config.memories)
    remote = model_is_remote(spec) and (not config.judge or model_is_remote(config.judge))
    return config.concurrency if remote and (config.asr.kind == "openai" or not transcribing) else 1


class ItemRunner:
    """Plays ``(model spec, memory name, episode)``: the :func:`run_item` row with ``model`` and
    ``memory`` first, and the tokens and seconds of the model's and judge's replies to it
    (:func:`take_throughput`); keeps the last model built.

    Args:
        options: what the memories build from (turn cache, recogniser, tagger), shared by the
            runners of one process; None: :func:`memory_options` with the turn cache in memory.
        judge_cache: the judge verdicts' cache (None: memory only).
    """

    def __init__(
        self,
        config: VoxMemEvalConfig,
        dataset_dir: Path,
        options: VoxMemOptions | None = None,
        judge_cache: JudgeCache | None = None,
    ) -> None:
        judge = None
        if config.judge:
            judge = Judge(build_model(config.judge, device=config.device), f"{config.judge}:seed=0:t=0", judge_cache)
        self.config = config
        self.askers = _askers(dataset_dir)
        scorers = {"spoken_qa": judged_scorer(config.scorer, judge)} if judge is not None else None
        self.env = VoxMemEnv(dataset=str(dataset_dir), task_scorers={"spoken_qa": config.scorer}, scorers=scorers)
        self.options = options if options is not None else memory_options(config, dataset_dir, None)
        self.judge = f"judge {config.judge}", None if judge is None else judge.reasoner
        self.spec, self.model = "", None

    def __call__(self, job: tuple[str, str, VoxMemEpisode]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        spec, memory_name, episode = job
        if spec != self.spec:
            self.spec, self.model = spec, None
            self.model = build_model(spec, device=self.config.device)
        if memory_name in ("transcript", "cascaded") and self.config.asr.batch_scope == "history":
            warm_transcripts(self.env, episode, self.options.asr(), self.options.cache)
        memory = voxmem_memory(memory_name).from_options(self.options)
        agent = VoxMemAgent(memory, self.model, self.config.max_new_tokens)
        row = run_item(episode, agent, self.env, self.askers.get(episode.items[0].item_id, ""))
        return {"model": spec, "memory": memory_name, **row}, take_throughput(dict([(spec, self.model), self.judge]))


def run_item(episode: VoxMemEpisode, agent: VoxMemAgent, env: VoxMemEnv, asker: str) -> dict[str, Any]:
    """Play one item through ``env`` with ``agent`` (its memory forms over the env's formation
    observations, its model answers the question observation, the env scores the reply); the
    result row (module docstring) with the env's score."""
    item = episode.items[0]
    notes = item.annotations
    ids = set(notes.get("evidence_sessions", ()))
    positions = [i for i, s in enumerate(episode.sessions) if s.session_id in ids]
    row: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "item_id": item.item_id,
        "budget": episode.budget,
        **{k: notes.get(k) for k in ("cell", "evidence", "operation", "subtype", "audio_native")},
        "question": item.prompt,
        "reference": item.answer,
        "sessions": len(episode.sessions),
        "history_tokens": episode.tokens,
        "evidence_position": evidence_position(positions, len(episode.sessions)),
    }
    start = time.perf_counter()
    try:
        reply, score = play_voxmem_item(env, agent, episode, asker)
        row.update({"status": "ok", "reply": reply, **score})
    except OverContextError as exc:
        row.update({"status": "over_context", "reply": None, "correct": 0.0, "over_context": str(exc)})
    except (ReasonerError, MemgymError) as exc:
        row.update({"status": "error", "reply": None, "correct": None, "error": str(exc)})
    if isinstance(agent.memory, VoxMemMemory) and row["status"] != "error":
        row.update(agent.memory.seen())
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def write_outputs(store: RunStore, config: VoxMemEvalConfig, episodes: list[VoxMemEpisode]) -> Path:
    """``results.md``, ``accuracy_vs_budget.png`` and the analyses (:func:`write_analyses`) from
    every row of the run; ``episodes`` are the played ones (their annotations classify errors)."""
    rows = store.rows()
    text = results_markdown(rows, np.random.default_rng(config.seed), config.bootstrap)
    text += write_analyses(store, rows, episodes, *load_answer_context(config.dataset), config)
    skipped = [(s, m) for s in config.models for m in config.memories if not hears(s, m)]
    if skipped:
        pairs = ", ".join(f"{m} / {s}" for s, m in skipped)
        text += f"\nNot applicable (a text model cannot hear the audio history): {pairs}.\n"
    if plot_accuracy_vs_budget(rows, store.folder / "accuracy_vs_budget.png") is not None:
        text += "\n![accuracy vs budget](accuracy_vs_budget.png)\n"
    return store.write_text("results.md", text)


def write_analyses(
    store: RunStore, rows: list[dict], episodes: list[VoxMemEpisode], queries: dict, sounds: tuple[str, ...], config
) -> str:
    """The paper's analyses (:mod:`memgym.tasks.voxmem.analyses`) into the run folder:
    ``semantic_gap.csv`` / ``.png`` and ``error_taxonomy.csv`` / ``.png`` (with each wrong-answer
    category's chance count, against the dataset's ``sounds``); returns their Markdown."""
    gap = semantic_gap_table(rows, np.random.default_rng(config.seed), config.bootstrap)
    taxonomy = taxonomy_table(rows, {e.episode_id: e for e in episodes}, queries, sounds)
    store.write_text("semantic_gap.csv", to_csv(gap))
    store.write_text("error_taxonomy.csv", to_csv(taxonomy))
    parts = [
        "\n## semantics minus audio-native accuracy per operation (points, 95% bootstrap CI over items; "
        "semantic_gap.csv)\n",
        to_markdown(gap_markdown(gap), digits=1),
    ]
    if plot_semantic_gap(gap, store.folder / "semantic_gap.png") is not None:
        parts.append("![semantics minus audio-native gap](semantic_gap.png)\n")
    parts += [
        "## error taxonomy per evidence type (% of items; '<category> chance': the share a uniformly drawn wrong "
        "answer would give, against the sessions the model was handed; counts in error_taxonomy.csv)\n",
        to_markdown(taxonomy_percent(taxonomy), digits=1),
    ]
    if plot_taxonomy(taxonomy, store.folder / "error_taxonomy.png") is not None:
        parts.append("![error taxonomy](error_taxonomy.png)\n")
    return "\n".join(parts)
