"""AMemOps state interventions: ``memgym eval amemops intervention=true ...`` (paper: "State
interventions", section 3.4, Fig. 4b,c).

Every held-out stream is played through ``memgym/AMemOps-v0`` with the shared agent loop
(:func:`score_edits`): a :class:`~memgym.memory.recurrent.intervention.StateEditMemory` forms on
the stream once, then the use phase is rewound once per target and edit and answers the target's
eligible queries. For every trained recurrent checkpoint, held-out stream and target source
(:func:`~memgym.tasks.amemops.interventions.edit_plans`) the memory

1. runs the model (chunked form) on frames ``0 .. e-1``, ``e`` the end of the target's final
   occurrence, keeping its per-layer states and the keys its mixers used;
2. builds the edits of :mod:`memgym.memory.recurrent.intervention` in both layers: the target's
   key subspace (top-``rank`` right singular vectors of its keys at the final occurrence, per
   head), ``random_subspaces`` Haar-random subspaces and the most-overlapping other source's
   subspace (from that source's final occurrence before the edit), the controls rescaled per layer
   to the target edit's Frobenius norm (relative error checked < 1e-6);
3. continues the stream from frame ``e`` from each edited state and from the unedited one (one
   batch, up to the last eligible query's read frame); the env scores the answers to the
   eligible queries (``reset``/``rewind_use`` ``score_items``).

Random subspaces depend only on ``subspace_seed``, the stream and the target, so every model sees
the same ones. Rows (one per model × seed × checkpoint × stream × target × edit × query) go to
``RUNS/amemops_interventions/<name>/results.jsonl`` as each stream finishes (resumable); then
``table.md`` (:func:`~memgym.tasks.amemops.interventions.loss_markdown`) and ``interventions.png``
(:func:`~memgym.tasks.amemops.interventions.plot_losses`). Attention cores have no recurrent
state ``S`` and are refused.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np
import torch
import yaml

from memgym.agents.agent import answer_items, form_episode
from memgym.agents.amemops_agent import MemoryAnswerAgent
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config, parse_override
from memgym.core.driver import Evaluation, drive, select_memories
from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError, MemgymError, RecordError
from memgym.core.executors import executor_field, ray_address_field, worker_gpus_field, workers_field
from memgym.core.field_checks import check_fields, checked, members
from memgym.core.results import RunStore
from memgym.core.seeding import NOT_HASHED, setting
from memgym.core.textfiles import read_text
from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.memory.recurrent.intervention import (
    SUBSPACE_RANK,
    StateEdit,
    StateEditMemory,
    edit_states,
    key_subspace,
    most_overlapping,
    random_subspace,
)
from memgym.memory.recurrent.mixers import DELTA_VARIANTS, LayerState
from memgym.memory.recurrent.model import AMemOpsModel
from memgym.pipelines.amemops.configs import PAPER_MODELS, DataConfig, model_core
from memgym.pipelines.amemops.evaluate import eval_streams, load_eval_model, stream_env
from memgym.pipelines.amemops.train import checkpoint_jobs
from memgym.tasks.amemops.interventions import EditPlan, edit_plans, loss_markdown, loss_table, plot_losses
from memgym.tasks.amemops.scoring import OPERATION_TO_QUERY_TYPE

JOB = "amemops_interventions"
NORM_TOLERANCE = 1e-6
"""Largest relative error allowed between a control edit's and the target edit's per-layer norm."""
RECURRENT_MODELS = tuple(m for m in PAPER_MODELS if m in DELTA_VARIANTS)


class InterventionError(MemgymError):
    """An edit could not be built as specified (e.g. a control that cannot be norm-matched)."""


def _sizes_problem(name: str, rank: int, config: AMemOpsInterventionConfig) -> str | None:
    """The subspace rank, random controls and bootstrap resamples in range (one message for the three)."""
    if rank < 1 or config.random_subspaces < 0 or config.bootstrap_resamples < 1:
        return "rank and bootstrap_resamples must be >= 1 and random_subspaces >= 0"
    return None


@dataclasses.dataclass(frozen=True)
class AMemOpsInterventionConfig:
    """``memgym eval amemops intervention=true ...``."""

    intervention: bool = dataclasses.field(
        default=True,
        metadata={
            "help": "run the state-intervention job",
            **checked(
                lambda name, on, config: None if on else "intervention must be true for the state-intervention job"
            ),
        },
    )
    models: tuple[str, ...] = dataclasses.field(
        default=RECURRENT_MODELS,
        metadata={
            "help": "trained recurrent cores to edit (or variants: gdn2@NAME, trained as name=gdn2@NAME-seed<seed>)",
            **checked(
                members(
                    DELTA_VARIANTS,
                    "has no recurrent state S to edit (attention keeps a key/value cache); "
                    "state interventions need one of {choices}",
                    key=model_core,
                )
            ),
        },
    )
    memories: tuple[str, ...] = setting((), "the same as models=[...] (the trained cores are the memories)", added=True)
    memory: str = setting("", "one trained core: memory=NAME is models=[NAME]", added=True)
    seeds: tuple[int, ...] = dataclasses.field(default=(0, 1, 2), metadata={"help": "training seeds"})
    checkpoints: tuple[int, ...] = dataclasses.field(default=(12000, 24000), metadata={"help": "checkpoint steps"})
    streams: int = dataclasses.field(default=48, metadata={"help": "held-out streams"})
    data: DataConfig = dataclasses.field(
        default_factory=lambda: DataConfig(stream=StreamConfig(split="eval"), stream_seed=1000),
        metadata={"help": "evaluation streams (split eval)"},
    )
    stream_set: str = dataclasses.field(default="", metadata={"help": "edit on a saved stream set instead"})
    train_dir: str = dataclasses.field(
        default="", metadata={"help": "folder of train runs (default RUNS/amemops_train)"}
    )
    rank: int = dataclasses.field(
        default=SUBSPACE_RANK, metadata={"help": "key subspace rank per head", **checked(_sizes_problem)}
    )
    random_subspaces: int = dataclasses.field(default=3, metadata={"help": "random-subspace control edits"})
    subspace_seed: int = dataclasses.field(default=0, metadata={"help": "seed of the random subspaces"})
    device: str = dataclasses.field(default="cpu", metadata={"help": "torch device", **NOT_HASHED})
    threads: int = dataclasses.field(default=0, metadata={"help": "torch CPU threads (0: torch default)", **NOT_HASHED})
    name: str = dataclasses.field(default="", metadata={"help": "run folder name (default: config hash)"})
    bootstrap_resamples: int = dataclasses.field(default=10_000, metadata={"help": "bootstrap resamples", **NOT_HASHED})
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()
    worker_gpus: float = worker_gpus_field()

    def __post_init__(self) -> None:
        # memory=X and memories=[...] name the models, as in every eval (the same hash as models=[...])
        models = select_memories(self.memory, self.memories, (), synonym=("models", self.models, RECURRENT_MODELS))
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "memory", "")
        object.__setattr__(self, "memories", ())
        check_fields(self)

    def edit_names(self, plan: EditPlan) -> list[str]:
        """Edits scored for ``plan``: ``none``, ``target``, ``random0..``, ``overlap`` (if a candidate exists)."""
        names = ["none", "target", *(f"random{i}" for i in range(self.random_subspaces))]
        return names + (["overlap"] if plan.others else [])


def intervention_requested(args: JobArgs) -> bool:
    """Whether ``memgym eval amemops`` was asked for the intervention job (``intervention=true`` on
    the command line or ``intervention: true`` in the config file)."""
    value: Any = False
    if args.config_path is not None and Path(args.config_path).is_file():
        try:
            loaded = yaml.safe_load(read_text(args.config_path))
        except yaml.YAMLError:
            loaded = None  # load_config reports the file with its error
        if isinstance(loaded, dict):
            value = loaded.get("intervention", False)
    for override in args.overrides:
        key, parsed = parse_override(override)
        if key == "intervention":
            value = parsed
    if not isinstance(value, bool):
        raise ConfigError(f"intervention={value!r}: expected true or false")
    return value


def subspace_generator(subspace_seed: int, stream_id: str, target: str) -> torch.Generator:
    """The random-subspace generator of one (stream, target); model independent."""
    digest = hashlib.sha256(f"{subspace_seed}|{stream_id}|{target}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)


def occurrence_bases(keys: list[torch.Tensor], onset: int, end: int, rank: int) -> list[torch.Tensor]:
    """Per-layer ``(H, d_k, rank)`` key subspaces of frames ``onset .. end-1`` from keys ``(1, H, T, d_k)``."""
    return [key_subspace(layer[0, :, onset:end], rank) for layer in keys]


def check_matched(norms: list[torch.Tensor], target: list[torch.Tensor], edit: str) -> None:
    """Raise unless every layer's edit norm matches the target edit's within :data:`NORM_TOLERANCE`."""
    for layer, (got, want) in enumerate(zip(norms, target, strict=True)):
        error = ((got - want).abs() / want).max().item() if bool((want > 0).all()) else float("nan")
        if not error < NORM_TOLERANCE:
            raise InterventionError(
                f"{edit} edit of layer {layer}: norm {got.tolist()} vs target {want.tolist()} "
                f"(relative error {error:.3g}, allowed < {NORM_TOLERANCE:g}); the target or control "
                "subspace reads nothing from the state"
            )


def edited_states(
    states: list[LayerState],
    keys: list[torch.Tensor],
    plan: EditPlan,
    config: AMemOpsInterventionConfig,
    generator: torch.Generator,
) -> dict[str, dict[str, Any]]:
    """Every edit of ``plan`` from the model's per-layer ``states`` and ``keys`` ``(1, H, T, d_k)``
    after frames ``0 .. plan.edit_frame - 1``.

    Returns:
        edit name -> ``{"states": per-layer states at the edit frame (batch 1), "bases": per-layer
        ``(H, d_k, rank)`` bases (None for ``none``), "norms": per-layer ``(1,)`` edit norms,
        "source": the subspace's source (overlap: the chosen other source)}``.
    """
    target = occurrence_bases(keys, plan.target.onset, plan.target.end, config.rank)
    target_states, target_norms = edit_states(states, target)
    edits = {
        "none": {"states": states, "bases": None, "norms": None, "source": ""},
        "target": {"states": target_states, "bases": target, "norms": target_norms, "source": plan.target.identity},
    }
    controls: list[tuple[str, list[torch.Tensor], str]] = []
    heads, d_k = target[0].shape[0], target[0].shape[1]
    for i in range(config.random_subspaces):
        bases = [random_subspace(heads, d_k, config.rank, generator=generator).to(target[0].device) for _ in target]
        controls.append((f"random{i}", bases, ""))
    if plan.others:
        candidates = [occurrence_bases(keys, o.onset, o.end, config.rank) for o in plan.others]
        chosen = most_overlapping(target, candidates)
        controls.append(("overlap", candidates[chosen], plan.others[chosen].identity))
    for name, bases, source in controls:
        control_states, norms = edit_states(states, bases, match_norms=target_norms)
        check_matched(norms, target_norms, name)
        edits[name] = {"states": control_states, "bases": bases, "norms": norms, "source": source}
    return edits


class PlanEdits:
    """The :class:`~memgym.memory.recurrent.intervention.StateEdit` of one plan: builds its edits
    (:func:`edited_states`) when the memory reaches the edit frame and keeps them for the rows."""

    def __init__(self, stream: AMemOpsStream, plan: EditPlan, config: AMemOpsInterventionConfig) -> None:
        self.plan, self.config = plan, config
        self.names = config.edit_names(plan)
        self.generator = subspace_generator(config.subspace_seed, stream.episode_id, plan.target.identity)
        self.edits: dict[str, dict[str, Any]] = {}
        roles = plan.roles()
        last_read = max(int(i.annotations["end_frame"]) for i in stream.items if i.item_id in roles)
        self.state_edit = StateEdit(plan.edit_frame, last_read, self.build)

    def build(self, states: list[LayerState], keys: list[torch.Tensor]) -> dict[str, list[LayerState]]:
        self.edits = edited_states(states, keys, self.plan, self.config, self.generator)
        return {name: self.edits[name]["states"] for name in self.names}

    def row(self, item: TaskItem, name: str, score: dict[str, Any]) -> dict[str, Any]:
        """The result row of edit ``name`` on eligible query ``item`` from the env's ``score``."""
        norms = self.edits[name]["norms"]
        return {
            "target": self.plan.target.identity,
            "edit_frame": self.plan.edit_frame,
            "edit": name,
            "edit_type": name.rstrip("0123456789"),
            "subspace_source": self.edits[name]["source"],
            "edit_norms": None if norms is None else [float(n[0]) for n in norms],
            "query": item.item_id,
            "role": self.plan.roles()[item.item_id],
            "identity": item.annotations["identity"],
            "query_type": OPERATION_TO_QUERY_TYPE[item.annotations["operation"]],
            "attribute": item.annotations["attribute"],
            "answer": int(score["answer"]),
            "prediction": int(score["predicted"]),
            "correct": int(score["correct"]),
        }


def score_edits(
    env: gymnasium.Env,
    model: AMemOpsModel,
    stream: AMemOpsStream,
    features: np.ndarray,
    plans: list[EditPlan],
    config: AMemOpsInterventionConfig,
) -> list[dict[str, Any]]:
    """One row per plan × eligible query × edit of ``stream`` (module docstring), played through
    ``env`` (``memgym/AMemOps-v0``, :func:`~memgym.pipelines.amemops.evaluate.stream_env`) with the
    shared agent loop: a :class:`StateEditMemory` forms on the stream once (``features`` ``(T, D)``:
    the stream's inputs, handed to the env), then the use phase is rewound once per plan and edit,
    scoring the plan's eligible queries only."""
    per_plan = [PlanEdits(stream, plan, config) for plan in plans]
    memory = StateEditMemory(model, [p.state_edit for p in per_plan])
    agent = MemoryAnswerAgent(memory)
    form_episode(env, agent, episode=stream, options={"features": features})
    items = {item.item_id: item for item in stream.items}
    rows = []
    for index, edits in enumerate(per_plan):
        roles = edits.plan.roles()
        scores: dict[tuple[str, str], dict[str, Any]] = {}
        for name in edits.names:
            memory.select(index, name)
            observation, info = env.unwrapped.rewind_use(score_items=roles)
            answers, _ = answer_items(env, agent, observation, info)
            scores.update(((a.item_id, name), a.score) for a in answers if a.answered)
        for item_id in (i.item_id for i in stream.items if i.item_id in roles):
            rows += [edits.row(items[item_id], name, scores[item_id, name]) for name in edits.names]
    return rows


def run_interventions(config: AMemOpsInterventionConfig, runs_dir: Path, *, progress: bool = True) -> Path:
    """Score every edit of every (checkpoint, stream, target); write ``table.md`` and ``interventions.png``."""
    if config.threads > 0:
        torch.set_num_threads(config.threads)
    store = RunStore.open(runs_dir, JOB, config, name=config.name or None, seeds=list(config.seeds))
    return drive(InterventionEvaluation(config, runs_dir), store, progress=progress).folder


class EditStreams:
    """The held-out streams of an intervention run, their edit plans and the env playing them."""

    def __init__(self, config: AMemOpsInterventionConfig) -> None:
        self.tensors, n_streams = eval_streams(config.data, config.stream_set, config.streams)
        self.streams = [self.tensors.stream(i) for i in range(n_streams)]
        self.plans = [edit_plans(s, rank=config.rank) for s in self.streams]
        self.env = stream_env(config.data, self.tensors.library)

    def keys(self, prefix: str, index: int, config: AMemOpsInterventionConfig) -> list[str]:
        """Result keys of every (target, edit, eligible query) of stream ``index``."""
        plans = self.plans[index]
        return [
            f"{prefix}|{index}|{p.target.identity}|{e}|{q}"
            for p in plans
            for q in p.roles()
            for e in config.edit_names(p)
        ]


class InterventionEvaluation(Evaluation):
    """The intervention run of :func:`run_interventions` for :func:`~memgym.core.driver.drive`: one
    task per (checkpoint, stream) with a pending row, played by an :class:`EditScorer` (here, in
    this process); its pending rows appended in one write; then :func:`write_summary`."""

    desc = "interventions"
    fast_paths = {
        "one formation per stream, the use phase rewound per edit": "tests/pipelines/amemops/test_interventions.py::"
        "test_env_loop_rows_equal_direct_edits_and_the_unedited_whole_stream_and_are_deterministic",
    }

    def __init__(self, config: AMemOpsInterventionConfig, runs_dir: Path) -> None:
        super().__init__(config)
        self.runs_dir, self.done, self.streams = runs_dir, set(), EditStreams(config)

    def work(self, done: set[str]) -> list[tuple[str, Any]]:
        self.done = done
        work = []
        for model_name, seed, step, path in checkpoint_jobs(self.config, self.runs_dir):
            prefix = f"{model_name}|{seed}|{step}"
            for index in range(len(self.streams.streams)):
                if not all(k in done for k in self.streams.keys(prefix, index, self.config)):
                    work.append((f"{prefix}|{index}", (model_name, seed, step, path, index)))
        return work

    def setup(self) -> functools.partial:
        return functools.partial(EditScorer, self.config, self.streams)

    def record(self, store: RunStore, key: str, result: list[dict[str, Any]]) -> None:
        pending = []
        for row in result:
            row_key = f"{key}|{row['target']}|{row['edit']}|{row['query']}"
            if row_key not in self.done:
                pending.append((row_key, row))
        store.append_many(pending)

    def write_tables(self, store: RunStore) -> None:
        write_summary(store, self.config)


class EditScorer:
    """``(model, seed, step, checkpoint path, stream index)`` -> the rows of :func:`score_edits` with
    the model, seed, checkpoint and stream; keeps the model of the last checkpoint loaded."""

    def __init__(self, config: AMemOpsInterventionConfig, streams: EditStreams) -> None:
        self.config, self.streams = config, streams
        self.path: Path | None = None

    def __call__(self, job: tuple[str, int, int, Path, int]) -> list[dict[str, Any]]:
        model_name, seed, step, path, index = job
        tensors = self.streams.tensors
        if path != self.path:
            self.model = load_eval_model(path, tensors, self.config.device)
            if self.model.config.core not in DELTA_VARIANTS:
                raise RecordError(f"{path}: core '{self.model.config.core}' has no recurrent state to edit")
            self.path = path
        stream = self.streams.streams[index]
        base = {"model": model_name, "seed": seed, "checkpoint": step, "stream": stream.episode_id}
        features = tensors.arrays(index)[0]
        rows = score_edits(self.streams.env, self.model, stream, features, self.streams.plans[index], self.config)
        return [base | r for r in rows]


def write_summary(store: RunStore, config: AMemOpsInterventionConfig) -> str:
    """Write ``table.md`` and ``interventions.png`` from the store's rows; returns the markdown."""
    rows = store.rows()
    if not rows:
        text = "_no eligible queries: no stream has a target source queried after its final occurrence_\n"
        store.write_text("table.md", text)
        return text
    table = loss_table(rows, rng=np.random.default_rng(0), n_resamples=config.bootstrap_resamples)
    n_streams = len({r["stream"] for r in rows})
    n_targets = len({(r["stream"], r["target"]) for r in rows})
    text = (
        f"{n_targets} edited targets in {n_streams} streams; edits: target key subspace (rank {config.rank}), "
        f"{config.random_subspaces} random subspaces, most-overlapping other-source subspace, controls "
        "norm-matched per layer.\n\n" + loss_markdown(table, model_order=config.models)
    )
    store.write_text("table.md", text)
    plot_losses(table, store.folder / "interventions.png")
    return text


def intervention_job(args: JobArgs) -> Path:
    """``memgym eval amemops intervention=true key=value ...``; prints the table."""
    config = load_config(AMemOpsInterventionConfig, path=args.config_path, overrides=args.overrides)
    folder = run_interventions(config, args.runs_dir, progress=args.progress)
    print((folder / "table.md").read_text(encoding="utf-8"))
    return folder
