"""State-intervention job: edits at the edit frame, norm matching, end to end with resume and determinism."""

from __future__ import annotations

import json

import pytest
import torch

from memgym.core.benchmark import JobArgs
from memgym.core.errors import ConfigError
from memgym.datasets.amemops.config import StreamConfig
from memgym.memory.recurrent.intervention import stack_states
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
from memgym.pipelines.amemops import interventions
from memgym.pipelines.amemops.benchmark import AMemOpsBenchmark
from memgym.pipelines.amemops.configs import DataConfig
from memgym.pipelines.amemops.evaluate import stream_env
from memgym.pipelines.amemops.interventions import (
    AMemOpsInterventionConfig,
    InterventionError,
    check_matched,
    edited_states,
    intervention_requested,
    score_edits,
    subspace_generator,
)
from memgym.pipelines.amemops.streams import stream_tensors
from memgym.pipelines.amemops.train import train_job
from memgym.tasks.amemops.interventions import edit_plans

STREAM = {
    "frames": 256,
    "n_initial": 2,
    "n_update": 2,
    "n_interference": 0,
    "n_absent": 1,
    "distractors": (1,),
    "offset_seconds": (2, 4),
}
STREAM_OVERRIDES = [
    "data.inputs=symbolic",
    *(f"data.stream.{k}={list(v) if isinstance(v, tuple) else v}" for k, v in STREAM.items()),
]
TINY = ["arch.width=16", "arch.heads=2", "arch.head_dim=8", "arch.mlp_hidden=16", "arch.layers=2"]
EVAL = ["seeds=[0]", "checkpoints=[1]", "streams=2", "bootstrap_resamples=200", *STREAM_OVERRIDES]


@pytest.fixture(scope="module")
def setup():
    """An untrained two-layer, two-head gdn2 and a symbolic eval stream with its edit plans."""
    data = DataConfig(inputs="symbolic", stream=StreamConfig(split="eval", **STREAM), stream_seed=1000)
    tensors = stream_tensors(data)
    torch.manual_seed(0)
    model = AMemOpsModel(
        ModelConfig(core="gdn2", input_dim=tensors.input_dim, width=16, heads=2, head_dim=8, mlp_hidden=16)
    ).eval()
    index = next(i for i in range(20) if any(p.other_queries for p in edit_plans(tensors.stream(i))))
    stream, arrays = tensors.stream(index), tensors.arrays(index)
    return model, stream, arrays, edit_plans(stream), stream_env(data, tensors.library)


def test_target_edit_zeroes_its_subspace_at_the_edit_frame_and_controls_match_its_norm(setup):
    model, _, arrays, plans, _ = setup
    plan = next(p for p in plans if p.others)
    features = torch.from_numpy(arrays[0])
    with torch.no_grad():
        prefix = model(features[None, : plan.edit_frame])
    generator = subspace_generator(0, "s", "t")
    edits = edited_states(prefix["states"], prefix["keys"], plan, AMemOpsInterventionConfig(), generator)
    assert set(edits) == {"none", "target", "random0", "random1", "random2", "overlap"}
    assert edits["overlap"]["source"] in {o.identity for o in plan.others}
    for layer, (state, basis) in enumerate(zip(edits["target"]["states"], edits["target"]["bases"], strict=True)):
        assert torch.equal(edits["none"]["states"][layer]["S"], prefix["states"][layer]["S"])
        reads = state["S"] @ basis.unsqueeze(0)  # (1, H, d_v, rank): what the subspace's keys read
        assert reads.abs().max() < 1e-5 * prefix["states"][layer]["S"].abs().max()
        assert not torch.allclose(state["S"], prefix["states"][layer]["S"])
    target_norms = edits["target"]["norms"]
    for name in ("random0", "random1", "random2", "overlap"):
        for got, want in zip(edits[name]["norms"], target_norms, strict=True):
            assert ((got - want).abs() / want).item() < 1e-6
        removed = [
            (a["S"] - b["S"]).double().flatten(1).norm(dim=1) for a, b in zip(prefix["states"], edits[name]["states"])
        ]
        for got, want in zip(removed, target_norms, strict=True):
            assert got.item() == pytest.approx(want.item(), rel=1e-5)


def test_unmatched_or_empty_edits_are_refused():
    check_matched([torch.tensor([2.0])], [torch.tensor([2.0])], "random0")
    with pytest.raises(InterventionError, match="random0 edit of layer 1"):
        check_matched(
            [torch.tensor([2.0]), torch.tensor([1.0])], [torch.tensor([2.0]), torch.tensor([1.001])], "random0"
        )
    with pytest.raises(InterventionError, match="reads nothing"):
        check_matched([torch.tensor([0.0])], [torch.tensor([0.0])], "overlap")


