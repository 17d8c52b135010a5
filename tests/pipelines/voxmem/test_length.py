"""Length vs competition: the paired decomposition of two eval runs of the same items."""

from __future__ import annotations

import pytest

from memgym.pipelines.voxmem.length import length_vs_competition, main, markdown


def _rows(correct_at: dict[int, list[float]]) -> list[dict]:
    return [
        {"model": "structured", "memory": "cascaded", "item_id": f"vox{i:05d}", "budget": budget, "correct": c}
        for budget, values in correct_at.items()
        for i, c in enumerate(values)
    ]


def test_decline_splits_into_length_and_competition_item_by_item():
    default = _rows({8192: [1, 1, 1, 1], 65536: [1, 0, 0, 1]})
    control = _rows({8192: [1, 1, 1, 1], 65536: [1, 1, 0, 1]})
    default.append({**default[0], "item_id": "vox00009", "correct": None})  # no verdict: left out
    result = length_vs_competition(default, control)[("structured", "cascaded")]
    assert result["items"] == 4 and result["budgets"] == [8192, 65536] and result["smallest_differs"] == 0
    assert result["total"].estimate == pytest.approx(-0.5)
    assert result["length"].estimate == pytest.approx(-0.25)
    assert result["competition"].estimate == pytest.approx(-0.25)
    assert result["competition"].low <= -0.25 <= result["competition"].high
    assert result["accuracy"]["control"][65536].estimate == pytest.approx(0.75)
    assert length_vs_competition(default, control, seed=1)[("structured", "cascaded")]["items"] == 4
    assert "| competition: default - control at the largest | -25.0 [" in markdown({("structured", "cascaded"): result})


def test_items_missing_from_a_run_are_left_out_and_bad_folders_are_one_error(tmp_path, capsys):
    default = _rows({8192: [1, 1, 0], 65536: [0, 1, 0]})
    control = _rows({8192: [1, 1], 65536: [1, 1]})
    assert length_vs_competition(default, control)[("structured", "cascaded")]["items"] == 2
    assert main([str(tmp_path), str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"memgym: error: {tmp_path} is not a memgym run folder")
