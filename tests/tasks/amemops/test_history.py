"""Matched-history analysis: cell scores, update gaps, primary contrasts and their intervals on
synthetic rows with known accuracies."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memgym.core.errors import RecordError
from memgym.core.statistics import simultaneous_half_width
from memgym.tasks.amemops.history import (
    bootstrap_cells,
    cell_scores,
    evaluate_contrasts,
    history_report,
    previous_value_shares,
    primary_contrasts,
    resampled_cell_means,
)
from memgym.tasks.amemops.history_report import plot_history, report_csv, report_markdown

N_TEMPLATES = 10
DELAYS = (20.0, 120.0)
LOADS = ("low", "high")


def loss(model, seed, delay, load):
    """Accuracy lost by updating (0-1): gdn2 0.1; no_erase 0.2 at 20 s, 0.4 at 120 s; attention
    0.3 (seed 0) or 0.5 (seed 1) at low load and 0.6 at high load (mean over seeds 0.4 / 0.6)."""
    if model == "gdn2":
        return 0.1
    if model == "no_erase":
        return 0.2 if delay == 20.0 else 0.4
    return (0.3 if seed == 0 else 0.5) if load == "low" else 0.6


def accuracy(model, seed, operation, delay, load):
    return {"no_update": 0.8, "retained": 0.7, "updated": 0.8 - loss(model, seed, delay, load)}[operation]


def history_rows(
    models=("gdn2", "no_erase", "attention"), seeds=(0, 1), accuracy=accuracy, checkpoint=24000, earlier=("target",)
):
    """One query per (model, seed, template, condition); template t is right iff t < accuracy·T
    (accuracy of an earlier-event control: 0.9 without the earlier event, 0.6 with a distractor)."""
    rows = []
    for model, seed, op, delay, load, where in itertools.product(
        models, seeds, ("no_update", "updated", "retained"), DELAYS, LOADS, earlier
    ):
        p = {"target": accuracy(model, seed, op, delay, load), "omitted": 0.9, "distractor": 0.6}[where]
        right = round(p * N_TEMPLATES)
        for t in range(N_TEMPLATES):
            rows.append(
                {
                    "model": model,
                    "checkpoint": checkpoint,
                    "seed": seed,
                    "stream": f"history-{t:03d}-{op}-{delay:g}s-{load}",
                    "query_type": "post_update" if op == "updated" else op,
                    "attribute": "gain" if t % 2 else "pan",
                    "correct": int(t < right),
                    "template": t,
                    "operation": op,
                    "delay_s": delay,
                    "load": load,
                    "earlier": where,
                    "recordings": "original",
                }
            )
    return rows


def by_labels(results, **labels):
    found = [r for r in results if all(r.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, labels
    return found[0]


def test_accuracies_gaps_and_primary_contrasts_have_the_known_values():
    report = history_report(history_rows(), rng=np.random.default_rng(0), n_resamples=500)
    assert report.templates == N_TEMPLATES and report.seeds == {"gdn2": 2, "no_erase": 2, "attention": 2}
    cell = {"delay_s": 120.0, "load": "low"}
    assert by_labels(report.accuracy, model="attention", operation="updated", **cell).estimate == pytest.approx(40.0)
    assert by_labels(report.accuracy, model="gdn2", operation="no_update", **cell).estimate == pytest.approx(80.0)
    for delay, load in itertools.product(DELAYS, LOADS):
        where = {"delay_s": delay, "load": load}
        assert by_labels(report.gaps, model="gdn2", operation="updated", **where).estimate == pytest.approx(-10.0)
        assert by_labels(report.gaps, model="gdn2", operation="retained", **where).estimate == pytest.approx(-10.0)
        expected = -100 * np.mean([loss("attention", s, delay, load) for s in (0, 1)])
        assert by_labels(report.gaps, model="attention", operation="updated", **where).estimate == pytest.approx(
            expected
        )
    # advantage over no_erase: 10 pp at 20 s, 30 pp at 120 s; over attention: 30 pp low, 50 pp high load
    expected = {("no_erase", "delay"): 20.0, ("no_erase", "load"): 0.0, ("attention", "delay"): 0.0}
    expected[("attention", "load")] = 20.0
    assert len(report.primary) == 4 and not report.notes
    for result in report.primary:
        key = (result.labels["baseline"], result.labels["effect"].split()[0])
        assert result.estimate == pytest.approx(expected[key], abs=1e-9)
        assert result.interval.low <= result.estimate <= result.interval.high
    assert by_labels(report.primary, baseline="no_erase", effect="delay 120 s - 20 s").estimate == pytest.approx(20.0)


def test_constant_rows_give_zero_width_intervals():
    report = history_rows(accuracy=lambda *args: 1.0)
    result = history_report(report, rng=np.random.default_rng(0), n_resamples=200)
    for r in (*result.accuracy, *result.gaps, *result.primary):
        assert r.interval.low == pytest.approx(r.estimate) and r.interval.high == pytest.approx(r.estimate)
    assert all(r.simultaneous.high - r.simultaneous.low == pytest.approx(0.0) for r in result.primary)


def test_streams_are_paired_across_conditions_and_models():
    """Accuracy varies over templates, but every model and operation is right on the same templates:
    with one seed per model, every gap and contrast is zero in every resample."""
    result = history_report(
        history_rows(seeds=(0,), accuracy=lambda *args: 0.5), rng=np.random.default_rng(0), n_resamples=300
    )
    accuracy_width = [r.interval.high - r.interval.low for r in result.accuracy]
    assert min(accuracy_width) > 10.0  # templates differ, so accuracy itself is uncertain
    for r in (*result.gaps, *result.primary):
        assert (r.estimate, r.interval.low, r.interval.high) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)


def test_seeds_are_drawn_independently_per_model():
    """Seed 0 is always wrong, seed 1 always right: only the seed draw moves a model's accuracy,
    and two models' draws differ."""
    rows = history_rows(models=("gdn2", "no_erase"), seeds=(0, 1), accuracy=lambda m, s, *a: float(s))
    scores = cell_scores(rows)
    estimates, replicates = bootstrap_cells(scores, rng=np.random.default_rng(0), n_resamples=400)
    assert estimates == pytest.approx(np.full(len(scores.cells), 50.0))
    first = [scores.cells.index(c) for c in scores.cells if c.operation == "updated" and c.delay_s == 20.0]
    assert set(np.unique(replicates[:, first])) == {0.0, 50.0, 100.0}
    gdn2, no_erase = (replicates[:, [i for i in first if scores.cells[i].model == m][0]] for m in ("gdn2", "no_erase"))
    assert np.mean(gdn2 != no_erase) > 0.3  # independent draws per model
    same_model = [i for i, c in enumerate(scores.cells) if c.model == "gdn2"]
    assert np.all(replicates[:, same_model] == replicates[:, same_model[:1]])  # shared across its conditions


