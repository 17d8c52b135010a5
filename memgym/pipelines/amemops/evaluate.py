"""``memgym eval amemops``: trained checkpoints scored on held-out streams (paper sections 2-3).

:func:`evaluate_models` plays every held-out stream through ``memgym/AMemOps-v0`` with the shared
agent loop (:func:`score_stream`; the checkpoint as its registered core memory), one resumable
result row per (model, seed, checkpoint, stream), then writes Table 2 / Table 3 style markdown, a
plot and the requested analyses (:mod:`memgym.pipelines.amemops.reports`) into
``RUNS/amemops_eval/<name>/``; ``executor=ray`` scores the streams on Ray workers
(:class:`CheckpointScorer`, :mod:`memgym.core.executors`) and this process writes the same rows.
Symbolic controls (``data.inputs=symbolic``) run the same code; both heads have
``data.stream.attribute_values + 1`` classes, the last one "none".
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np
import torch

from memgym.agents.agent import run_episode
from memgym.agents.amemops_agent import MemoryAnswerAgent
from memgym.core.benchmark import JobArgs, benchmark_info
from memgym.core.config import load_config
from memgym.core.dataset_kinds import require_dataset
from memgym.core.driver import Evaluation, drive
from memgym.core.errors import ConfigError, RecordError
from memgym.core.registry import MEMORIES
from memgym.core.results import RunStore, run_name
from memgym.core.scoring import scorer_class
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.sources.library import SourceLibrary
from memgym.memory.recurrent.core_memory import CoreMemoryOptions
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.memory.recurrent.trainer import load_checkpoint_model
from memgym.pipelines.amemops.configs import (
    EVAL_JOB,
    AMemOpsEvalConfig,
    DataConfig,
    model_core,
)
from memgym.pipelines.amemops.presets import apply_preset
from memgym.pipelines.amemops.reports import annotate_conditions, query_rows, write_familiarity, write_tables
from memgym.pipelines.amemops.streams import StreamSetTensors, StreamTensors, stream_tensors
from memgym.pipelines.amemops.train import checkpoint_jobs
from memgym.tasks.amemops.breakdowns import (
    recording_contrast_report,
)
from memgym.tasks.amemops.scoring import stream_rows


def stream_env(data: DataConfig, library: SourceLibrary, scorer: str = "attribute_query") -> gymnasium.Env:
    """The registered ``memgym/AMemOps-v0`` playing ``data``'s streams (audio or symbolic inputs,
    ``data.block_frames`` frames per formation step) from ``library``, its queries scored by the
    registered scorer ``scorer``."""
    import memgym.envs  # noqa: F401  (registers the memgym/ env ids)

    return gymnasium.make(
        benchmark_info("amemops").env_id,  # memgym/AMemOps-v0
        config=data.stream,
        library=library,
        inputs=data.inputs,
        block_frames=data.block_frames,
        task_scorers={"attribute_query": scorer},
        max_episode_steps=-1,  # streams of any configuration are played whole (no TimeLimit)
    )


def eval_agent(model: AMemOpsModel, form: Literal["chunked", "step"]) -> MemoryAnswerAgent:
    """An agent answering with ``model`` as its registered core memory, built from the eval's
    ``form`` option (chunked: one parallel pass over the formed stream; step: frame by frame)."""
    return MemoryAnswerAgent(MEMORIES.get(model.config.core).from_options(CoreMemoryOptions(model, form)))


def score_stream(
    env: gymnasium.Env, agent: MemoryAnswerAgent, stream: AMemOpsStream, features: np.ndarray | None = None
) -> list[dict[str, Any]]:
    """Per-query result rows of ``stream`` played through ``env`` by ``agent`` (the shared loop,
    :func:`~memgym.agents.agent.run_episode`): the memory observes every formation block, the agent
    answers each query in the use phase and the env scores it.

    Args:
        features: the stream's inputs ``(T, D)`` when already computed (a cache shared by the
            models of an eval); the env renders them itself otherwise, with the same values
            (``tests/pipelines/amemops/test_env_eval.py`` compares both item by item).
    """
    options = None if features is None else {"features": features}
    return stream_rows(stream, run_episode(env, agent, episode=stream, options=options).scores)


def eval_streams(data: DataConfig, stream_set: str, streams: int) -> tuple[StreamTensors | StreamSetTensors, int]:
    """The evaluation streams: a saved set when ``stream_set`` is set, else ``streams`` generated ones."""
    if stream_set:
        tensors = StreamSetTensors(stream_set, data)
        return tensors, len(tensors)
    return stream_tensors(data), streams


def check_checkpoint_core(path: Path, model_name: str) -> None:
    """Refuse a checkpoint whose memory core is not the one ``model_name`` names.

    Raises:
        RecordError: e.g. ``models=[gdn2]`` reading a folder trained with ``model=no_erase``.
    """
    state = torch.load(path, map_location="cpu", weights_only=False)
    core = state.get("model_config", {}).get("core")
    if core != model_core(model_name):
        raise RecordError(
            f"{path}: checkpoint holds a '{core}' model, but models names '{model_name}' "
            f"(core '{model_core(model_name)}'); point train_dir at {model_name}'s runs or fix the folder"
        )


def load_eval_model(path: Path, tensors: StreamTensors | StreamSetTensors, device: str) -> AMemOpsModel:
    """A trained checkpoint in eval mode on ``device``, checked against the streams' input size."""
    model = load_checkpoint_model(path, lambda c: AMemOpsModel(ModelConfig(**c))).to(device).eval()
    if model.config.input_dim != tensors.input_dim:
        raise RecordError(
            f"{path}: model expects {model.config.input_dim} input features but data.inputs="
            f"{tensors.data.inputs} gives {tensors.input_dim}"
        )
    return model


