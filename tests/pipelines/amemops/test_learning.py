"""Slow: on the symbolic control, erasing cores beat no-erase on post-update queries (paper 3.4).

The paper's symbolic controls (unit-vector identities, two 16-value attributes plus "none")
give GDN2, KDA and GDN 82.7-85.1% per-attribute update accuracy against 58.2% for no-erase.
Here (``preset=cpu-tiny``) GDN2, KDA and no-erase train for 200 steps of 16 fresh short streams (the ``cpu-small``
streams: 384 frames, two initial, four post-update and one absent query proposal, one
distractor) with one layer and one head of 64 (the paper's symbolic layout at width 64), seed 0,
one process each, and are scored on 96 held-out streams of the eval split (about 150 s of CPU in
all, measured under heavy load: some 75-90 s on an idle 2-core machine). Every number is a function of the seeds
(batches, initialisation, eval streams), so the outcome is deterministic up to float order.

Asserted: GDN2 and KDA each beat no-erase on post-update queries by at least
:data:`MARGIN_PP` percentage points, and GDN2 beats the best constant answer (one-sided binomial
p < 0.01). Offline, seeds 0, 1 and 2 of these settings gave post-update margins over no-erase of
+19.0, +56.0 and +25.0 pp (GDN2) and +27.4, +54.8 and +26.2 pp (KDA) on these 84 queries, so the
asserted 10 pp is half the smallest. At this size the erasing cores win on initial queries by as
much (+22.1, +44.8, +20.2 pp for GDN2): the update-specific part (post-update margin minus initial
margin: -3.1, +11.2, +4.8 pp) is not robust here and is not asserted (docs/amemops_models.md,
"The slow learning test").
"""

from __future__ import annotations

import collections
import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from memgym.core.config import load_config
from memgym.core.results import RunStore
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig
from memgym.pipelines.amemops.evaluate import evaluate_models
from memgym.pipelines.amemops.presets import CPU_TINY_MODELS, CPU_TINY_STEPS, CPU_TINY_TRAIN
from memgym.pipelines.amemops.reports import query_rows
from memgym.pipelines.amemops.train import train_model

STEPS = CPU_TINY_STEPS
MODELS = CPU_TINY_MODELS  # gdn2, kda, no_erase
SYMBOLIC = tuple(o for o in CPU_TINY_TRAIN if o.startswith("data."))
EVAL_STREAMS = 96
MARGIN_PP = 10.0
"""Smallest post-update advantage (pp) asserted for each erasing core over no-erase."""


def _train(runs: Path, model: str) -> None:
    train_model(load_config(AMemOpsTrainConfig, overrides=[f"model={model}", *CPU_TINY_TRAIN]), runs, progress=False)


@pytest.fixture(scope="module")
def post_update(tmp_path_factory) -> dict[str, list[dict]]:
    """Post-update query rows per model (three symbolic runs, one process each)."""
    runs = tmp_path_factory.mktemp("symbolic")
    with ProcessPoolExecutor(len(MODELS), mp_context=multiprocessing.get_context("spawn")) as pool:
        for future in [pool.submit(_train, runs, m) for m in MODELS]:
            future.result()
    overrides = [
        f"models=[{','.join(MODELS)}]",
        "seeds=[0]",
        f"checkpoints=[{STEPS}]",
        f"streams={EVAL_STREAMS}",
        "threads=1",
        "bootstrap_resamples=0",
        "data.stream.split=eval",
        *SYMBOLIC,
    ]
    folder = evaluate_models(load_config(AMemOpsEvalConfig, overrides=overrides), runs, progress=False)
    rows = collections.defaultdict(list)
    for row in query_rows(RunStore(folder, "").rows()):
        if row["query_type"] == "post_update":
            rows[row["model"]].append(row)
    return rows


def accuracy(rows: list[dict]) -> float:
    return 100.0 * sum(r["correct"] for r in rows) / len(rows)


@pytest.mark.slow
@pytest.mark.parametrize("core", ["gdn2", "kda"])
def test_erasing_core_beats_no_erase_on_post_update_queries(post_update, core):
    assert len(post_update[core]) == len(post_update["no_erase"]) >= 80  # the same queries
    margin = accuracy(post_update[core]) - accuracy(post_update["no_erase"])
    assert margin >= MARGIN_PP, (
        f"{core} {accuracy(post_update[core]):.1f}% vs no_erase {accuracy(post_update['no_erase']):.1f}% "
        f"on {len(post_update[core])} post-update queries"
    )


@pytest.mark.slow
def test_gdn2_beats_the_best_constant_answer(post_update):
    rows = post_update["gdn2"]
    counts = collections.defaultdict(collections.Counter)
    for row in rows:
        counts[row["attribute"]][row["answer"]] += 1
    chance = max(sum(max(c.values()) for c in counts.values()) / len(rows), 1 / 16)
    threshold = chance + 2.33 * math.sqrt(chance * (1 - chance) / len(rows))
    assert accuracy(rows) / 100 > threshold, f"gdn2 {accuracy(rows):.1f}% on {len(rows)} queries (chance {chance:.3f})"
