"""AMemOps tables: query-weighted vs per-stream accuracy, seed averaging, markdown and plot."""

from __future__ import annotations

import pytest

from memgym.tasks.amemops_tables import accuracy_cell, accuracy_table, plot_accuracy, table_markdown


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