def test_resampled_means_match_a_direct_computation():
    rows = history_rows()
    scores = cell_scores(rows)
    rng = np.random.default_rng(3)
    template_idx = rng.integers(0, N_TEMPLATES, size=(5, N_TEMPLATES))
    seed_idx = {m: rng.integers(0, 2, size=(5, 2)) for m in scores.seeds}
    template_counts = np.stack([np.bincount(i, minlength=N_TEMPLATES) for i in template_idx]).astype(float)
    seed_counts = {m: np.stack([np.bincount(i, minlength=2) for i in idx]).astype(float) for m, idx in seed_idx.items()}
    fast = resampled_cell_means(scores, template_counts, seed_counts)
    for r, (c, cell) in itertools.product(range(5), enumerate(scores.cells)):
        matrix = scores.scores[cell]
        direct = np.mean([matrix[s, template_idx[r]].mean() for s in seed_idx[cell.model][r]])
        assert fast[r, c] == pytest.approx(100 * direct)


def test_simultaneous_half_width_covers_each_marginal_one():
    rng = np.random.default_rng(1)
    rows = history_rows(accuracy=lambda *a: float(rng.integers(2, 9)) / 10)
    scores = cell_scores(rows)
    estimates, replicates = bootstrap_cells(scores, rng=np.random.default_rng(0), n_resamples=1000)
    contrasts, notes = primary_contrasts(scores.cells, "gdn2", ("no_erase", "attention"))
    joint = evaluate_contrasts(contrasts, scores.cells, estimates, replicates, simultaneous=True)
    half = joint[0].simultaneous.high - joint[0].estimate
    assert not notes and len(joint) == 4
    for contrast, result in zip(contrasts, joint):
        alone = evaluate_contrasts([contrast], scores.cells, estimates, replicates, simultaneous=True)[0]
        assert (alone.interval.low, alone.interval.high) == pytest.approx((result.interval.low, result.interval.high))
        assert half >= alone.simultaneous.high - alone.estimate - 1e-12
        assert result.simultaneous.high - result.estimate == pytest.approx(half)
    stats = np.array([[0.0, 1.0], [2.0, -1.0], [0.0, 0.0]])
    assert simultaneous_half_width(stats, np.zeros(2), level=1.0) == 2.0


