"""The ``digits`` benchmark: ``memgym generate digits`` writes episodes, ``memgym eval digits``
plays each memory on them through memgym's evaluation driver (:mod:`memgym.core.driver`:
memory selection, resume, executors, tables).

    memgym generate digits episodes=20 length=8 --out runs/digits/episodes.jsonl
    memgym eval digits dataset=runs/digits/episodes.jsonl memories=[digit_span] span=4

Rows (``RUNS/eval-digits/NAME/results.jsonl``, one per item): ``memory``, ``episode_id``,
``item_id``, ``position``, ``from_end`` (digits said after it), ``reference``, ``prediction`` and
the scorer's metrics; ``results.md``: mean ``reward`` by memory and by ``from_end``.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Literal

import gymnasium
import numpy as np

from memgym.agents.agent import Agent, run_episode
from memgym.core.benchmark import Benchmark, BenchmarkInfo, JobArgs
from memgym.core.config import load_config
from memgym.core.driver import Evaluation, drive, select_memories
from memgym.core.episode import Dataset, Episode
from memgym.core.errors import ConfigError
from memgym.core.executors import executor_field, ray_address_field, workers_field
from memgym.core.registry import MEMORIES
from memgym.core.results import RunStore, aggregate, run_name, to_markdown
from memgym.core.seeding import config_hash, setting
from memgym.memory import memory_reads
from memgym.pipelines.reporting import RunKind
from memgym_example_benchmark.env import ENV_ID, digits_episode

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="memgym_example_benchmark.env:DigitsEnv")

RUNS = RunKind(system=lambda folder, row: row["memory"], metrics=("reward",), pivot="from_end")
"""How ``memgym report`` (and the table ``memgym eval digits`` ends with) tabulates a run: memory x
mean reward per number of digits said after the one asked."""
INFO = BenchmarkInfo(
    title="Digits",
    env_id=ENV_ID,
    gives=frozenset({"dialogue"}),
    eval_jobs=("eval-digits",),
    dataset_file=True,
    report="memgym_example_benchmark.benchmark:RUNS",
)
JOB = INFO.eval_jobs[0]


@dataclasses.dataclass(frozen=True)
class DigitsConfig:
    """``memgym generate digits`` keys."""

    episodes: int = setting(20, "episodes", min=1)
    length: int = setting(8, "digits said per episode", min=1)
    questions: int = setting(3, "questions per episode", min=1)
    seed: int = setting(0, "seed")


def digits_memory(name: str) -> None:
    """Refuse a memory that reads what Digits does not give (one line naming it)."""
    extra = memory_reads(name) - INFO.gives
    if extra:
        raise ConfigError(f"memory '{name}' reads {', '.join(sorted(extra))}, which Digits does not give")


@dataclasses.dataclass(frozen=True)
class DigitsEvalConfig:
    """``memgym eval digits`` keys."""

    dataset: str = setting("runs/digits/episodes.jsonl", "episodes JSONL ('memgym generate digits')")
    memory: str = setting("", "one memory: memory=NAME is memories=[NAME]")
    memories: tuple[str, ...] = setting((), "memories compared on the same items (default [digit_span])")
    span: int = setting(8, "digit_span: digits it keeps", min=1)
    scorer: str = setting("exact_match", "registered scorer of qa items")
    name: str = setting("", "run folder name (default: the memories and the config hash)", hashed=False)
    executor: Literal["local", "ray"] = executor_field()
    ray_address: str = ray_address_field()
    workers: int = workers_field()

    def __post_init__(self) -> None:
        memories = select_memories(self.memory, self.memories, ("digit_span",), check=digits_memory)
        object.__setattr__(self, "memories", memories)
        object.__setattr__(self, "memory", "")


class DigitsBenchmark(Benchmark):
    """Digits (module docstring)."""

    name = "digits"
    description = "hear a list of digits, then say the digit at a position"
    info = INFO

    def job_configs(self, job: str) -> dict[str, type]:
        return {"": {"generate": DigitsConfig, "eval": DigitsEvalConfig}[job]} if job in ("generate", "eval") else {}

    def generate(self, args: JobArgs) -> Path:
        config = load_config(DigitsConfig, path=args.config_path, overrides=args.overrides)
        rng = np.random.default_rng(config.seed)
        episodes = [digits_episode(rng, i, config.length, config.questions) for i in range(config.episodes)]
        out = Path(args.out or Path(args.runs_dir) / "digits" / f"episodes-{config_hash(config)}.jsonl")
        Dataset(episodes).save(out)
        return out

    def eval(self, args: JobArgs) -> Path:
        config = load_config(DigitsEvalConfig, path=args.config_path, overrides=args.overrides)
        episodes = list(Dataset.load(config.dataset))
        name = config.name or run_name(args.runs_dir, JOB, [",".join(config.memories)], config_hash(config))
        store = RunStore.open(args.runs_dir, JOB, config, name=name)
        return drive(DigitsEvaluation(config, episodes), store, progress=args.progress).folder


class DigitsEvaluation(Evaluation):
    """One task per (memory, episode) with an unscored item; its rows; ``results.md``."""

    desc = "digits"

    def __init__(self, config: DigitsEvalConfig, episodes: list[Episode]) -> None:
        super().__init__(config)
        self.episodes = episodes

    def work(self, done: set[str]) -> list[tuple[str, Any]]:
        return [
            (f"{memory}|{episode.episode_id}", (memory, episode))
            for memory in self.config.memories
            for episode in self.episodes
            if any(f"{memory}|{episode.episode_id}|{item.item_id}" not in done for item in episode.items)
        ]

    def setup(self) -> functools.partial:
        return functools.partial(EpisodePlayer, self.config)

    def record(self, store: RunStore, key: str, result: list[tuple[str, dict[str, Any]]]) -> None:
        done = store.done_keys()
        store.append_many([(k, row) for k, row in result if k not in done])

    def write_tables(self, store: RunStore) -> Path:
        rows = store.rows()
        parts = ["## by memory\n", to_markdown(aggregate(rows, ["memory"], ["reward"]))]
        parts += [
            "## by digits said after the one asked\n",
            to_markdown(aggregate(rows, ["memory", "from_end"], ["reward"])),
        ]
        return store.write_text("results.md", "\n".join(parts))


class RecallAgent(Agent):
    """Answers with what its memory retrieves for the question."""

    def answer(self, observation: Any, info: dict[str, Any]) -> str:
        return self.memory.retrieve(observation)


class EpisodePlayer:
    """``(memory name, episode)`` -> its ``(key, row)`` pairs, played in ``memgym_example/Digits-v0``."""

    def __init__(self, config: DigitsEvalConfig) -> None:
        self.config = config
        self.env = gymnasium.make(ENV_ID, task_scorers={"qa": config.scorer}, max_episode_steps=-1)

    def __call__(self, job: tuple[str, Episode]) -> list[tuple[str, dict[str, Any]]]:
        name, episode = job
        agent = RecallAgent(MEMORIES.get(name).from_options(self.config))
        played = run_episode(self.env, agent, episode=episode)
        return [
            (
                f"{name}|{episode.episode_id}|{item.item_id}",
                {"memory": name, "episode_id": episode.episode_id, "item_id": item.item_id, **item.annotations,
                 "reference": item.answer, "prediction": answer.action, **answer.score},
            )
            for item, answer in zip(episode.items, played.answers)
        ]  # fmt: skip
