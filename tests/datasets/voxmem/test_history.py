"""Nested histories: strict extension, order of ranked evidence, uniform spread, budget errors."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.core.errors import MemgymError
from memgym.datasets.voxmem.history import core_order, nest_histories


def _grow(seed, budgets=(1000, 2000, 4000)):
    rng = np.random.default_rng(seed)
    counter = iter(range(10**6))
    ranks = [0, 1, 2, -1, -1]
    order = core_order(ranks, rng)
    return ranks, nest_histories([40] * 5, order, budgets, lambda rem, budget: (f"f{next(counter)}", 30), rng)


def test_longer_histories_strictly_extend_shorter_ones():
    ranks, (sessions, histories) = _grow(0)
    b = sorted(histories)
    for short, long in zip(b, b[1:]):
        pos = {s: i for i, s in enumerate(histories[long])}
        assert set(histories[short]) < set(histories[long])
        assert [pos[s] for s in histories[short]] == sorted(pos[s] for s in histories[short])
    for budget, order in histories.items():
        assert 0.9 * budget <= 40 * 5 + 30 * (len(order) - 5) <= budget
        ranked = [i for i in order if isinstance(sessions[i], int) and ranks[sessions[i]] >= 0]
        assert ranked == [0, 1, 2]


def test_core_positions_spread_uniformly():
    positions = []
    for seed in range(200):
        _, (sessions, histories) = _grow(seed, budgets=(2000,))
        order = histories[2000]
        positions += [k / (len(order) - 1) for k, i in enumerate(order) if isinstance(sessions[i], int)]
    hist, _ = np.histogram(positions, bins=4, range=(0, 1))
    assert hist.min() > 0.7 * hist.mean()


def test_callback_is_told_the_level_it_fills():
    """A caller that adds two "h" sessions per level gets them at every level, in nested histories."""
    added = {}

    def next_extra(remaining, budget):
        kind = "h" if added.get(budget, 0) < 2 else "f"
        added[budget] = added.get(budget, 0) + 1
        return f"{kind}{budget}-{added[budget]}", 100

    sessions, histories = nest_histories([100], [0], [500, 1000, 2000], next_extra, np.random.default_rng(0))
    for budget, previous in [(500, 0), (1000, 500), (2000, 1000)]:
        new = [sessions[i] for i in histories[budget] if i not in histories.get(previous, [0])]
        assert sorted(new) == sorted(
            [f"h{budget}-1", f"h{budget}-2"] + [f"f{budget}-{k}" for k in range(3, len(new) + 1)]
        )
        assert len(histories[budget]) == budget // 100


def test_budget_too_small_is_a_clear_error():
    with pytest.raises(MemgymError, match="smallest budget 100"):
        nest_histories([80, 80], [0, 1], [100], lambda rem, budget: None, np.random.default_rng(0))


def test_every_budget_level_adds_haystacks_and_fillers_that_keep_the_answer(small_build):
    from memgym.core.episode import Dataset
    from memgym.core.records import read_jsonl
    from memgym.datasets.voxmem.oracle import answer_query

    config, folder, _ = small_build
    plans = {p.plan_id: p for p in read_jsonl(folder / "plans.jsonl")}
    by_item, topical = {}, 0
    for e in Dataset.load(folder / "manifest.jsonl"):
        by_item.setdefault(e.items[0].item_id, {})[e.budget] = e
    for item, episodes in by_item.items():
        plan = plans[item]
        own = sum(s.role == "haystack" for s in plan.sessions)
        core = [s.fact for s in plan.sessions]
        previous: set[str] = set()
        for budget in sorted(episodes):
            sessions = episodes[budget].sessions
            added = [s for s in sessions if s.session_id not in previous]
            roles = [s.role for s in added]
            extra_haystacks = roles.count("haystack") - (own if not previous else 0)
            assert extra_haystacks == config.haystacks_per_level, (item, budget, roles)
            assert "filler" in roles or not previous  # each longer history adds both (4K may have no room)
            extras = [s for s in added if s.role == "haystack" and s.fact not in core]
            on_subject = [s for s in extras if s.fact.subject in plan.query.subjects]
            assert plan.audio_native or not on_subject  # only acoustic evidence can rule such a haystack out
            topical += len(on_subject)
            facts = [s.fact for s in sessions if s.fact is not None]
            assert answer_query(plan.query, facts) == plan.answer  # no added session supplies another answer
            previous = {s.session_id for s in sessions}
    assert topical > 0  # longer histories add haystacks on the question's own subject


def _on_subject_haystacks(folder):
    """item -> budget -> (haystacks on the question's subjects, session ids, answer holds)."""
    from memgym.core.episode import Dataset
    from memgym.core.records import read_jsonl
    from memgym.datasets.voxmem.oracle import answer_query

    plans = {p.plan_id: p for p in read_jsonl(folder / "plans.jsonl")}
    out: dict = {}
    for e in Dataset.load(folder / "manifest.jsonl"):
        plan = plans[e.items[0].item_id]
        count = sum(s.role == "haystack" and s.fact.subject in plan.query.subjects for s in e.sessions)
        holds = answer_query(plan.query, [s.fact for s in e.sessions if s.fact is not None]) == plan.answer
        out.setdefault(plan.plan_id, {})[e.budget] = (count, [s.session_id for s in e.sessions], holds)
    return plans, out


@pytest.mark.slow  # a second build of the shared fixture's items (its audio reused)
def test_fixed_competition_keeps_same_subject_haystacks_constant_across_budgets(small_build, tmp_path):
    """length_control=fixed_competition: the same items and smallest history; longer histories add
    no haystack on the question's subjects (the default adds some), and every answer still holds."""
    import dataclasses
    import os

    from memgym.datasets.voxmem.build import VoxMemBuilder

    config, folder, _ = small_build
    for path in (folder / "audio").rglob("*"):  # share the rendered audio (content-hashed files)
        target = tmp_path / path.relative_to(folder)
        target.mkdir(parents=True, exist_ok=True) if path.is_dir() else os.link(path, target)
    control = VoxMemBuilder(dataclasses.replace(config, out=str(tmp_path), length_control="fixed_competition")).build()
    plans, default = _on_subject_haystacks(folder)
    control_plans, fixed = _on_subject_haystacks(control)
    assert control_plans == plans
    levels = sorted({b for budgets in fixed.values() for b in budgets})
    smallest, largest = levels[0], levels[-1]
    grew = 0
    for item, budgets in fixed.items():
        assert budgets[smallest][1] == default[item][smallest][1]  # same smallest history
        assert len({count for count, _, _ in budgets.values()}) == 1, (item, budgets)
        assert all(holds for _, _, holds in budgets.values())
        grew += default[item][largest][0] > default[item][smallest][0]
    assert grew > 0  # the default does add competing haystacks with length
