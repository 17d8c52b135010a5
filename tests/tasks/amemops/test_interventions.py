"""State interventions: eligible queries on hand-built streams, the loss table and its plot."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.core.episode import TaskItem
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.tasks.amemops.interventions import Occurrence, edit_plans, loss_markdown, loss_table, plan_edit, plot_losses


def event(identity, onset, end, role="target", query_id=""):
    return StreamEvent(
        identity=identity,
        role=role,
        onset_frame=onset,
        frames=end - onset,
        gain_db=0.0,
        pan=0.5,
        recording_id=f"{identity}-rec",
        start_sample=0,
        query_id=query_id,
    )


def hand_built_stream(queries, sources, frames=200):
    """``queries``: (id, identity, onset, end) with ``end`` exclusive; ``sources``: (identity, onset, end, role)."""
    events = [event(i, on, end, role) for i, on, end, role in sources]
    events += [event(identity, on, end, "query", qid) for qid, identity, on, end in queries]
    items = tuple(
        TaskItem(
            item_id=qid,
            task="attribute_query",
            answer=0,
            annotations={"identity": identity, "onset_frame": on, "end_frame": end - 1, "attribute": "gain"},
        )
        for qid, identity, on, end in queries
    )
    return AMemOpsStream(
        episode_id="hand",
        benchmark="amemops",
        items=items,
        frames=frames,
        library="test",
        split="eval",
        events=tuple(sorted(events, key=lambda e: e.onset_frame)),
        noise_seed=0,
    )


SOURCES = [
    ("A", 10, 30, "target"),
    ("A", 100, 120, "target"),  # A's final occurrence: edit at frame 120
    ("B", 40, 60, "target"),
    ("C", 70, 90, "target"),
    ("C", 140, 160, "target"),  # refreshes C after A's edit
    ("D", 115, 135, "distractor"),  # straddles A's edit
]
QUERIES = [
    ("q00", "A", 90, 99),  # before A's edit
    ("q01", "B", 112, 124),  # window overlaps A's edit
    ("q02", "A", 124, 136),
    ("q03", "C", 136, 140),  # C not yet refreshed when read (frame 139)
    ("q04", "B", 162, 170),
    ("q05", "C", 170, 180),  # C refreshed at 140
    ("q06", "D", 182, 190),  # D's binding straddles A's edit
    ("q07", "E", 190, 198),  # absent source
]


def test_eligibility_follows_binding_time_refresh_and_query_window():
    stream = hand_built_stream(QUERIES, SOURCES)
    plan = plan_edit(stream, "A")
    assert plan.edit_frame == 120 and plan.target == Occurrence("A", 100, 120)
    assert plan.target_queries == ("q02",)
    assert plan.other_queries == ("q03", "q04")
    assert plan.others == (Occurrence("B", 40, 60), Occurrence("C", 70, 90))  # D has no event ending by 120
    assert plan.roles() == {"q02": "target", "q03": "other", "q04": "other"}


def test_every_source_with_an_eligible_target_query_is_edited_in_edit_order():
    plans = edit_plans(hand_built_stream(QUERIES, SOURCES))
    assert [(p.target.identity, p.edit_frame) for p in plans] == [("B", 60), ("A", 120), ("D", 135), ("C", 160)]
    b, _, d, c = plans
    assert b.target_queries == ("q01", "q04") and b.other_queries == ("q00",)  # q00 reads A before A's refresh
    assert d.target_queries == ("q06",) and d.other_queries == ("q03", "q04")
    assert c.target_queries == ("q05",) and c.other_queries == ("q04", "q06")
    assert [o.identity for o in c.others] == ["B", "A", "D"]


def test_sources_without_a_later_query_or_with_short_occurrences_are_not_targets():
    stream = hand_built_stream([("q00", "A", 50, 60)], [("B", 5, 7, "distractor"), ("A", 10, 30, "target")])
    assert plan_edit(stream, "B") is None  # no query about B
    assert [p.target.identity for p in edit_plans(stream)] == ["A"]
    assert plan_edit(stream, "A", rank=3).others == ()  # B's 2-frame occurrence cannot give a rank-3 subspace
    assert plan_edit(stream, "A", rank=2).others == (Occurrence("B", 5, 7),)
    assert plan_edit(stream, "A", rank=25) is None
    with pytest.raises(ValueError, match="'Z' has no event"):
        plan_edit(stream, "Z")


def rows_for(stream, outcomes, seed=0, model="gdn2"):
    """Result rows of one target ``A``: ``outcomes[edit][query] = correct``; q1 is a target query."""
    rows = []
    for edit, answers in outcomes.items():
        for query, correct in answers.items():
            rows.append(
                {
                    "model": model,
                    "checkpoint": 1,
                    "seed": seed,
                    "stream": stream,
                    "target": "A",
                    "edit": edit,
                    "edit_type": edit.rstrip("0123456789"),
                    "query": query,
                    "role": "target" if query == "q1" else "other",
                    "correct": correct,
                }
            )
    return rows


def test_losses_average_random_draws_then_streams(tmp_path):
    s1 = {
        "none": {"q1": 1, "q2": 1},
        "target": {"q1": 0, "q2": 1},
        "random0": {"q1": 0, "q2": 0},
        "random1": {"q1": 1, "q2": 0},
    }
    s2 = {**s1, "target": {"q1": 1, "q2": 1}}
    rows = rows_for("s1", s1) + rows_for("s2", s2)
    table = loss_table(rows, rng=np.random.default_rng(0), n_resamples=500)
    target = table[("gdn2", 1, "target", "target")]
    assert target.loss.estimate == pytest.approx(50.0)
    assert target.loss.low == pytest.approx(0.0) and target.loss.high == pytest.approx(100.0)
    assert (target.baseline, target.streams, target.queries) == (100.0, 2, 2)
    assert table[("gdn2", 1, "target", "other")].loss.estimate == pytest.approx(0.0)
    assert table[("gdn2", 1, "random", "target")].loss.estimate == pytest.approx(50.0)
    random_other = table[("gdn2", 1, "random", "other")].loss
    assert (random_other.estimate, random_other.low, random_other.high) == pytest.approx((100.0, 100.0, 100.0))
    text = loss_markdown(table, model_order=("gdn2",))
    assert "| gdn2 | 1 | target | 50.0 [0.0, 100.0] | 0.0 [0.0, 0.0] | 100.0 | 100.0 | 2 (2 streams) |" in text
    assert plot_losses(table, tmp_path / "fig.png").stat().st_size > 1000
    again = loss_table(rows, rng=np.random.default_rng(0), n_resamples=500)
    assert again == table


def test_edited_rows_need_their_unedited_row():
    rows = rows_for("s1", {"target": {"q1": 0}})
    with pytest.raises(ValueError, match="needs its 'none' row"):
        loss_table(rows, rng=np.random.default_rng(0), n_resamples=10)
