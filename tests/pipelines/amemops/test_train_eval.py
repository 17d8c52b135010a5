"""AMemOps train/eval jobs end to end on tiny symbolic streams (the same code as audio)."""

from __future__ import annotations

import json
import re

import pytest
import torch
from runtime_scorers import Inverted, registered

from memgym.core.benchmark import JobArgs
from memgym.core.errors import ConfigError, RecordError
from memgym.pipelines.amemops.evaluate import eval_job
from memgym.pipelines.amemops.train import train_job
from memgym.pipelines.findings.report import finding_rows
from memgym.pipelines.findings.runs import find_runs

STREAM = [
    "data.inputs=symbolic",
    "data.stream.frames=256",
    "data.stream.n_initial=2",
    "data.stream.n_update=2",
    "data.stream.n_interference=0",
    "data.stream.n_absent=1",
    "data.stream.distractors=[1]",
    "data.stream.offset_seconds=[2,4]",
]
TINY = ["arch.width=16", "arch.heads=1", "arch.head_dim=8", "arch.mlp_hidden=16", "arch.layers=1"]


def train(tmp_path, *extra):
    overrides = ("steps=3", "batch_size=2", "warmup_steps=1", "checkpoint_steps=[2]", "log_every=1", "data.pool=4")
    return train_job(JobArgs(overrides=(*overrides, *STREAM, *TINY, *extra), runs_dir=tmp_path, progress=False))


def test_train_then_eval_writes_tables(tmp_path, capsys):
    folder = train(tmp_path, "model=mamba2")
    assert folder == tmp_path / "amemops_train" / "mamba2-seed0"
    assert {p.name for p in folder.glob("step_*.pt")} == {"step_2.pt", "step_3.pt"}
    assert (folder / "config.yaml").exists() and (folder / "metrics.csv").exists()
    train(tmp_path, "model=mamba2")  # re-running a finished run resumes at its end
    overrides = ("models=[mamba2]", "seeds=[0]", "checkpoints=[2,3]", "streams=2", "name=t", *STREAM)
    out = eval_job(JobArgs(overrides=(*overrides, "data.stream.split=eval"), runs_dir=tmp_path, progress=False))
    table = (out / "table.md").read_text()
    assert "| mamba2 | 2 | 1 |" in table and "| mamba2 | 3 | 1 |" in table
    assert (out / "accuracy.png").stat().st_size > 1000
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(q["query_type"] for r in rows for q in r["queries"])
    eval_job(JobArgs(overrides=(*overrides, "data.stream.split=eval"), runs_dir=tmp_path, progress=False))
    assert len((out / "results.jsonl").read_text().splitlines()) == 4  # resumed: nothing recomputed
    assert "Query-weighted accuracy" in table
    from memgym.pipelines.reporting import main_tables  # what 'memgym eval amemops' ends with

    (main,) = main_tables(out)
    assert [row["system"] for row in main.rows] == ["mamba2 @ 2", "mamba2 @ 3"] and any(
        c.startswith("correct query_type=") for c in main.rows[0]
    )


def test_eval_scorer_takes_a_scorer_registered_at_runtime(tmp_path):
    """The same predictions, each query's correctness decided by the chosen scorer."""
    train(tmp_path, "model=gdn", "steps=2")
    common = ("models=[gdn]", "seeds=[0]", "checkpoints=[2]", "streams=2", *STREAM, "data.stream.split=eval")
    queries = {}
    with registered("test_inverted", Inverted):
        for scorer in ("attribute_query", "test_inverted"):
            out = eval_job(JobArgs(overrides=(*common, f"scorer={scorer}"), runs_dir=tmp_path, progress=False))
            queries[scorer] = [
                q for r in map(json.loads, (out / "results.jsonl").read_text().splitlines()) for q in r["queries"]
            ]
    default, inverted = queries["attribute_query"], queries["test_inverted"]
    assert len(default) == len(inverted) >= 6
    assert [q["prediction"] for q in default] == [q["prediction"] for q in inverted]
    assert [q["correct"] for q in inverted] == [1 - q["correct"] for q in default]


