"""Breakdowns of AMemOps accuracy: pitch bins and paired recording-control differences."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.tasks.amemops.breakdowns import binned_rows, pitch_bin, recording_contrast_report


def test_pitch_bins_cover_every_difference_once():
    assert [pitch_bin(d) for d in (0, 1, 4, 5, 11, 12, 23, 24, 48)] == [
        "0",
        "1-4",
        "1-4",
        "5-11",
        "5-11",
        "12-23",
        "12-23",
        "24+",
        "24+",
    ]
    assert pitch_bin(None) is None
    with pytest.raises(ValueError):
        pitch_bin(-1)
    rows = [{"query_type": "initial", "pitch_difference": 7}, {"query_type": "absent", "pitch_difference": None}]
    assert binned_rows(rows) == [{"query_type": "5-11", "pitch_difference": 7}]


def _rows():
    """Two seeds, four streams; under 'fixed' every post-update gain query is right, under
    'original' only on streams 0 and 1; pan queries are right in both."""
    rows = []
    for seed in (0, 1):
        for stream in range(4):
            for recordings in ("original", "fixed"):
                for attribute in ("gain", "pan"):
                    correct = attribute == "pan" or recordings == "fixed" or stream < 2
                    rows.append(
                        {
                            "model": "gdn2",
                            "seed": seed,
                            "checkpoint": 24000,
                            "stream": f"s{stream}",
                            "query_type": "post_update",
                            "attribute": attribute,
                            "recordings": recordings,
                            "correct": int(correct),
                        }
                    )
    return rows


def _cell(text: str, attribute: str) -> tuple[float, float, float]:
    line = next(x for x in text.splitlines() if f"| fixed - original | {attribute} |" in x)
    cell = line.split("|")[6].strip()  # post-update
    estimate, interval = cell.split(" [")
    low, high = interval.rstrip("]").split(", ")
    return float(estimate), float(low), float(high)


def test_recording_contrasts_are_gain_and_pan_specific(tmp_path):
    text = recording_contrast_report(_rows(), ["gdn2"], [("fixed", "original")], tmp_path, n_resamples=500)
    assert _cell(text, "gain")[0] == 50.0  # streams 2 and 3 of 4 gain 100 pp
    assert _cell(text, "pan") == (0.0, 0.0, 0.0)
    estimate, low, high = _cell(text, "all")
    assert estimate == 25.0 and 0.0 <= low <= estimate <= high <= 50.0
    assert (tmp_path / "recording_contrasts.png").stat().st_size > 1000
    again = recording_contrast_report(_rows(), ["gdn2"], [("fixed", "original")], tmp_path, n_resamples=500)
    assert again == text  # seeded bootstrap


def _familiar_rows():
    """Two training sets x two models x two seeds; gdn2 is right on every post-update query,
    attention on unseen streams only in half of them and on seen ones in all but a quarter."""
    rows = []
    for train_set in ("set2", "set3"):
        for core in ("gdn2", "attention_rope"):
            for seed in (0, 1):
                for seen in (True, False):
                    for stream in range(4):
                        wrong = core == "attention_rope" and (stream < (1 if seen else 2))
                        rows.append(
                            {
                                "core": core,
                                "train_set": train_set,
                                "seen": seen,
                                "seed": seed,
                                "stream_key": f"{'a' if seen else 'b'}{stream}",
                                "query_type": "post_update",
                                "correct": int(not wrong),
                            }
                        )
    return rows


def test_familiarity_interaction_is_the_seen_minus_unseen_advantage():
    from memgym.tasks.amemops.breakdowns import familiarity_interaction

    result = familiarity_interaction(
        _familiar_rows(), "gdn2", "attention_rope", rng=np.random.default_rng(0), n_resamples=300
    )
    assert result["seen"].estimate == 25.0 and result["unseen"].estimate == 50.0
    assert result["interaction"].estimate == -25.0
    assert result["interaction"].low <= -25.0 <= result["interaction"].high
    with pytest.raises(ValueError, match="no post_update queries of gdn2 or attention_rope"):
        familiarity_interaction([], "gdn2", "attention_rope", rng=np.random.default_rng(0), n_resamples=10)
    with pytest.raises(ValueError, match="training set set2: no unseen"):
        rows = [r for r in _familiar_rows() if r["seen"] or r["train_set"] != "set2"]
        familiarity_interaction(rows, "gdn2", "attention_rope", rng=np.random.default_rng(0), n_resamples=10)


def _model_rows():
    """Three models x two seeds x four streams of one post-update gain query: gdn2 always right,
    attention right on streams 0-1, attention_rope right on streams 0-2."""
    right = {"gdn2": 4, "attention": 2, "attention_rope": 3}
    return [
        {
            "model": model,
            "seed": seed,
            "checkpoint": 3,
            "stream": stream,
            "query_type": "post_update",
            "attribute": "gain",
            "correct": int(stream < right[model]),
        }
        for model in right
        for seed in (0, 1)
        for stream in range(4)
    ]


def test_contrasts_average_each_side_over_its_models():
    from memgym.tasks.amemops.tables import averaged_contrast, paired_difference

    rows = _model_rows()
    averaged = averaged_contrast(
        rows, ["gdn2"], ["attention", "attention_rope"], "post_update", rng=np.random.default_rng(0), n_resamples=500
    )
    assert averaged.estimate == pytest.approx(100 - (50 + 75) / 2)
    assert 0.0 <= averaged.low <= averaged.estimate <= averaged.high <= 100.0
    single = averaged_contrast(rows, ["gdn2"], ["attention"], "post_update", rng=np.random.default_rng(1))
    assert single == paired_difference(rows, "gdn2", "attention", "post_update", rng=np.random.default_rng(1))
    assert averaged_contrast(rows, ["gdn2"], ["attention"], "absent", rng=np.random.default_rng(0)) is None


def test_contrast_report_writes_the_averaged_contrasts(tmp_path):
    from memgym.tasks.amemops.breakdowns import contrast_report, parse_contrast

    text = contrast_report(
        _model_rows(), ["gdn2:attention+attention_rope", "attention_rope:attention"], tmp_path, n_resamples=300
    )
    assert "| gdn2 - attention + attention_rope | 3 | gain |" in text
    assert "| attention_rope:attention | 3 | all |" in text and "| 25.0 [" in text
    assert "| gdn2 - attention + attention_rope | 3 | pan |" not in text  # no pan query
    assert (tmp_path / "contrasts.png").stat().st_size > 1000
    assert parse_contrast("a+b:c") == (("a", "b"), ("c",))
    for bad in ("a", "a:b:c", "a+:b", "a:a+b"):
        with pytest.raises(ValueError):
            parse_contrast(bad)
