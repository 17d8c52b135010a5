"""The memory comparison table on hand-written result rows with known means."""

import numpy as np
import pytest

from memgym.pipelines.dialogmem.comparison import comparison_markdown, comparison_rows, qa_metric


def _nav(success, content_type="perceptual", updated=False, **extra):
    return {
        "task": "navigation",
        "geodesic_success": success,
        "content_type": content_type,
        "updated": updated,
        **extra,
    }


def _qa(f1, content_type="social", verbalised=True, updated=False, **extra):
    row = {"task": "qa", "token_f1": f1, "content_type": content_type, "verbalised": verbalised, "updated": updated}
    return {**row, **extra}


ROWS = {
    "a": [_nav(1.0), _nav(0.0), _nav(1.0, "social", True), _qa(1.0), _qa(0.5, "episodic", False, True)],
    "b": [_nav(0.0), _nav(0.0), _nav(1.0, "social", True), _qa(0.0), {"task": "qa", "error": "timeout"}],
}


def _cell(table, memory, task, column, group, metric):
    return next(
        c
        for c in table
        if (c["memory"], c["task"], c["slice"], c["group"], c["metric"]) == (memory, task, column, group, metric)
    )


def test_means_counts_and_slices():
    table = comparison_rows(ROWS, n_resamples=500)
    overall = _cell(table, "a", "navigation", "overall", "all", "geodesic_success")
    assert overall["mean"] == pytest.approx(200 / 3) and overall["n"] == 3
    assert 0.0 <= overall["low"] <= overall["mean"] <= overall["high"] <= 100.0
    assert _cell(table, "a", "qa", "overall", "all", "token_f1")["mean"] == pytest.approx(75.0)
    assert _cell(table, "a", "qa", "verbalised", "False", "token_f1")["mean"] == pytest.approx(50.0)
    assert _cell(table, "a", "navigation", "updated", "True", "geodesic_success")["mean"] == 100.0
    errored = _cell(table, "b", "qa", "overall", "all", "token_f1")
    assert errored["n"] == 1 and errored["mean"] == 0.0  # the error row does not count
    empty = _cell(table, "b", "qa", "content_type", "episodic", "token_f1")
    assert empty["n"] == 0 and empty["mean"] is None
    assert {c["metric"] for c in table if c["task"] == "navigation"} == {"geodesic_success"}  # nothing executed


def test_intervals_are_reproducible_and_independent_of_memory_order():
    one = comparison_rows(ROWS, seed=3, n_resamples=300)
    other = comparison_rows(dict(reversed(list(ROWS.items()))), seed=3, n_resamples=300)
    key = lambda c: (c["memory"], c["task"], c["slice"], c["group"], c["metric"])  # noqa: E731
    assert sorted(one, key=key) == sorted(other, key=key)
    many = {"c": [_nav(float(i % 3 == 0)) for i in range(40)]}
    lows = {comparison_rows(many, seed=s, n_resamples=300)[0]["low"] for s in range(4)}
    assert len(lows) > 1  # the seed does drive the resampling


def test_llm_match_is_used_when_a_judge_scored_and_is_already_a_percentage():
    rows = {"a": [_qa(0.2, llm_match=75.0), _qa(0.4, llm_match=25.0)]}
    assert qa_metric(rows["a"]) == "llm_match"
    cell = _cell(comparison_rows(rows, n_resamples=200), "a", "qa", "overall", "all", "llm_match")
    assert cell["mean"] == 50.0 and np.isfinite(cell["low"])


def test_markdown_puts_memories_side_by_side_and_counts_errors():
    text = comparison_markdown(comparison_rows(ROWS, n_resamples=200), {"a": 0, "b": 1})
    assert "## qa: token_f1 by verbalised" in text and "| verbalised | a | b |" in text
    assert "75.0 [" in text and "Items with errors (not scored): a 0, b 1." in text
