"""``memgym eval dialogmem``: each memory played on the dataset's episodes, then compared.

Resumable through :class:`~memgym.core.results.RunStore`: for each memory of ``memories=[...]``
(or the one ``memory=``), built by its :meth:`~memgym.core.protocols.Memory.from_options`, each
episode is played in ``memgym/DialogMem-v0`` (made with ``gymnasium.make``) by a
:class:`~memgym.agents.reasoner_agent.ReasonerAgent` through the agents' one loop
(:func:`memgym.agents.agent.run_episode`); one result row per item, appended as it finishes.
Formation frames are rendered 16 poses to a ray cast through a frame cache
(:mod:`memgym.sensors.frame_cache`), so the memories after the first reuse them: within the
process while they fit in its 512 MiB, or across memories and runs from ``frame_cache=DIR``.
A reasoner or judge failure, an episode with dangling ids or a duplicated episode id becomes an
``error`` row and the run goes on; a re-run retries the items that failed. Once the tables are
written, the CLI ends an eval in which every item of a memory failed with an error and one in
which some failed with a warning line (:mod:`memgym.core.outcome`). Layout of
``RUNS/eval-dialogmem/NAME/`` (``NAME``: ``name=`` or ``<dataset name>-<hash of the config without
the memory names>``, :func:`~memgym.core.results.run_name`)::

    <memory>/           one RunStore per memory: results.jsonl, results.md (tables by task and
                        content type), config.yaml (with memory=<memory>), judge_cache.jsonl,
                        links.json (snapshot memories: link counts per episode, :class:`LinkLog`),
                        map.json (object memories: instance merges/splits per episode, their ``map`` measure),
                        memory.jsonl (``save_memory=true``: what the memory held after each
                        episode's formation, :meth:`~memgym.core.protocols.Memory.contents`)
    comparison.md       every memory side by side, with bootstrap intervals
    comparison.csv      the same, long form
    comparison.png      grouped bars per memory (navigation; QA per content type)

``executor=ray`` (``ray_address=``, ``workers=``) plays the episodes on Ray workers
(:mod:`memgym.core.executors`, docs/scaling.md); this process writes the same files in the same
order. With an HTTP reasoner (and judge), ``reasoner.backend=openai``, up to ``reasoner.concurrency``
episodes are played at once in threads, each with its own memory, env and client
(:func:`~memgym.backends.config.concurrent_items`), so the server has that many requests to answer
side by side; the rows, their order and the scores are those of one at a time. ``sweep=link_quality`` runs the linking diagnosis instead
(:mod:`memgym.pipelines.dialogmem.link_sweep`, dispatched by the benchmark). Each memory's store
is hashed without the list of memories, so adding a memory to the list and running again
evaluates only the new one. Result rows carry the item annotations as columns (``content_type``,
``verbalised`` and ``updated`` for QA; ``content_type``, ``cue_updated`` and ``updated``
(= ``cue_updated``) for navigation); see :mod:`memgym.pipelines.dialogmem.comparison`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from memgym.agents.agent import ItemAnswer
from memgym.backends.config import build_reasoner, concurrent_items
from memgym.backends.errors import ReasonerError
from memgym.backends.throughput import record_counts, take_throughput
from memgym.core.benchmark import JobArgs, benchmark_info
from memgym.core.config import load_config
from memgym.core.dataset_kinds import require_dataset
from memgym.core.driver import Evaluation, drive
from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError, RecordError
from memgym.core.paths import require_file
from memgym.core.protocols import Memory
from memgym.core.records import from_json
from memgym.core.registry import MEMORIES
from memgym.core.results import RunStore, aggregate, run_name, to_markdown
from memgym.core.scoring import Judge, ScorerFactory, judged_scorer, scorer_class
from memgym.core.seeding import config_hash
from memgym.core.textfiles import text_lines
from memgym.datasets.dialogmem.episode import DialogMemEpisode
from memgym.memory.embodied.ground_truth import LinkCounts
from memgym.pipelines.dialogmem.comparison import qa_metric, write_comparison
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig, embodied_memory, store_config
from memgym.pipelines.dialogmem.memory_measures import MAP_FILE, EpisodeTable, LinkLog, Localisation
from memgym.tasks.llm_match import JudgeCache


def load_episodes(path: Path) -> tuple[list[DialogMemEpisode], list[tuple[str, dict[str, Any]]]]:
    """Episodes of a dataset file plus error rows for unusable ones (duplicates, dangling ids)."""
    require_dataset(path, "dialogmem")
    require_file(path, "dataset", "a .jsonl file", hint="run 'memgym generate dialogmem' first", error=RecordError)
    episodes, errors, seen = [], [], set()
    for number, line in text_lines(path):
        if not line.strip():
            continue
        episode = from_json(line, where=f"{path}:{number}")
        if not isinstance(episode, DialogMemEpisode):
            errors.append((f"line{number}", {"error": f"{path}:{number}: not a dialogmem.episode record"}))
            continue
        if episode.episode_id in seen:
            errors.append(
                (
                    f"{episode.episode_id}@line{number}",
                    {"episode_id": episode.episode_id, "error": f"{path}:{number}: duplicated episode id"},
                )
            )
            continue
        seen.add(episode.episode_id)
        try:
            episode.check()
        except RecordError as exc:
            errors += [
                (i.item_id, {"episode_id": episode.episode_id, "item_id": i.item_id, "error": str(exc)})
                for i in episode.items
            ]
            continue
        episodes.append(episode)
    if not episodes and not errors:
        raise RecordError(f"dataset {path} holds no episodes")
    return episodes, errors


def item_key(episode: DialogMemEpisode, item: TaskItem) -> str:
    """Result key of an item: ``episode_id|item_id`` (unique even if item ids repeat across episodes)."""
    return f"{episode.episode_id}|{item.item_id}"


def evaluate(args: JobArgs, config: DialogMemEvalConfig | None = None) -> Path:
    """Evaluate each memory with the reasoner on a dataset and compare them (module docstring);
    returns the run folder (``RUNS/eval-dialogmem/NAME``). ``config``: the job's, when the caller
    loaded it already (None: loaded from ``args``).

    Raises:
        ConfigError: ``sweep`` is set (the sweep is :func:`memgym.pipelines.dialogmem.link_sweep.sweep`;
            ``memgym eval dialogmem`` picks it).
    """
    if config is None:
        config = load_config(DialogMemEvalConfig, path=args.config_path, overrides=args.overrides)
    if config.sweep:
        raise ConfigError("sweep=link_quality runs through 'memgym eval dialogmem' or link_sweep.sweep(args)")
    names = config.memory_names()
    episodes, errors = load_episodes(Path(config.dataset))
    if config.max_episodes:
        episodes = episodes[: config.max_episodes]
    shared = dataclasses.replace(config, memory="", memories=())
    folder_name = config.name or run_name(
        args.runs_dir, "eval-dialogmem", [Path(config.dataset).stem], config_hash(shared)
    )
    rows, stores = {}, []
    for name in names:
        # each memory is its own resumable store, hashed without the list: adding a memory to
        # memories=[...] later reuses the results of the others
        memory_config = store_config(dataclasses.replace(config, memory=name, memories=()))
        store = RunStore.open(args.runs_dir, "eval-dialogmem", memory_config, name=f"{folder_name}/{name}")
        evaluate_memory(memory_config, store, episodes, errors, args.progress)
        rows[name] = store.rows()
        stores.append(store)
    folder = Path(args.runs_dir) / "eval-dialogmem" / folder_name
    maps = {name: EpisodeTable(store.folder / MAP_FILE).load() for name, store in zip(names, stores)}
    write_comparison(folder, rows, seed=config.bootstrap_seed, n_resamples=config.bootstrap_resamples, maps=maps)
    links = {name: LinkLog(store.folder / "links.json").total() for name, store in zip(names, stores)}
    lines = [f"- {n}: {c.quality or 0.0:.1f}% ({c.correct} of {c.linkable})" for n, c in links.items() if c.turns]
    if lines:  # snapshot memories: the share of linkable turns linked to a snapshot showing their object
        with (folder / "comparison.md").open("a", encoding="utf-8") as handle:
            handle.write("\nLink quality (linkable turns linked to a snapshot showing an object they refer to):\n\n")
            handle.write("\n".join(lines) + "\n")
    return folder


def build_memory(config: DialogMemEvalConfig) -> Memory:
    """``config.memory`` built from the eval's options (:meth:`Memory.from_options`: a visual memory
    reads ``config.visual``, ``config.link`` and the formation ``camera``; others take none)."""
    embodied_memory(config.memory)
    return MEMORIES.get(config.memory).from_options(config)


def qa_judge(config: DialogMemEvalConfig, cache: Path | JudgeCache | None) -> Judge | None:
    """The judge of ``config.qa_scorer`` when it needs one (``llm_match``: ``judge.*``, ratings
    cached in ``cache``, a file or an open cache several players share; None: in memory), else None.

    Raises:
        ConfigError: the scorer needs a judge and ``judge.backend`` is the offline reader.
    """
    if not scorer_class(config.qa_scorer, "qa", "qa_scorer").judged:
        return None
    if config.judge.backend == "structured":
        raise ConfigError(f"qa_scorer={config.qa_scorer} needs judge.backend=hf or openai with judge.model set")
    cache = JudgeCache(cache) if isinstance(cache, Path) else cache
    return Judge(build_reasoner(config.judge), config.judge.identity(), cache, config.judge.max_new_tokens)


def qa_scorers(config: DialogMemEvalConfig, judge: Judge | None) -> dict[str, ScorerFactory]:
    """What the env is given besides its ``task_scorers``: ``config.qa_scorer`` built with
    ``judge`` (:func:`qa_judge`), or nothing when it needs none."""
    return {} if judge is None else {"qa": judged_scorer(config.qa_scorer, judge)}


def episodes_at_once(config: DialogMemEvalConfig) -> int:
    """Episodes played at once: the models' :func:`concurrent_items` (the judge counts when
    ``qa_scorer`` needs one); 1 unless they are all HTTP clients."""
    judged = scorer_class(config.qa_scorer, "qa", "qa_scorer").judged
    models = (config.reasoner, config.judge) if judged else (config.reasoner,)
    return concurrent_items(*models)


def build_env(config: DialogMemEvalConfig, memory: Memory, scorers: dict[str, Any]) -> gymnasium.Env:
    """``memgym/DialogMem-v0`` evaluating ``memory`` (semantic frames when its ``reads`` name them),
    its QA items scored by ``config.qa_scorer`` (built from ``scorers`` when they give one)."""
    import gymnasium

    from memgym.envs.dialogmem_env import DialogMemEnvConfig

    env_config = DialogMemEnvConfig(
        camera=config.camera,
        execute_navigation=config.execute_navigation,
        semantic="semantic" in memory.reads,
        frame_cache=config.frame_cache,
        task_scorers={"qa": config.qa_scorer},
    )
    # stored episodes are played whole: no TimeLimit (the registered one bounds generated episodes)
    env_id = benchmark_info("dialogmem").env_id  # memgym/DialogMem-v0
    return gymnasium.make(env_id, config=env_config, scorers=scorers, max_episode_steps=-1)


def evaluate_memory(
    config: DialogMemEvalConfig,
    store: RunStore,
    episodes: list[DialogMemEpisode],
    errors: list[tuple[str, dict[str, Any]]],
    progress: bool,
    only: set[str] | None = None,
) -> None:
    """Play every pending item of ``episodes`` (those whose :func:`item_key` is in ``only``, when
    given) with ``config.memory`` into ``store`` (:class:`DialogMemEvaluation` through
    :func:`~memgym.core.driver.drive`); write its tables. ``errors`` are rows of unusable episodes,
    recorded once."""
    for key, row in errors:
        if key not in store.recorded_keys() and (only is None or key in only):
            store.append(key, row)
    drive(DialogMemEvaluation(config, store.folder, episodes, only), store, progress=progress)


class DialogMemEvaluation(Evaluation):
    """One memory's DialogMem run for :func:`~memgym.core.driver.drive`: one task per episode with
    pending items (on ``config.executor``, :func:`episodes_at_once` at once), played by an
    :class:`EpisodePlayer`; its rows, and its memory's ``links.json`` / ``map.json`` records, the
    saved contents (``save_memory``) and the models' tokens and seconds (``environment.json``)."""

    fast_paths = {
        "episodes at once (threads, HTTP models)": "tests/pipelines/dialogmem/test_evaluation.py::"
        "test_an_http_reasoner_plays_episodes_at_once_with_the_same_results",
        "rendered frames from the frame cache": "tests/sensors/test_frame_cache.py::test_hits_return_the_rendered_frames",
    }

    def __init__(
        self, config: DialogMemEvalConfig, folder: Path, episodes: list[DialogMemEpisode], only: set[str] | None
    ) -> None:
        super().__init__(config)
        self.folder, self.episodes, self.only = folder, episodes, only
        self.desc = f"episodes ({config.memory})"

    def work(self, done: set[str]) -> list[tuple[str, Any]]:
        work = []
        for episode in self.episodes:
            chosen = [i for i in episode.items if self.only is None or item_key(episode, i) in self.only]
            pending = frozenset(i.item_id for i in chosen if item_key(episode, i) not in done)
            if pending:
                work.append((episode.episode_id, (episode, pending)))
        return work

    def setup(self) -> functools.partial:
        # Ray workers do not write the run folder: their judge ratings are cached in memory only;
        # here the players (threads) share one cache
        cache = JudgeCache(self.folder / "judge_cache.jsonl") if self.config.executor == "local" else None
        return functools.partial(EpisodePlayer, self.config, cache)

    def groups(self, work: list[tuple[str, Any]]) -> list[tuple[list[tuple[str, Any]], int]]:
        return [(work, episodes_at_once(self.config))]

    def record(self, store: RunStore, key: str, result: EpisodeResults) -> None:
        store.append_many(result.rows)
        record_counts(store, result.throughput)
        if result.links is not None:
            LinkLog(store.folder / "links.json").save(key, result.links)
        if result.map is not None:
            EpisodeTable(store.folder / MAP_FILE).save(key, result.map)
        if result.memory is not None:
            with (store.folder / "memory.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result.memory) + "\n")

    def write_tables(self, store: RunStore) -> Path:
        return write_tables(store)


class EpisodeResults:
    """What playing one episode produced: ``rows`` (``(key, row)`` per scored item), the memory's
    ``links`` (snapshot memories) and ``map`` (object memories), with ``save_memory`` its
    ``memory`` contents after use, and the models' ``throughput`` (:func:`take_throughput`)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict[str, Any]]] = []
        self.links: LinkCounts | None = None
        self.map: dict[str, int] | None = None
        self.memory: dict[str, Any] | None = None
        self.throughput: dict[str, dict[str, Any]] = {}


class EpisodePlayer:
    """Plays ``(episode, item ids to score)`` with ``config.memory`` and the reasoner in
    ``memgym/DialogMem-v0``; returns its :class:`EpisodeResults`. Judge ratings are cached in
    ``judge_cache`` (None: in memory)."""

    def __init__(self, config: DialogMemEvalConfig, judge_cache: JudgeCache | None) -> None:
        from memgym.agents.reasoner_agent import ReasonerAgent

        memory = build_memory(config)
        judge = qa_judge(config, judge_cache)
        reasoner = build_reasoner(config.reasoner)
        self.save_memory = config.save_memory
        self.env = build_env(config, memory, qa_scorers(config, judge))
        self.agent = ReasonerAgent(memory, reasoner, config.reasoner.max_new_tokens, config.answer_tokens)
        self.models = {"reasoner": reasoner, "judge": None if judge is None else judge.reasoner}

    def __call__(self, job: tuple[DialogMemEpisode, frozenset[str]]) -> EpisodeResults:
        from memgym.agents.agent import run_episode

        episode, pending = job
        results = EpisodeResults()

        def formed(agent: Any) -> None:  # measures of the formed memory, before the use phase
            agent.memory.bind_reasoner(agent.reasoner)  # linkers may consult it
            measured.update(agent.memory.measures(episode))

        measured: dict[str, Any] = {}
        played = run_episode(
            self.env,
            self.agent,
            episode=episode,
            options={"score_items": set(pending)},
            answer_errors=(ReasonerError,),
            after_formation=formed,
        )
        results.map, results.links = measured.get("map"), measured.get("links")
        located = Localisation(episode, measured.get("entry_objects", {}))
        results.rows = item_rows(episode, played.answers, located)
        if self.save_memory:  # after use: snapshot memories are linked by then
            results.memory = {"episode_id": episode.episode_id, **self.agent.memory.contents()}
        results.throughput = take_throughput(self.models)
        return results


def formed_links(episode: DialogMemEpisode, agent: Any) -> LinkCounts | None:
    """Bind the agent's reasoner to its formed memory (linkers may consult it) and take the memory's
    ``links`` measure (:meth:`~memgym.core.protocols.Memory.measures`); None for a memory without snapshots."""
    agent.memory.bind_reasoner(agent.reasoner)
    return agent.memory.measures(episode).get("links")


def item_rows(
    episode: DialogMemEpisode, answers: Sequence[ItemAnswer], located: Localisation
) -> list[tuple[str, dict[str, Any]]]:
    """``(key, row)`` of each scored item of ``episode`` from the loop's ``answers`` (one per item,
    in order; items the env did not score are left out)."""
    return [
        (item_key(episode, item), item_row(episode, item, answer, located))
        for item, answer in zip(episode.items, answers)
        if answer.answered
    ]


def item_row(episode: DialogMemEpisode, item: TaskItem, answer: ItemAnswer, located: Localisation) -> dict[str, Any]:
    """The result row of one answered item: its annotations, the prediction and the env's score
    (an answer error: the message, no reward and no metrics)."""
    action, error = answer.action, answer.error
    row: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "item_id": item.item_id,
        "task": item.task,
        "prompt": item.prompt,
        "reference": item.answer if item.task == "qa" else item.answer.get("object_id"),
        "prediction": action.get("text", "") if error is None else None,
        **{k: v for k, v in item.annotations.items() if k not in ("evidence_turns",)},
        **answer.score,
    }
    if item.task == "navigation":  # the slices of the comparison: an identifying cue was updated
        row["updated"] = bool(item.annotations.get("cue_updated", False))
    if item.task == "navigation" and error is None:
        row["predicted_position"] = np.asarray(action["position"], float).round(3).tolist()
        row.update(located.of(item, action))
    if error is not None:
        row.update({"error": error, "reward": None})
        for metric in ("geodesic_success", "execution_success", "spl", "token_f1", "llm_match"):
            row.pop(metric, None)
    return row


METRICS = ("geodesic_success", "execution_success", "spl", "llm_match", "token_f1")


def write_tables(store: RunStore) -> Path:
    """``results.md``: metrics by task and content type, and QA by verbalised / updated."""
    rows = [r for r in store.rows() if "task" in r]
    present = [m for m in METRICS if any(r.get(m) is not None for r in rows)]
    percent = [_in_percent(r, present) for r in rows]
    errors = sum(1 for r in store.rows() if r.get("error"))
    counts = LinkLog(store.folder / "links.json").total()
    parts = [
        "## overall\n",
        to_markdown(aggregate(percent, ["task"], present)),
        "## by content type\n",
        to_markdown(aggregate(percent, ["task", "content_type"], present)),
    ]
    parts += _qa_breakdown([r for r in percent if r["task"] == "qa"], present)
    if counts.turns:
        parts.append(
            f"\nLink quality: {counts.quality or 0.0:.1f}% ({counts.correct} of {counts.linkable} linkable turns "
            f"linked to a snapshot showing an object they refer to; {counts.linked} of {counts.turns} turns linked).\n"
        )
    parts.append(f"\n{errors} item(s) with errors (see results.jsonl, column 'error'). Scores are percentages.\n")
    return store.write_text("results.md", "\n".join(parts))


def _in_percent(row: dict[str, Any], metrics: Sequence[str]) -> dict[str, Any]:
    """``row`` with its ``metrics`` as percentages (``llm_match`` is one already)."""
    return {
        **row,
        **{m: 100.0 * row[m] if m != "llm_match" and row.get(m) is not None else row.get(m) for m in metrics},
    }


def _qa_breakdown(qa: list[dict[str, Any]], present: Sequence[str]) -> list[str]:
    """The ``QA by verbalised / updated`` section of the QA rows ``qa`` (none without QA rows or
    a QA metric); another registered scorer's 0-1 ``reward`` is shown in percent."""
    qa_metrics = [m for m in ("llm_match", "token_f1") if m in present]
    if not qa_metrics and qa_metric(qa) == "reward":  # another registered scorer's 0-1 score
        qa_metrics = ["reward"]
        qa = [{**r, "reward": None if r.get("reward") is None else 100.0 * r["reward"]} for r in qa]
    if not (qa and qa_metrics):
        return []
    return ["## QA by verbalised / updated\n", to_markdown(aggregate(qa, ["verbalised", "updated"], qa_metrics))]
