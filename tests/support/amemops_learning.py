"""The AMemOps learning check of the slow update-control test, run as a user would run it.

Models of a preset (the update control's: docs/amemops_models.md, "A slow test of the update
control"; ``scripts/amemops_update_control_check.py`` runs the same on several paths) are trained and scored by one ``memgym eval amemops ... train=true``
process, single-threaded, whose environment can select a CPU arithmetic path
(``MKL_CBWR=COMPATIBLE``, ``ATEN_CPU_CAPABILITY=default``, ...: read at process start, so it needs
a fresh process). The check's effects are per-seed accuracies, pooled over seeds by the tests.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from memgym.core.results import RunStore
from memgym.pipelines.amemops.reports import query_rows

SEEDS = (0, 1, 2)
"""Training seeds whose effects the tests pool."""


def _memgym(*args: str) -> list[str]:
    return [sys.executable, "-m", "memgym", *args, "--no-progress"]


def train_and_score(
    runs: Path,
    cores: Sequence[str],
    *,
    preset: str,
    checkpoint: int,
    seeds: Sequence[int] = SEEDS,
    env: Mapping[str, str] | None = None,
    train_keys: Sequence[str] = (),
    eval_keys: Sequence[str] = (),
) -> dict[tuple[str, int], dict[str, list[dict]]]:
    """Train every ``cores`` x ``seeds`` model of ``preset`` (``train_keys`` added to the
    training settings) and score them at step ``checkpoint`` on the preset's held-out
    streams (``eval_keys`` added): one ``memgym eval amemops ... train=true`` process, with ``env``
    added to this one's environment and one thread, which trains the models one after the other
    (sharing the generated streams) and then scores them.

    Returns:
        ``(core, seed) -> query type -> the eval's query rows`` (``initial``, ``post_update``, ...;
        ``correct``, ``answer``, ``attribute``, ``previous_value``), the same queries for every model.
    """
    environment = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    models = ",".join(f"{core}@{preset}" for core in cores)
    command = _memgym(
        "eval",
        "amemops",
        f"preset={preset}",
        "train=true",
        f"models=[{models}]",
        f"seeds=[{','.join(map(str, seeds))}]",
        "contrasts=[]",
        "update_interactions=[]",
        "bootstrap_resamples=0",
        *train_keys,
        *eval_keys,
        "--runs-dir",
        str(runs),
    )
    process = subprocess.run(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.returncode == 0, f"{' '.join(command)} failed:\n{process.stderr[-3000:]}"
    scores: dict[tuple[str, int], dict[str, list[dict]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    (folder,) = (runs / "amemops_eval").iterdir()  # the one eval run (train=true names it after the preset)
    for row in query_rows(RunStore(folder, "").rows()):
        assert row["checkpoint"] == checkpoint
        scores[(row["model"].split("@")[0], int(row["seed"]))][row["query_type"]].append(row)
    return {key: dict(value) for key, value in scores.items()}


UPDATE_CONTROL_STEPS = 250
"""Training steps of the update-control check (the cosine ends there; the preset trains 600)."""


def update_control_scores(
    runs: Path, env: Mapping[str, str] | None = None, steps: int = UPDATE_CONTROL_STEPS
) -> dict[tuple[str, int], dict[str, list[dict]]]:
    """:func:`train_and_score` of KDA and no-erase on ``preset=cpu-update-control`` with the short
    schedule of ``steps``, scored at its end (``env`` selects the arithmetic path)."""
    return train_and_score(
        runs,
        ("kda", "no_erase"),
        env=env,
        preset="cpu-update-control",
        train_keys=(f"steps={steps}", f"checkpoint_steps=[{steps}]"),
        eval_keys=(f"checkpoints=[{steps}]",),
        checkpoint=steps,
    )


def accuracy(rows: Sequence[dict]) -> float:
    """Percentage of query ``rows`` answered right."""
    return 100.0 * sum(bool(r["correct"]) for r in rows) / len(rows)


def pooled_margin(
    scores: Mapping[tuple[str, int], Mapping[str, Sequence[dict]]], core: str, query_type: str, seeds=SEEDS
) -> tuple[float, list[float]]:
    """``core`` minus ``no_erase`` accuracy (pp) on ``query_type`` queries: the mean over ``seeds``
    and the per-seed differences."""
    per_seed = [accuracy(scores[(core, s)][query_type]) - accuracy(scores[("no_erase", s)][query_type]) for s in seeds]
    return sum(per_seed) / len(per_seed), per_seed