def _direct_predictions(model, features, plan, config, stream):
    """The edits of ``plan`` computed without the env (as the job did before it played the env):
    prefix, edits, one batched continuation up to the last eligible query, the argmax at each
    eligible query's last frame."""
    roles, names = plan.roles(), config.edit_names(plan)
    items = [i for i in stream.items if i.item_id in roles]
    last = max(i.annotations["end_frame"] for i in items)
    with torch.no_grad():
        prefix = model(features[None, : plan.edit_frame])
        generator = subspace_generator(config.subspace_seed, stream.episode_id, plan.target.identity)
        edits = edited_states(prefix["states"], prefix["keys"], plan, config, generator)
        rest = features[None, plan.edit_frame : last + 1].expand(len(names), -1, -1)
        out = model(rest, stack_states([edits[n]["states"] for n in names]))
    return {
        (i.item_id, name): int(
            out[i.annotations["attribute"]][b, i.annotations["end_frame"] - plan.edit_frame].argmax()
        )
        for i in items
        for b, name in enumerate(names)
    }


def test_env_loop_rows_equal_direct_edits_and_the_unedited_whole_stream_and_are_deterministic(setup):
    """The job's env path (one formation, the use phase rewound per plan and edit) answers what
    each edit computed directly answers, item by item; the unedited edit answers what one pass
    over the whole stream answers."""
    model, stream, arrays, plans, env = setup
    config = AMemOpsInterventionConfig()
    features = torch.from_numpy(arrays[0])
    with torch.no_grad():
        out = model(features[None])  # one chunked pass over the whole stream
    whole = {
        i.item_id: int(out[i.annotations["attribute"]][0, i.annotations["end_frame"]].argmax()) for i in stream.items
    }
    items = {i.item_id: i for i in stream.items}
    rows = score_edits(env, model, stream, arrays[0], plans, config)
    assert rows == score_edits(env, model, stream, arrays[0], plans, config)
    compared = 0
    for plan in plans:
        got = [r for r in rows if r["target"] == plan.target.identity]
        order = [i.item_id for i in stream.items if i.item_id in plan.roles()]
        assert [(r["query"], r["edit"]) for r in got] == [(q, e) for q in order for e in config.edit_names(plan)]
        direct = _direct_predictions(model, features, plan, config, stream)
        for r in got:
            assert r["prediction"] == direct[r["query"], r["edit"]]
            labels = arrays[1 if r["attribute"] == "gain" else 2]
            assert r["answer"] == labels[items[r["query"]].annotations["end_frame"]]
            assert r["correct"] == int(r["prediction"] == r["answer"])
            if r["edit"] == "none":
                assert r["prediction"] == whole[r["query"]]
            compared += 1
    assert compared >= 20


def test_attention_cannot_be_edited_and_the_switch_is_parsed(tmp_path):
    with pytest.raises(ConfigError, match="'attention_rope' has no recurrent state S"):
        AMemOpsInterventionConfig(models=("gdn2", "attention_rope"))
    with pytest.raises(ConfigError, match="'attention@cpu-tiny' has no recurrent state S"):
        AMemOpsInterventionConfig(models=("attention@cpu-tiny",))
    assert AMemOpsInterventionConfig(models=("kda@cpu-update-control",)).models == ("kda@cpu-update-control",)
    assert intervention_requested(JobArgs(overrides=("intervention=true", "streams=2")))
    assert not intervention_requested(JobArgs(overrides=("streams=2",)))
    path = tmp_path / "c.yaml"
    path.write_text("intervention: true\nstreams: 2\n")
    assert intervention_requested(JobArgs(config_path=path))
    with pytest.raises(ConfigError, match="expected true or false"):
        intervention_requested(JobArgs(overrides=("intervention=maybe",)))


def test_job_runs_end_to_end_resumes_and_is_deterministic(tmp_path, monkeypatch, capsys):
    overrides = ("model=mamba2", "steps=1", "batch_size=1", "warmup_steps=1", "checkpoint_steps=[1]", "data.pool=1")
    train_job(JobArgs(overrides=(*overrides, *STREAM_OVERRIDES, *TINY), runs_dir=tmp_path, progress=False))
    overrides = ("intervention=true", "models=[mamba2]", "name=a", *EVAL)
    out = AMemOpsBenchmark().eval(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    assert out == tmp_path / "amemops_interventions" / "a"
    table = (out / "table.md").read_text()
    assert "| mamba2 | 1 | target |" in table and "| mamba2 | 1 | overlap |" in table
    assert "State interventions" in capsys.readouterr().out
    assert (out / "interventions.png").stat().st_size > 1000
    lines = (out / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert {r["edit"] for r in rows} == {"none", "target", "random0", "random1", "random2", "overlap"}
    assert {r["model"] for r in rows} == {"mamba2"} and len({r["stream"] for r in rows}) == 2
    assert len({r["key"] for r in rows}) == len(rows)

    def no_recompute(*args, **kwargs):
        raise AssertionError("finished streams must not be recomputed")

    monkeypatch.setattr(interventions, "score_edits", no_recompute)
    AMemOpsBenchmark().eval(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    assert (out / "results.jsonl").read_text().splitlines() == lines
    monkeypatch.undo()
    again = AMemOpsBenchmark().eval(
        JobArgs(overrides=("intervention=true", "models=[mamba2]", "name=b", *EVAL), runs_dir=tmp_path, progress=False)
    )
    assert (again / "results.jsonl").read_text().splitlines() == lines
    assert (again / "table.md").read_text() == table