def test_sixteen_value_symbolic_controls_train_and_evaluate(tmp_path):
    from memgym.datasets.sources.factory import open_library
    from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig
    from memgym.memory.recurrent.trainer import load_checkpoint_model

    sixteen = "data.stream.attribute_values=16"
    folder = train(tmp_path, "model=gdn", "steps=2", sixteen)
    model = load_checkpoint_model(folder / "step_2.pt", lambda c: AMemOpsModel(ModelConfig(**c)))
    n_identities = len(open_library("synthetic_env").identities())
    assert model.config.n_gain == model.config.n_pan == 17 and model.config.input_dim == n_identities + 35
    overrides = ("models=[gdn]", "seeds=[0]", "checkpoints=[2]", "streams=2", *STREAM, "data.stream.split=eval")
    out = eval_job(JobArgs(overrides=(*overrides, sixteen, "name=s"), runs_dir=tmp_path, progress=False))
    queries = [q for line in (out / "results.jsonl").read_text().splitlines() for q in json.loads(line)["queries"]]
    assert queries and all(0 <= q["answer"] <= 16 and 0 <= q["prediction"] <= 16 for q in queries)
    assert all(q["answer"] == 16 for q in queries if q["query_type"] == "absent")
    with pytest.raises(RecordError, match="model expects .* input features"):  # evaluated as 4-value streams
        eval_job(JobArgs(overrides=(*overrides, "name=four"), runs_dir=tmp_path, progress=False))


def test_audio_inputs_refuse_symbolic_value_counts(tmp_path):
    audio = [o.replace("data.inputs=symbolic", "data.inputs=audio") for o in STREAM]
    with pytest.raises(ConfigError, match=r"data.stream.attribute_values=16: audio streams need 4 values"):
        train_job(
            JobArgs(
                overrides=("model=gdn", "steps=1", *audio, *TINY, "data.stream.attribute_values=16"),
                runs_dir=tmp_path,
                progress=False,
            )
        )


def test_eval_names_the_missing_checkpoint(tmp_path):
    with pytest.raises(RecordError, match=r"missing checkpoint .*gdn2-seed0/step_12000.pt"):
        eval_job(JobArgs(overrides=("models=[gdn2]", "seeds=[0]", *STREAM), runs_dir=tmp_path, progress=False))


def test_unknown_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="model='lstm'"):
        train(tmp_path, "model=lstm")


def test_eval_on_a_saved_matched_history_set(tmp_path):
    from memgym.datasets.amemops.stream_set import HistorySetConfig, StreamSetConfig, write_stream_set
    from memgym.datasets.sources.factory import open_library

    history = HistorySetConfig(templates=1, delays=(20.0,), loads=("low",))
    set_config = StreamSetConfig(kind="history", history=history)
    write_stream_set(set_config, open_library(set_config.stream.library), tmp_path / "set", progress=False)
    audio = [o.replace("data.inputs=symbolic", "data.inputs=audio") for o in STREAM]
    train_job(
        JobArgs(
            overrides=(
                "model=gdn2",
                "steps=1",
                "batch_size=1",
                "warmup_steps=1",
                "checkpoint_steps=[1]",
                "data.pool=1",
                *audio,
                *TINY,
            ),
            runs_dir=tmp_path,
            progress=False,
        )
    )
    overrides = ("models=[gdn2]", "seeds=[0]", "checkpoints=[1]", f"stream_set={tmp_path / 'set'}", "name=h")
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    types = sorted(q["query_type"] for r in rows for q in r["queries"])
    assert types == ["no_update", "post_update", "retained"]
    assert all(q["load"] == "low" and q["delay_s"] == 20.0 for r in rows for q in r["queries"])
    assert "no-update" in (out / "table.md").read_text()


def test_packaged_symbolic_configs_use_sixteen_values():
    from memgym.core.config import CONFIG_DIR, load_config
    from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig

    train = load_config(AMemOpsTrainConfig, path=CONFIG_DIR / "amemops_symbolic.yaml")
    assert (train.data.inputs, train.data.stream.attribute_values) == ("symbolic", 16)
    assert (train.arch.layers, train.arch.heads, train.steps) == (1, 1, 20000)
    evaluation = load_config(AMemOpsEvalConfig, path=CONFIG_DIR / "amemops_symbolic_eval.yaml")
    assert (evaluation.data.inputs, evaluation.data.stream.attribute_values) == ("symbolic", 16)
    assert evaluation.data.stream.split == "eval" and evaluation.seeds == (0, 1)


