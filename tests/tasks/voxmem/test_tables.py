"""VoxMem result tables: groups in the order a reader expects."""

from __future__ import annotations

import numpy as np

from memgym.tasks.voxmem.tables import budget_table


def test_budgets_are_listed_by_size_not_as_text():
    rows = [
        {"model": "m", "memory": "cascaded", "budget": budget, "status": "ok", "correct": 1.0, "evidence": "sound"}
        for budget in (65536, 8192, 16384)
    ]
    table = budget_table(rows, np.random.default_rng(0), 10)
    assert [row["budget"] for row in table] == [8192, 16384, 65536]
