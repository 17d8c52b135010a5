"""The separability check: derivation families share a fold, permutation baseline, determinism."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memgym.datasets.voxmem.records import Session, SessionFact, Turn
from memgym.datasets.voxmem.separability import MIN_FAMILIES, derivation_families, fold_groups, separability

COMMON = ["plan", "budget", "week", "call", "fix", "trip", "lamp", "cake"]


def _session(sid: str, role: str, text: str, source: str = "written:template") -> Session:
    return Session(session_id=sid, role=role, turns=(Turn(role="user", text=text),), source=source)


def _letters(i: int) -> str:
    """A letters-only name for ``i`` (the classifier's words are runs of letters)."""
    return "".join("abcdefghij"[int(d)] for d in str(i))


def _twins(n_pairs: int = 10, seed: int = 0):
    """Items 2k and 2k+1 each hold two evidence sessions of their own words and, as haystacks,
    borrowed copies of the other's evidence (same words, opposite label): the leak to avoid."""
    rng = np.random.default_rng(seed)
    items, texts = [], {}
    for i in range(2 * n_pairs):
        texts[i] = [
            " ".join([*rng.choice(COMMON, 3), *(f"{k}{_letters(i)}{'ab'[j]}" for k in "xyz")]) for j in range(2)
        ]
    for i in range(2 * n_pairs):
        partner = i ^ 1
        sessions = [_session(f"e{i}-{j}", "evidence", texts[i][j]) for j in range(2)]
        sessions += [
            _session(f"h{i}-{j}", "haystack", texts[partner][j], f"borrowed:vox{partner:05d}:template")
            for j in range(2)
        ]
        items.append((f"vox{i:05d}", None, sessions))
    sessions = [s for _, _, ss in items for s in ss]
    by_item = [item for item, _, ss in items for _ in ss]
    return items, sessions, by_item


def test_borrowed_twins_share_a_family_and_ar_items_join_their_source():
    items, _, _ = _twins(3)
    families = derivation_families(items)
    assert families["e0-0"] == families["h1-0"] == families["e1-1"] == families["h0-1"]
    assert families["e0-0"] != families["e2-0"]
    ar = ("vox00007r1", "vox00002", [_session("a7", "evidence", "x")])  # an AR item of item 2 (a redraw)
    assert derivation_families([*items, ar])["a7"] == families["e2-0"]
    lamp = SessionFact(family="home_repair", subject="the lamp", value="Monday", speaker="u0")
    on_lamp = [  # item 8's evidence and item 9's written haystack share a subject, nothing else
        ("vox00008", None, [dataclasses.replace(_session("e8", "evidence", "x"), fact=lamp)]),
        ("vox00009", None, [dataclasses.replace(_session("h9", "haystack", "y"), fact=lamp)]),
    ]
    joined = derivation_families([*items, *on_lamp])
    assert joined["e8"] == joined["h9"] != joined["e2-0"]


def test_grouping_by_item_leaks_twins_and_grouping_by_family_does_not():
    items, sessions, by_item = _twins()
    leaky = separability(sessions, by_item, permutations=50)
    # each test session's opposite-labelled copy is in training: worse than chance
    assert leaky["accuracy"] < leaky["shuffled_interval"][0]
    families = derivation_families(items)
    fair = separability(sessions, [families[s.session_id] for s in sessions], permutations=50)
    assert fair["families"] == 10
    low, high = fair["ci"]
    assert low <= fair["accuracy"] <= high and low <= 0.5 <= high
    assert fair["shuffled_interval"][0] <= fair["accuracy"] <= fair["shuffled_interval"][1]


def test_permutation_baseline_interval_and_a_real_signal():
    rng = np.random.default_rng(2)
    sessions, families, kinds = [], [], []
    for i in range(40):
        role = "evidence" if i % 2 else "haystack"
        marker = " zebra zebra" if role == "evidence" else ""
        sessions.append(_session(str(i), role, " ".join(rng.choice(COMMON, 8)) + marker))
        families.append(f"f{i // 2}")
        kinds.append("sound" if i < 20 else "speaker")
    result = separability(sessions, families, kinds)
    assert result["permutations"] >= 200
    low, high = result["shuffled_interval"]
    assert low < 0.5 < high and high - low < 0.5
    assert result["accuracy"] > high and result["ci"][0] > high  # the marker separates, beyond the baseline
    assert set(result["by_evidence"]) == {"sound", "speaker"}
    assert all(r["accuracy"] > r["shuffled_interval"][1] for r in result["by_evidence"].values())
    assert result["top_features"]["evidence"][0][0] == "zebra"


def test_separability_is_deterministic_and_checks_lengths():
    items, sessions, _ = _twins(4)
    families = derivation_families(items)
    groups = [families[s.session_id] for s in sessions]
    assert separability(sessions, groups, seed=3, permutations=30) == separability(
        sessions, groups, seed=3, permutations=30
    )
    with pytest.raises(ValueError, match="families"):
        separability(sessions, groups[:-1])


def test_chained_items_fold_by_topic_family_and_the_check_still_runs():
    """A large build chains every item into one derivation family (shared haystacks, subjects):
    the check then folds topic families, keeping each subject's twins in one fold."""
    items, sessions, _ = _twins()
    topics = [f"topic{(i // 2) % 6}" for i in range(len(items))]  # twins (items 2k, 2k+1) share a topic
    by_topic = {s.session_id: topics[n] for n, (_, _, ss) in enumerate(items) for s in ss}
    sessions = [
        dataclasses.replace(s, fact=SessionFact(family=by_topic[s.session_id], subject="x", value="1", speaker="u0"))
        for s in sessions
    ]
    chained = {s.session_id: "vox00000" for s in sessions}  # one family: nothing to fold
    assert "ci" not in separability(sessions, list(chained.values()), permutations=10)
    groups, grouping = fold_groups(chained, sessions)
    assert grouping == "topic" and len(set(groups)) == 6
    fair = separability(sessions, groups, permutations=50)
    assert fair["families"] == 6
    assert fair["shuffled_interval"][0] <= fair["accuracy"] <= fair["shuffled_interval"][1]
    families = derivation_families(items)
    assert len(set(families.values())) >= MIN_FAMILIES
    assert fold_groups(families, sessions) == ([families[s.session_id] for s in sessions], "derivation")