def test_eval_on_a_matched_history_set_writes_the_history_contrasts(tmp_path):
    """One template × 3 operations × 2 delays × 2 loads, symbolic inputs, gdn2 and attention (no
    no_erase: its two contrasts are skipped with a note)."""
    from memgym.datasets.amemops.stream_set import HistorySetConfig, StreamSetConfig, write_stream_set
    from memgym.datasets.sources.factory import open_library

    set_config = StreamSetConfig(kind="history", history=HistorySetConfig(templates=1), features=False)
    write_stream_set(set_config, open_library(set_config.stream.library), tmp_path / "set", progress=False)
    for model in ("gdn2", "attention"):
        train(tmp_path, f"model={model}", "arch.chunk_size=256")
    overrides = (
        "models=[gdn2,attention]",
        "seeds=[0]",
        "checkpoints=[2]",
        f"stream_set={tmp_path / 'set'}",
        "data.inputs=symbolic",
        "bootstrap_resamples=200",
        "name=h",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    text = (out / "history_contrasts.md").read_text()
    assert (
        "| gdn2 | attention | 2 | delay 120 s - 20 s |" in text and "| gdn2 | attention | 2 | load high - low |" in text
    )
    assert "gdn2 vs no_erase @ 2 skipped: no rows for no_erase" in text
    csv_lines = (out / "history_contrasts.csv").read_text().splitlines()
    # header, contrasts, gaps, previous-value shares, accuracies
    assert len(csv_lines) == 1 + 2 + 2 * 2 * 4 + 2 * 4 + 2 * 12
    assert (out / "history_accuracy.png").stat().st_size > 1000
    assert "history_contrasts.md" in (out / "table.md").read_text()
    (out / "history_contrasts.md").unlink()
    eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))  # resumed: from the stored rows
    assert (out / "history_contrasts.md").read_text() == text
    assert len((out / "results.jsonl").read_text().splitlines()) == 2 * 12


def test_history_contrasts_must_name_memory_cores():
    from memgym.pipelines.amemops.configs import AMemOpsEvalConfig

    with pytest.raises(ConfigError, match="history_contrasts: 'lstm'"):
        AMemOpsEvalConfig(history_contrasts=("gdn2", "lstm"))


def test_amemops_streams_ignore_cache_folders_and_threads():
    from memgym.core.seeding import config_hash
    from memgym.datasets.amemops.config import StreamConfig
    from memgym.datasets.sources.factory import LibraryConfig
    from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig

    cached = StreamConfig(library=LibraryConfig(cache_dir="/tmp/clips"), offset_seconds=(2, 60))
    assert cached.key() == StreamConfig().key()
    assert config_hash(AMemOpsTrainConfig(threads=1, device="cuda")) == config_hash(AMemOpsTrainConfig())
    assert config_hash(AMemOpsEvalConfig(bootstrap_resamples=100_000)) == config_hash(AMemOpsEvalConfig())


def test_default_amemops_hashes_are_those_of_stored_runs():
    """Settings added later (data.source, arch.conv_kernel, ...) leave default hashes alone."""
    from memgym.core.config import load_config
    from memgym.core.seeding import config_hash
    from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig

    assert config_hash(AMemOpsTrainConfig()) == "a8631b0253a526d0"
    assert config_hash(AMemOpsEvalConfig()) == "3fad8bb1b79bc08e"
    same = ("data.source=env", "data.vectorization=async", "data.block_frames=64", "arch.conv_kernel=4")
    assert config_hash(load_config(AMemOpsTrainConfig, overrides=same)) == "a8631b0253a526d0"
    assert config_hash(load_config(AMemOpsTrainConfig, overrides=("arch.conv_kernel=0",))) != "a8631b0253a526d0"


def test_the_convolution_ablation_trains_and_evaluates(tmp_path):
    folder = train(tmp_path, "model=gdn2", "arch.conv_kernel=0", "name=gdn2-seed0")
    state = torch.load(folder / "step_3.pt", weights_only=False)
    assert state["model_config"]["conv_kernel"] == 0 and not any("conv" in k for k in state["model"])
    overrides = ("models=[gdn2]", "seeds=[0]", "checkpoints=[3]", "streams=2", "name=noconv", *STREAM)
    out = eval_job(JobArgs(overrides=(*overrides, "data.stream.split=eval"), runs_dir=tmp_path, progress=False))
    assert "| gdn2 | 3 | 1 |" in (out / "table.md").read_text()


def test_audio_models_standardise_the_log_mel_columns_and_symbolic_ones_do_not():
    from memgym.core.config import load_config
    from memgym.pipelines.amemops.configs import AMemOpsTrainConfig
    from memgym.pipelines.amemops.train import build_model
    from memgym.sensors.log_mel import LOG_MEL_MEAN, LOG_MEL_STD

    audio = build_model(AMemOpsTrainConfig(), 131, 5).config
    assert (audio.standardised_inputs, audio.input_mean, audio.input_std) == (128, LOG_MEL_MEAN, LOG_MEL_STD)
    symbolic = build_model(load_config(AMemOpsTrainConfig, overrides=["data.inputs=symbolic"]), 40, 17).config
    assert symbolic.standardised_inputs == 0


