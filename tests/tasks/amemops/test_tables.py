"""AMemOps tables: query-weighted vs per-stream accuracy, seed averaging, markdown and plot."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.tasks.amemops.tables import accuracy_cell, accuracy_table, plot_accuracy, seed_table, table_markdown


def row(seed, stream, correct, qtype="post_update", attribute="gain", model="gdn2", checkpoint=24000):
    return {
        "model": model,
        "checkpoint": checkpoint,
        "seed": seed,
        "stream": stream,
        "query_type": qtype,
        "attribute": attribute,
        "correct": correct,
    }


def test_query_weighting_pools_queries_and_stream_weighting_averages_streams():
    rows = [row(0, "a", 1), row(0, "a", 1), row(0, "a", 1), row(0, "b", 0)]
    assert accuracy_cell(rows) == pytest.approx(75.0)
    assert accuracy_cell(rows, weighting="stream") == pytest.approx(50.0)


def test_seeds_weigh_equally():
    rows = [row(0, "a", 1)] * 9 + [row(1, "a", 0)]
    assert accuracy_cell(rows) == pytest.approx(50.0)


def test_seed_table_keeps_each_seed_and_the_previous_value_share_of_update_errors():
    wrong_previous = {**row(0, "a", 0), "previous_value": True}
    wrong_other = {**row(0, "b", 0), "previous_value": False}
    rows = [wrong_previous, wrong_other, {**row(0, "b", 1), "previous_value": False}, row(1, "a", 1)]
    rows += [row(1, "a", 0, qtype="initial"), row(0, "a", 1, qtype="initial", model="no_erase")]
    table = seed_table(rows, query_types=("initial", "post_update"), model_order=("no_erase", "gdn2"))
    assert [(r["model"], r["seed"]) for r in table] == [("no_erase", 0), ("gdn2", 0), ("gdn2", 1)]
    assert table[1]["post_update"] == pytest.approx(100 / 3) and table[1]["initial"] is None
    assert table[1]["previous_share"] == pytest.approx(50.0)
    assert table[2]["post_update"] == 100.0 and table[2]["initial"] == 0.0 and table[2]["previous_share"] is None
    assert "| gdn2 | 24000 | 0 | - | 33.3 | 50.0 |" in table_markdown(table)


def test_table_has_a_row_per_model_checkpoint_and_empty_cells(tmp_path):
    rows = [
        row(0, "a", 1),
        row(0, "a", 0, qtype="absent", attribute="pan"),
        row(0, "a", 1, model="attention"),
        row(1, "a", 0, model="attention"),
    ]
    table = accuracy_table(rows, model_order=("gdn2", "attention"))
    assert [(r["model"], r["seeds"]) for r in table] == [("gdn2", 1), ("attention", 2)]
    assert table[0]["post_update"] == 100.0 and table[0]["absent"] == 0.0 and table[0]["initial"] is None
    assert table[1]["post_update"] == 50.0
    by_attr = accuracy_table(rows, by_attribute=True, model_order=("gdn2",))
    assert by_attr[0]["absent/pan"] == 0.0 and by_attr[0]["absent/gain"] is None
    text = table_markdown(table, title="Table 2")
    assert "| gdn2 | 24000 | 1 | - | 100.0 | - | 0.0 | - |" in text
    assert plot_accuracy(table, tmp_path / "acc.png").stat().st_size > 1000


def _paired_rows(rng, n_streams=40, seeds=(0, 1, 2), gap=0.2):
    """Two models answering the same post-update queries; 'better' is right ``gap`` more often."""
    rows = []
    difficulty = rng.uniform(0.2, 0.8, size=n_streams)
    for seed in seeds:
        for j in range(n_streams):
            for q in range(4):
                u = rng.random()
                for model, p in (("base", difficulty[j]), ("better", min(1.0, difficulty[j] + gap))):
                    rows.append(
                        {
                            "model": model,
                            "checkpoint": 100,
                            "seed": seed,
                            "stream": f"s{j}",
                            "query_type": "post_update",
                            "attribute": "gain" if q % 2 else "pan",
                            "correct": int(u < p),
                        }
                    )
    return rows


def test_paired_difference_estimate_and_interval():
    from memgym.tasks.amemops.tables import paired_difference

    rows = _paired_rows(np.random.default_rng(0))
    interval = paired_difference(rows, "better", "base", "post_update", rng=np.random.default_rng(1), n_resamples=2000)
    by_model = {m: np.mean([r["correct"] for r in rows if r["model"] == m]) for m in ("better", "base")}
    assert interval.estimate == pytest.approx(100 * (by_model["better"] - by_model["base"]))
    assert 0 < interval.low < interval.estimate < interval.high
    one_seed = [r for r in rows if r["seed"] == 0]
    same = paired_difference(one_seed, "base", "base", "post_update", rng=np.random.default_rng(1), n_resamples=500)
    assert same.estimate == 0 and same.low == 0 and same.high == 0  # streams paired, one seed: no spread
    with_seeds = paired_difference(rows, "base", "base", "post_update", rng=np.random.default_rng(1), n_resamples=500)
    assert with_seeds.low < 0 < with_seeds.high  # seeds are drawn independently per model
    assert paired_difference(rows, "better", "base", "absent", rng=np.random.default_rng(1)) is None


def test_paired_interval_is_narrower_than_unpaired_spread():
    from memgym.tasks.amemops.tables import paired_difference

    rows = _paired_rows(np.random.default_rng(2), gap=0.1)
    paired = paired_difference(rows, "better", "base", "post_update", rng=np.random.default_rng(3), n_resamples=2000)
    # the stream difficulties are shared, so pairing removes their variance from the difference
    stream_means = {}
    for r in rows:
        stream_means.setdefault((r["model"], r["stream"]), []).append(r["correct"])
    base = np.array([np.mean(v) for (m, _), v in stream_means.items() if m == "base"])
    unpaired_half_width = 1.96 * 100 * np.sqrt(2 * base.var(ddof=1) / base.size)
    assert (paired.high - paired.low) / 2 < unpaired_half_width


def test_difference_markdown_lists_each_model_against_the_first():
    from memgym.tasks.amemops.tables import difference_markdown

    rows = _paired_rows(np.random.default_rng(0), n_streams=10)
    text = difference_markdown(rows, ["base", "better"], rng=np.random.default_rng(0), n_resamples=200)
    assert "against base" in text
    line = next(line for line in text.splitlines() if line.startswith("| better | 100 |"))
    assert line.count("[") == 1 and line.count(" - ") == 4  # post-update filled, other types empty
