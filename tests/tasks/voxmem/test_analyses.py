"""VoxMem analyses: the error taxonomy read from annotations (one hand-written reply per category)
and the semantics minus audio-native gap per operation."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.core.episode import TaskItem
from memgym.datasets.voxmem.records import Query, Session, SessionFact, Turn, VoxMemEpisode
from memgym.tasks.voxmem.analyses import (
    CATEGORIES,
    chance_categories,
    error_category,
    plot_semantic_gap,
    plot_taxonomy,
    semantic_gap_table,
    taxonomy_table,
)
from memgym.tasks.voxmem.scoring import VoxMemScorer

FAMILY = "home_repair"  # values Monday ... Saturday


def _session(sid, role, subject="", value="", user="u1", cue="neutral", sound=""):
    fact = (
        SessionFact(family=FAMILY, subject=subject, value=value, speaker=user, cue=cue, sound=sound)
        if subject
        else None
    )
    turns = (Turn(role="user", text="words", user=user, cue=cue, sound=sound), Turn(role="assistant", text="ok"))
    return Session(session_id=sid, role=role, turns=turns, fact=fact)


def _item(item_id, sessions, evidence_ids, cell, subtype, answer, query):
    evidence, operation = cell.split("/")
    item = TaskItem(
        item_id=item_id, task="spoken_qa", prompt=f"question {item_id}", answer=answer,
        annotations={"evidence": evidence, "operation": operation, "subtype": subtype, "evidence_sessions": evidence_ids},
    )  # fmt: skip
    episode = VoxMemEpisode(episode_id=f"{item_id}@8192", benchmark="voxmem", items=(item,), budget=8192,
                            sessions=tuple(sessions))  # fmt: skip
    return episode, query


def _items():
    fence = ("the broken fence",)
    tet = _item(
        "tet",
        [
            _session("a", "evidence", fence[0], "Monday"),  # the earlier state
            _session("b", "haystack", "the squeaky door", "Tuesday"),  # the asker's, another subject
            _session("c", "evidence", fence[0], "Friday"),  # the latest state (gold)
            _session("d", "filler"),
        ],
        ["a", "c"], "semantics/TET", "latest", "Friday",
        Query(evidence="semantics", operation="TET", subtype="latest", asker="u1", family=FAMILY, subjects=fence),
    )  # fmt: skip
    cue = _item(
        "cue",
        [
            _session("e", "evidence", fence[0], "Monday", cue="hesitation"),  # gold: hesitant
            _session("f", "haystack", fence[0], "Monday", user="u2", cue="surprise"),  # another user
            _session("g", "filler", cue="fast"),  # a filler's cue
        ],
        ["e"], "paralinguistic/IE", "context_to_cue", "hesitant",
        Query(evidence="paralinguistic", operation="IE", subtype="context_to_cue", asker="u1", family=FAMILY,
              subjects=fence),
    )  # fmt: skip
    refusal = _item(
        "ar",
        [_session("h", "evidence", "the squeaky door", "Monday")],
        [], "sound/AR", "from_IE", "unanswerable",
        Query(evidence="sound", operation="IE", subtype="cue_to_fact", asker="u1", family=FAMILY, subjects=fence,
              sound="rain"),
    )  # fmt: skip
    count = _item(
        "count",
        [_session("i", "evidence", fence[0], "Monday"), _session("j", "evidence", fence[0], "Friday")],
        ["i", "j"], "semantics/MSR", "counting", "2",
        Query(evidence="semantics", operation="MSR", subtype="counting", asker="u1", family=FAMILY, subjects=fence),
    )  # fmt: skip
    return {episode.items[0].item_id: (episode, query) for episode, query in (tet, cue, refusal, count)}


# (item, reply, expected category); None reply = the history did not fit the model's context
CASES = [
    ("tet", "It was Friday.", "correct"),
    ("tet", "Monday.", "earlier_state"),
    ("tet", "I think Tuesday.", "haystack"),
    ("tet", "Saturday", "no_session"),
    ("tet", "I can't tell from our conversations.", "refused_answerable"),
    ("tet", "", "unparseable"),
    ("tet", "Monday or maybe Friday", "unparseable"),
    ("cue", "You sounded surprised.", "other_user"),
    ("cue", "fast", "other_session"),
    ("ar", "It was Monday.", "answered_refusal"),
    ("count", "three times", "wrong_computed"),
    ("count", None, "over_context"),
]


@pytest.fixture(scope="module")
def played():
    items = _items()
    scorer = VoxMemScorer({k: q for k, (_, q) in items.items()}, ("rain", "dog"))
    rows = []
    for item_id, reply, expected in CASES:
        episode, _ = items[item_id]
        item = episode.items[0]
        row = {"model": "m", "memory": "cascaded", "episode_id": episode.episode_id, "item_id": item_id,
               "budget": episode.budget, **{k: item.annotations[k] for k in ("evidence", "operation", "subtype")}}  # fmt: skip
        if reply is None:
            row.update({"status": "over_context", "reply": None, "correct": 0.0})
        else:
            row.update({"status": "ok", "reply": reply, **scorer.score(item, reply)})
        rows.append((row, expected))
    return items, rows


def test_every_category_from_annotations(played):
    items, rows = played
    got = [error_category(row, *items[row["item_id"]]) for row, _ in rows]
    assert got == [expected for _, expected in rows]
    assert set(got) == set(CATEGORIES)


def test_taxonomy_table_counts_and_plot(played, tmp_path):
    items, rows = played
    episodes = {e.episode_id: e for e, _ in items.values()}
    table = taxonomy_table([r for r, _ in rows], episodes, {k: q for k, (_, q) in items.items()})
    by_evidence = {r["evidence"]: r for r in table}
    assert by_evidence["semantics"]["n"] == 9 and by_evidence["semantics"]["earlier_state"] == 1
    assert by_evidence["paralinguistic"]["other_user"] == 1 and by_evidence["sound"]["answered_refusal"] == 1
    assert all(r["n"] == sum(r[c] for c in CATEGORIES) for r in table)
    # wrong answers: semantics "Monday" (1/5 earlier, 1/5 haystack, 3/5 none), "Tuesday", "Saturday",
    # "three times"; paralinguistic "surprised" and "fast" (cue words: 6 wrong, 2 held by handed sessions)
    semantics = by_evidence["semantics"]
    assert semantics["haystack chance"] == pytest.approx(3 * 0.2) and semantics["wrong_computed chance"] == 1.0
    assert by_evidence["paralinguistic"]["other_user chance"] == pytest.approx(2 / 6)
    assert plot_taxonomy(table, tmp_path / "errors.png").stat().st_size > 0
    flawless = [{**r, "memory": "perfect", **{c: 0 for c in CATEGORIES if c != "correct"}} for r in table]
    assert plot_taxonomy(flawless, tmp_path / "none.png") is None  # no errors: no empty panels
    both = plot_taxonomy([*table, *flawless], tmp_path / "both.png")
    assert both is not None and both.stat().st_size > 0


def test_only_handed_sessions_are_blamed_and_chance_follows_them(played):
    """A reply naming a haystack's value is a haystack error only when the model was handed the
    haystack; the chance level (a uniform wrong day of the six) follows the handed sessions."""
    items, rows = played
    episode, query = items["tet"]
    row = next(r for r, expected in rows if expected == "haystack")
    scorer = VoxMemScorer({"tet": query})
    spec = scorer.spec(episode.items[0])
    assert error_category({**row, "handed_sessions": [0, 1, 2, 3]}, episode, query) == "haystack"
    assert error_category({**row, "handed_sessions": [0, 2]}, episode, query) == "no_session"  # evidence only
    every = chance_categories(row, episode, query, spec)  # Monday earlier, Tuesday haystack, 3 days in none
    assert every == pytest.approx({"earlier_state": 0.2, "haystack": 0.2, "no_session": 0.6})
    evidence_only = chance_categories({**row, "handed_sessions": [0, 2]}, episode, query, spec)
    assert evidence_only == pytest.approx({"earlier_state": 0.2, "no_session": 0.8})
    count_row = next(r for r, expected in rows if expected == "wrong_computed")
    count_episode, count_query = items["count"]
    assert chance_categories(count_row, count_episode, count_query, scorer.spec(count_episode.items[0])) == {
        "wrong_computed": 1.0
    }


def _gap_rows(semantics, audio, budgets=(8192, 16384)):
    rows = []
    for evidence, values in (("semantics", semantics), ("sound", audio)):
        for k, value in enumerate(values):
            for budget in budgets:
                rows.append({"model": "m", "memory": "x", "item_id": f"{evidence}{k}", "evidence": evidence,
                             "operation": "TET", "budget": budget, "status": "ok", "correct": float(value)})  # fmt: skip
    return rows


def test_semantic_gap_against_hand_computed_values(tmp_path):
    rows = _gap_rows([1, 1, 1, 0], [1, 0, 0, 0])  # 75 % vs 25 %
    rows[-1] = {**rows[-1], "correct": 1.0}  # the last sound item right at 16K only: 37.5 % at "all"
    table = semantic_gap_table(rows, np.random.default_rng(0), 500)
    tet = {r["budget"]: r for r in table if r["operation"] == "TET"}
    assert tet["8K"]["gap"] == pytest.approx(50.0) and tet["16K"]["gap"] == pytest.approx(25.0)
    assert tet["all"]["gap"] == pytest.approx(75.0 - 37.5)
    assert tet["all"]["semantics items"] == 4 and tet["all"]["audio-native items"] == 4
    assert tet["all"]["gap low"] < tet["all"]["gap"] < tet["all"]["gap high"]
    assert all(r["gap"] is None for r in table if r["operation"] != "TET")  # no items there
    assert plot_semantic_gap(table, tmp_path / "gap.png").stat().st_size > 0


def test_semantic_gap_interval_is_seeded_and_excludes_zero_for_a_large_gap():
    rows = _gap_rows([1] * 20, [0] * 18 + [1] * 2, budgets=(8192,))
    first = semantic_gap_table(rows, np.random.default_rng(3), 1000)
    assert first == semantic_gap_table(rows, np.random.default_rng(3), 1000)
    overall = next(r for r in first if r["operation"] == "TET" and r["budget"] == "all")
    assert overall["gap"] == pytest.approx(90.0) and overall["gap low"] > 0