def test_missing_models_are_skipped_with_a_note(tmp_path):
    report = history_report(
        history_rows(models=("no_erase", "attention")), rng=np.random.default_rng(0), n_resamples=50
    )
    assert report.primary == [] and "no gdn2 rows" in report.notes[0]
    report = history_report(history_rows(models=("gdn2", "no_erase")), rng=np.random.default_rng(0), n_resamples=50)
    assert {r.labels["baseline"] for r in report.primary} == {"no_erase"} and len(report.primary) == 2
    assert "gdn2 vs attention @ 24000 skipped: no rows for attention" in report.notes[0]
    text = report_markdown(report, model_order=("gdn2", "no_erase"))
    assert "skipped" in text and "| gdn2 | no_erase | 24000 | delay 120 s - 20 s | 20.0 [" in text
    assert plot_history(report, tmp_path / "fig3.png").stat().st_size > 1000


def test_one_delay_leaves_only_the_load_effect():
    rows = [r for r in history_rows() if r["delay_s"] == 20.0]
    report = history_report(rows, rng=np.random.default_rng(0), n_resamples=50)
    assert [r.labels["effect"] for r in report.primary] == ["load high - low", "load high - low"]
    assert any("delay effect needs two delays" in n for n in report.notes)


def test_report_is_deterministic_and_csv_lists_every_number():
    rows = history_rows()
    first = history_report(rows, rng=np.random.default_rng(0), n_resamples=100)
    again = history_report(rows, rng=np.random.default_rng(0), n_resamples=100)
    assert report_csv(first) == report_csv(again)
    lines = report_csv(first).splitlines()
    assert lines[0].startswith("table,model,baseline,checkpoint,effect")
    assert len(lines) == 1 + 4 + 3 * 4 * 2 + 3 * 12
    assert lines[1].startswith("primary,gdn2,no_erase,24000,delay 120 s - 20 s,,,,,,20.0000,")
    none = history_report(rows, rng=np.random.default_rng(0), n_resamples=0)
    assert none.primary[0].interval is None and "| 20.0 | - |" in report_markdown(none)


def test_rows_without_their_template_are_a_record_error():
    rows = history_rows()
    del rows[5]["template"]
    with pytest.raises(RecordError, match=r"lacks \['template'\]"):
        cell_scores(rows)


def test_earlier_event_controls_give_conflicting_and_consistent_history_differences():
    rows = history_rows(models=("gdn2", "attention"), earlier=("target", "omitted", "distractor"))
    report = history_report(rows, rng=np.random.default_rng(0), n_resamples=100)
    where = {"model": "attention", "delay_s": 120.0, "load": "high"}
    assert by_labels(report.controls, operation="updated", earlier="omitted", **where).estimate == pytest.approx(-70.0)
    assert by_labels(report.controls, operation="no_update", earlier="omitted", **where).estimate == pytest.approx(
        -10.0
    )
    assert by_labels(report.controls, operation="no_update", earlier="distractor", **where).estimate == pytest.approx(
        20.0
    )
    assert len(report.controls) == 2 * 3 * 4 * 2 and len(report.gaps) == 2 * 2 * 4
    assert "| attention | 24000 | original | omitted | 120 | high | -10.0 [" in report_markdown(report)
    assert len(report.primary) == 2 and report.primary[1].estimate == pytest.approx(20.0)


def test_previous_value_share_counts_update_errors_that_gave_the_superseded_value():
    rows = history_rows(models=("gdn2",), seeds=(0,))
    for r in rows:  # wrong updated answers: even templates gave the previous value
        r["previous_value"] = int(r["operation"] == "updated" and not r["correct"] and r["template"] % 2 == 0)
    shares = previous_value_shares(rows)
    assert len(shares) == len(DELAYS) * len(LOADS)  # updated cells only
    for share in shares:
        assert share.cell.operation == "updated"
        assert (share.errors, share.previous) == (3, 1)  # templates 7, 8, 9 wrong (accuracy 0.7); 8 is even
        assert share.share == pytest.approx(100 / 3)
    report = history_report(rows, rng=np.random.default_rng(0), n_resamples=50, primary_models=("gdn2",))
    assert "| gdn2 | 24000 | original | target | 20 | low | 3 | 1 | 33.3 |" in report_markdown(report)
    assert report_csv(report).count("previous_value_share") == len(shares)
    older = [{k: v for k, v in r.items() if k != "previous_value"} for r in rows]
    assert previous_value_shares(older) == []