def _queries(folder):
    return [
        {"model": row["model"], "stream": row["stream"]} | q
        for row in map(json.loads, (folder / "results.jsonl").read_text().splitlines())
        for q in row["queries"]
    ]


def _mean_per_stream(queries, model):
    """Accuracy (%) of ``model`` on ``queries``: averaged per stream, then over streams (one seed)."""
    by_stream = {}
    for q in queries:
        if q["model"] == model:
            by_stream.setdefault(q["stream"], []).append(q["correct"])
    return 100.0 * sum(sum(v) / len(v) for v in by_stream.values()) / len(by_stream)


def _finding(folder, claim_id):
    return next(r for r in finding_rows(find_runs([folder])) if r["id"] == claim_id)


def test_convolution_ablation_by_pitch_difference(tmp_path):
    """Fig. 2a as a config: GDN2 with and without its convolution, accuracy per pitch-difference bin."""
    instruments = ("data.stream.library.kind=synthetic_instruments",)
    train(tmp_path, "model=gdn2", *instruments)
    train(tmp_path, "model=gdn2", "arch.conv_kernel=0", "name=gdn2@noconv-seed0", *instruments)
    overrides = (
        "models=[gdn2,gdn2@noconv]",
        "seeds=[0]",
        "checkpoints=[3]",
        "streams=3",
        "name=fig2a",
        "breakdowns=[pitch_difference]",
        "bootstrap_resamples=200",
        *STREAM,
        *instruments,
        "data.stream.split=eval",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    report = (out / "pitch_difference.md").read_text()
    assert "| gdn2@noconv | 3 |" in report and "Paired differences (pp) against gdn2" in report
    counts = [int(n) for n in re.findall(r"\(n=(\d+)\)", report.split("post-update")[0])]
    present = [q for q in _queries(out) if q["model"] == "gdn2" and q["query_type"] != "absent"]
    assert sum(counts) == 2 * len(present)  # every query of a present source is binned, for both models
    assert (out / "pitch_difference.png").stat().st_size > 1000
    assert "pitch_difference.md" in (out / "table.md").read_text()
    # memgym findings joins the run's pitch differences and the two runs' conv_kernel
    pitches = json.loads((out / "pitch_differences.json").read_text())
    large = [q for q in _queries(out) if (pitches[f"{q['stream']}|{q['query']}"] or -1) >= 12]
    found = _finding(out, "am-conv-large-pitch")
    assert found["ours"].startswith("gdn2 - gdn2@noconv") and found["n"] == len({q["stream"] for q in large})
    assert found["effect_pp"] == pytest.approx(_mean_per_stream(large, "gdn2") - _mean_per_stream(large, "gdn2@noconv"))


def test_intervening_breakdown_splits_the_update_interaction(tmp_path):
    """``breakdowns=[intervening]`` writes ``intervening.md``: the update-interaction tables and the
    previous-share for queries with fewer than two and with two or more other sources' writes since
    their answer was last heard (gap distractors make the upper stratum common)."""
    for model in ("gdn2", "no_erase"):
        train(tmp_path, f"model={model}")
    overrides = (
        "models=[gdn2,no_erase]",
        "seeds=[0]",
        "checkpoints=[3]",
        "streams=6",
        "name=strata",
        "breakdowns=[intervening]",
        "update_interactions=[gdn2:no_erase]",
        "bootstrap_resamples=100",
        *STREAM,
        "data.stream.split=eval",
        "data.stream.gap_distractors=2",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    report = (out / "intervening.md").read_text()
    assert "intervening.md" in (out / "table.md").read_text()
    lower, upper = report.split("## 2 or more intervening writes")
    assert "## fewer than 2 intervening writes" in lower
    for part in (lower, upper):
        assert "### Update-specific interaction (pp)" in part and "| no_erase | 3 | pan |" in part


def test_eval_model_variants_name_their_train_command(tmp_path):
    with pytest.raises(RecordError, match="model=gdn2 seed=0 name=gdn2@noconv-seed0"):
        eval_job(JobArgs(overrides=("models=[gdn2@noconv]", "seeds=[0]", *STREAM), runs_dir=tmp_path, progress=False))
    with pytest.raises(ConfigError, match="models: 'lstm@x'"):
        eval_job(JobArgs(overrides=("models=[lstm@x]",), runs_dir=tmp_path, progress=False))
    with pytest.raises(ConfigError, match="breakdowns: 'pitch'"):
        eval_job(JobArgs(overrides=("breakdowns=[pitch]",), runs_dir=tmp_path, progress=False))


def test_exclusions_write_tables_without_training_matches_and_duplicate_notes(tmp_path, monkeypatch):
    from echo_tones import EchoTones

    from memgym.pipelines.amemops import streams as amemops_streams

    tones = ("data.stream.library.kind=tones", "data.stream.offset_seconds=[2,4]")
    train(tmp_path, "model=gdn", *tones)
    echo = EchoTones()
    monkeypatch.setattr(amemops_streams, "_open_library", lambda config: echo)
    overrides = (
        "models=[gdn]",
        "seeds=[0]",
        "checkpoints=[3]",
        "streams=6",
        "name=excl",
        "exclude=[training_audio,duplicate_notes]",
        "bootstrap_resamples=0",
        "data.stream_seed=4321",  # streams not cached by earlier tests with the plain library
        *STREAM,
        *tones,
        "data.stream.split=eval",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    text = (out / "table_excluded.md").read_text()
    kept, total = map(int, re.search(r"Kept (\d+) of (\d+) queries", text).groups())
    assert 0 < kept < total and "| gdn | 3 |" in text
    assert (out / "accuracy_excluded.png").stat().st_size > 1000
    assert "Exclusions: `table_excluded.md`" in (out / "table.md").read_text()


def test_recording_contrasts_pair_the_same_streams_under_two_controls(tmp_path):
    audio = (
        "data.inputs=audio",
        "data.stream.attribute_values=4",
        "data.stream.library.kind=tones",
        *[s for s in STREAM if not s.startswith("data.inputs")],
    )
    train(tmp_path, "model=gdn", *audio)
    overrides = (
        "models=[gdn]",
        "seeds=[0]",
        "checkpoints=[3]",
        "streams=4",
        "name=rec",
        "recording_contrasts=[fixed:original]",
        "bootstrap_resamples=300",
        *audio,
        "data.stream.split=eval",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    queries = _queries(out)
    assert {q["recordings"] for q in queries} == {"original", "fixed"}
    assert "on 4 streams" in (out / "table.md").read_text()  # the main tables: original recordings only
    text = (out / "recording_contrasts.md").read_text()
    for attribute in ("all", "gain", "pan"):
        assert f"| gdn | 3 | fixed - original | {attribute} |" in text
    assert (out / "recording_contrasts.png").stat().st_size > 1000
    with pytest.raises(ConfigError, match="recording_contrasts: 'fixed:fixed'"):
        eval_job(JobArgs(overrides=("recording_contrasts=[fixed:fixed]",), runs_dir=tmp_path, progress=False))


def test_training_familiarity_over_two_instrument_sets(tmp_path):
    """Fig. 2b as a config: models trained on Set 2 or Set 3, each evaluated on both."""
    instruments = ("data.stream.library.kind=synthetic_instruments", "data.stream.frames=384", "data.stream.n_update=4")
    for train_set in (2, 3):
        for model in ("gdn2", "attention_rope"):
            library = f"data.stream.library.instrument_set={train_set}"
            train(tmp_path, f"model={model}", *instruments, library, f"name={model}@set{train_set}-seed0")
    overrides = (
        "models=[gdn2@set2,attention_rope@set2,gdn2@set3,attention_rope@set3]",
        "seeds=[0]",
        "checkpoints=[3]",
        "streams=3",
        "name=fig2b",
        "eval_sets=[2,3]",
        "familiarity=[gdn2,attention_rope]",
        "bootstrap_resamples=100",
        *STREAM,
        *instruments,
        "data.stream.split=eval",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    queries = _queries(out)
    assert {q["eval_set"] for q in queries} == {2, 3}
    text = (out / "familiarity.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 3 | all |"))
    assert re.fullmatch(r"\| 3 \| all \|( -?\d+\.\d \[-?\d+\.\d, -?\d+\.\d\] \|){3}", row)
    assert "| 3 | gain |" in text and "| 3 | pan |" in text
    assert (out / "familiarity.png").stat().st_size > 1000
    interaction = float(row.split("|")[-2].split()[0])  # memgym findings reads the training sets alike
    per_core = {
        line.split("|")[1].strip(): line.split("|")[-3].strip()
        for line in text.split("## Per model")[1].splitlines()
        if re.match(r"\| \w+ \| 3 \| all \|", line)
    }
    assert set(per_core) == {"gdn2", "attention_rope"}
    for core, cell in per_core.items():  # the trained-on-this-set model minus the other, per stream
        by_stream = {}
        for q in queries:
            if q["model"].startswith(f"{core}@") and q["query_type"] == "post_update":
                seen = q["model"].endswith(f"set{q['eval_set']}")
                by_stream.setdefault((q["eval_set"], q["stream"]), {}).setdefault(seen, []).append(q["correct"])
        diffs = [sum(v[True]) / len(v[True]) - sum(v[False]) / len(v[False]) for v in by_stream.values()]
        assert float(cell.split()[0]) == pytest.approx(100 * sum(diffs) / len(diffs), abs=0.051)
    assert _finding(out, "am-familiarity")["effect_pp"] == pytest.approx(interaction, abs=0.05)
    with pytest.raises(ConfigError, match="familiarity needs eval_sets"):
        eval_job(JobArgs(overrides=("familiarity=[gdn2,attention_rope]",), runs_dir=tmp_path, progress=False))


def test_width_control_contrasts_widths_and_averages_over_rope(tmp_path):
    """Fig. 4a as a config: widened variants next to Table 1 models, contrasts averaged over RoPE."""
    for model in ("gdn2", "attention", "attention_rope"):
        train(tmp_path, f"model={model}")
    train(tmp_path, "model=gdn2", "arch.width=32", "name=gdn2@wide-seed0")
    overrides = (
        "models=[gdn2,attention,attention_rope,gdn2@wide]",
        "contrasts=[gdn2:attention+attention_rope,gdn2@wide:gdn2]",
        "seeds=[0]",
        "checkpoints=[3]",
        "streams=3",
        "name=fig4a",
        "bootstrap_resamples=200",
        *STREAM,
        "data.stream.split=eval",
    )
    out = eval_job(JobArgs(overrides=overrides, runs_dir=tmp_path, progress=False))
    report = (out / "contrasts.md").read_text()
    assert "| gdn2 - attention + attention_rope | 3 | all |" in report and "| gdn2@wide:gdn2 | 3 | all |" in report
    assert (out / "contrasts.png").stat().st_size > 1000
    assert "contrasts.md" in (out / "table.md").read_text()
    state = torch.load(tmp_path / "amemops_train" / "gdn2@wide-seed0" / "step_3.pt", weights_only=False)
    assert state["model_config"]["width"] == 32


def test_contrasts_must_name_evaluated_models():
    from memgym.core.config import load_config
    from memgym.pipelines.amemops.configs import AMemOpsEvalConfig

    config = load_config(AMemOpsEvalConfig, path="memgym/configs/amemops_width_control.yaml")
    assert "gdn2@w512:attention@w512+attention_rope@w512" in config.contrasts
    with pytest.raises(ConfigError, match="'gdn2@wide', which is not in models"):
        load_config(AMemOpsEvalConfig, overrides=["models=[gdn2]", "contrasts=[gdn2@wide:gdn2]"])
    with pytest.raises(ConfigError, match="contrasts: 'gdn2' must be 'A:B'"):
        load_config(AMemOpsEvalConfig, overrides=["contrasts=[gdn2]"])


def test_symbolic_joint_queries_are_scored_per_attribute(tmp_path):
    """The symbolic task's joint queries: one query event asks gain and pan, scored as two rows."""
    joint = ("data.stream.update_queries=joint",)
    train(tmp_path, "model=gdn2", *joint)
    overrides = ("models=[gdn2]", "seeds=[0]", "checkpoints=[3]", "streams=2", "name=joint", *STREAM, *joint)
    overrides += ("exclude=[duplicate_notes]",)  # conditions of a joint query come from its one event
    out = eval_job(JobArgs(overrides=(*overrides, "data.stream.split=eval"), runs_dir=tmp_path, progress=False))
    queries = _queries(out)
    joint_rows = [q for q in queries if q.get("joint")]
    assert joint_rows and {q["attribute"] for q in joint_rows} == {"gain", "pan"}
    assert all(q["query_type"] in ("post_update", "retained") for q in joint_rows)
    assert not any(q.get("joint") for q in queries if q["query_type"] in ("initial", "absent"))
    assert "Kept" in (out / "table_excluded.md").read_text()
