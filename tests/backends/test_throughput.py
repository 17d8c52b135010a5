"""Token counts and seconds of local models in a run's environment.json."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memgym.backends.throughput import Throughput, record_counts, take_throughput
from memgym.core.errors import RecordError
from memgym.core.results import RunStore


@dataclasses.dataclass(frozen=True)
class Config:
    seed: int = 0


class Model:
    def __init__(self):
        self.throughput = Throughput()


def test_rates_leave_the_first_token_of_each_reply_to_the_prompt_phase():
    totals = Throughput()
    totals.add(100, 5, 0.5, 0.4)
    totals.add(300, 1, 1.5, 0.0)
    assert totals.to_dict() == {
        "replies": 2,
        "prompt_tokens": 400,
        "generated_tokens": 6,
        "prompt_seconds": 2.0,
        "generation_seconds": 0.4,
        "prompt_tokens_per_s": 200.0,
        "generation_tokens_per_s": 10.0,  # (6 - 2) tokens after the first of each reply, in 0.4 s
    }
    assert Throughput().to_dict()["prompt_tokens_per_s"] is None
    assert Throughput.from_dict(totals.to_dict()).to_dict() == totals.to_dict()


def test_recorded_counts_move_into_environment_json_and_add_up_over_resumed_sessions(tmp_path):
    store = RunStore.open(tmp_path, "job", Config(), name="run", seeds=(3,))
    model, structured = Model(), object()
    model.throughput.add(10, 2, 1.0, 0.5)
    record_counts(store, take_throughput({"reasoner": model, "structured": structured, "judge": None}))
    model.throughput.add(20, 3, 1.0, 0.5)
    record_counts(store, take_throughput({"reasoner": model}))  # only the newer reply is added
    assert model.throughput.replies == 0
    del store
    resumed = RunStore.open(tmp_path, "job", Config(), name="run")
    model.throughput.add(30, 1, 2.0, 0.0)
    record_counts(resumed, take_throughput({"reasoner": model}))
    environment = json.loads((tmp_path / "job" / "run" / "environment.json").read_text())
    assert environment["seeds"] == [3] and set(environment["throughput"]) == {"reasoner"}
    stats = environment["throughput"]["reasoner"]
    assert (stats["replies"], stats["prompt_tokens"], stats["generated_tokens"]) == (3, 60, 6)
    assert stats["prompt_seconds"] == 4.0 and stats["generation_tokens_per_s"] == 3.0
    with pytest.raises(RecordError, match="reading only"):
        RunStore(tmp_path / "job" / "run", "").record_environment("x", 1)