class CheckpointScorer:
    """``(model, seed, step, path, evaluation tag, data config, stream index)`` -> the result row
    (``queries`` from :func:`score_stream`). Keeps the env and streams of the last evaluation and
    the agent of the last checkpoint loaded."""

    def __init__(self, config: AMemOpsEvalConfig) -> None:
        if config.threads > 0:
            torch.set_num_threads(config.threads)
        self.config = config
        self.tag: str | None = None
        self.path: Path | None = None

    def __call__(self, job: tuple[str, int, int, Path, str, DataConfig, int]) -> dict[str, Any]:
        model_name, seed, step, path, tag, data, index = job
        config = self.config
        if tag != self.tag:
            self.tensors, _ = eval_streams(data, config.stream_set, config.streams)
            self.env = stream_env(data, self.tensors.library, config.scorer)
            self.tag, self.path = tag, None
        if path != self.path:
            self.agent = eval_agent(load_eval_model(path, self.tensors, config.device), config.form)
            self.path = path
        stream = self.tensors.stream(index)
        queries = score_stream(self.env, self.agent, stream, self.tensors.arrays(index)[0])
        if config.eval_sets:
            queries = [q | {"eval_set": data.stream.library.instrument_set} for q in queries]
        return {"model": model_name, "seed": seed, "checkpoint": step, "stream": stream.episode_id, "queries": queries}


def evaluate_models(config: AMemOpsEvalConfig, runs_dir: Path, *, progress: bool = True) -> Path:
    """Score every (model, seed, checkpoint) on the held-out streams (each query by the registered
    scorer ``config.scorer``, through the env); write tables and a plot."""
    scorer_class(config.scorer, "attribute_query", "scorer")
    if config.threads > 0:
        torch.set_num_threads(config.threads)
    if config.stream_set:
        require_dataset(config.stream_set, "amemops")
    jobs = checkpoint_jobs(config, runs_dir)
    for model_name, _, _, path in jobs:
        check_checkpoint_core(path, model_name)
    name = config.name or run_name(runs_dir, EVAL_JOB, [",".join(config.models)], config_hash(config))
    store = RunStore.open(runs_dir, EVAL_JOB, config, name=name, seeds=list(config.seeds))
    return drive(AMemOpsEvaluation(config, jobs, runs_dir), store, progress=progress).folder


