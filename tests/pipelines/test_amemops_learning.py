"""Slow: a short CPU training run beats chance on post-update queries.

The models train on the same small set of embedded-default streams (synthetic environmental
sounds, 384-frame streams, several updates each) and are scored on held-out streams of the eval
split. Post-update answers are one of four values (never "none"), so chance is 25%; with ~550
post-update queries (192 streams) a pass needs a one-sided binomial p < 0.01 above it.
"""

from __future__ import annotations

import math

import pytest

from memgym.core.config import load_config
from memgym.core.results import RunStore
from memgym.pipelines.amemops_models import (
    AMemOpsEvalConfig,
    AMemOpsTrainConfig,
    evaluate_models,
    query_rows,
    train_model,
)

STEPS = 400
STREAM = [
    "data.stream.frames=384",
    "data.stream.n_initial=2",
    "data.stream.n_update=4",
    "data.stream.n_interference=0",
    "data.stream.n_absent=1",
    "data.stream.distractors=[1]",
    "data.stream.offset_seconds=[2,4]",
]
TRAIN = [
    f"steps={STEPS}",
    "batch_size=16",
    "lr=0.003",
    "warmup_steps=20",
    f"checkpoint_steps=[{STEPS}]",
    "save_every=100",
    "data.pool=256",
    "arch.width=64",
    "arch.head_dim=32",
    "arch.mlp_hidden=128",
    "threads=1",
]


@pytest.mark.slow
# Measured post-update accuracy of this short run (400 steps) on held-out streams: kda 41-42%, no_erase
# 39-42%, attention_rope 52%; gdn2 22-37%, gdn 29-35% and mamba2 30% vary from run to run
# around the significance threshold, so they are not asserted here (they need longer training).
@pytest.mark.parametrize("model", ["kda", "no_erase", "attention_rope"])
def test_short_training_beats_chance_on_post_update_queries(tmp_path_factory, model):
    runs = tmp_path_factory.getbasetemp() / "amemops_learning"
    train_model(load_config(AMemOpsTrainConfig, overrides=[f"model={model}", *TRAIN, *STREAM]), runs, progress=False)
    config = load_config(
        AMemOpsEvalConfig,
        overrides=[
            f"models=[{model}]",
            "seeds=[0]",
            f"checkpoints=[{STEPS}]",
            "streams=192",
            *STREAM,
            "data.stream.split=eval",
        ],
    )
    folder = evaluate_models(config, runs, progress=False)
    rows = [r for r in query_rows(RunStore(folder, "").rows()) if r["query_type"] == "post_update"]
    accuracy = sum(r["correct"] for r in rows) / len(rows)
    # one-sided binomial test against guessing one of the four values: p < 0.01
    threshold = 0.25 + 2.33 * math.sqrt(0.25 * 0.75 / len(rows))
    assert len(rows) >= 80, f"only {len(rows)} post-update queries"
    assert accuracy > threshold, f"{model}: post-update accuracy {accuracy:.3f} on {len(rows)} queries (chance 0.25)"