class AMemOpsEvaluation(Evaluation):
    """The AMemOps run of :func:`evaluate_models` for :func:`~memgym.core.driver.drive`: one row per
    (model, seed, checkpoint, evaluation, stream), scored by a :class:`CheckpointScorer`; then the
    tables, breakdowns, contrasts and familiarity analyses (:func:`write_reports`)."""

    desc = "amemops eval"
    fast_paths = {
        "stream features computed once, shared by every checkpoint": "tests/pipelines/amemops/test_env_eval.py::"
        "test_env_loop_rows_equal_the_cached_feature_path_and_the_whole_stream_pass",
    }

    def __init__(self, config: AMemOpsEvalConfig, jobs: list[tuple[str, int, int, Path]], runs_dir: Path) -> None:
        super().__init__(config)
        self.jobs, self.runs_dir = jobs, runs_dir

    def work(self, done: set[str]) -> list[tuple[str, Any]]:
        config, work = self.config, []
        for tag, data in config.evaluations():
            _, n_streams = eval_streams(data, config.stream_set, config.streams)
            for model_name, seed, step, path in self.jobs:
                for index in range(n_streams):
                    key = f"{model_name}|{seed}|{step}|{tag}{index}"
                    if key not in done:
                        work.append((key, (model_name, seed, step, path, tag, data, index)))
        return work

    def setup(self) -> functools.partial:
        return functools.partial(CheckpointScorer, self.config)

    def write_tables(self, store: RunStore) -> None:
        write_reports(store, self.config, self.runs_dir)


def first_evaluation_rows(rows: list[dict[str, Any]], config: AMemOpsEvalConfig) -> list[dict[str, Any]]:
    """The query rows of the eval's first evaluation (its recordings and first eval set; every row of
    a saved stream set): those of the tables and the update-specific interaction."""
    data = config.evaluations()[0][1]
    return [
        r
        for r in rows
        if config.stream_set
        or (r["recordings"] == data.stream.recordings and r.get("eval_set") == (config.eval_sets or [None])[0])
    ]


def write_reports(store: RunStore, config: AMemOpsEvalConfig, runs_dir: Path) -> None:
    """Table 2 / 3 style tables and the plot of the first evaluation's rows (all rows of a saved
    set), with the requested breakdowns and exclusions; then the recording contrasts and the
    training-familiarity analysis over every row."""
    every = query_rows(store.rows())
    rows = first_evaluation_rows(every, config)
    data = config.evaluations()[0][1]
    tensors, n_streams = eval_streams(data, config.stream_set, config.streams)
    if config.breakdowns or config.exclude:
        rows = annotate_conditions(rows, tensors, n_streams, config)
    write_tables(store, rows, config)
    if config.recording_contrasts:
        recording_contrast_report(
            every,
            config.models,
            config.contrast_pairs(),
            store.folder,
            n_resamples=config.bootstrap_resamples,
        )
    if config.familiarity:
        write_familiarity(store.folder, every, config, runs_dir)


def eval_job(args: JobArgs) -> Path:
    """``memgym eval amemops key=value ...`` (or ``preset=NAME``, with ``train=true`` training the
    missing runs first: :func:`~memgym.pipelines.amemops.suite.train_missing`); the CLI prints its main table."""
    from memgym.pipelines.amemops.suite import split_train_keys, train_missing

    overrides, preset = apply_preset(args.overrides, "eval")
    overrides, train_only = split_train_keys(overrides)
    config = load_config(AMemOpsEvalConfig, path=args.config_path, overrides=overrides)
    if config.train:
        train_missing(config, preset, args)
    elif train_only:
        raise ConfigError(f"command line: '{train_only[0]}' is a training key; it needs train=true")
    return evaluate_models(config, args.runs_dir, progress=args.progress)
