"""QC checks catch what they are for: alternative answers, leakage, dirty fillers, budgets, nesting, bad turns."""

from __future__ import annotations

import dataclasses

import numpy as np

from memgym.datasets.voxmem import qc
from memgym.datasets.voxmem.plans import plan_item
from memgym.datasets.voxmem.records import Session, Turn

SOUNDS = ["dog", "rain", "siren", "clock_alarm"]


def _history(plan):
    sessions = []
    for s in plan.sessions:
        turns = (
            Turn(role="user", text=f"About {s.fact.subject}.", user=s.fact.speaker),
            Turn(role="assistant", text="Ok."),
        )
        sessions.append(Session(session_id=s.key, role=s.role, turns=turns, fact=s.fact, tokens=100))
    filler = Session(session_id="f0", role="filler", turns=(Turn(role="user", text="How do I tie a knot?"),), tokens=50)
    return [*sessions, filler]


def _check(plan, short, long, budget_tokens=None):
    histories = {1000: short, 2000: long}
    tokens = budget_tokens or {1000: sum(s.tokens for s in short), 2000: sum(s.tokens for s in long)}
    return qc.item_failures(plan, histories, tokens, SOUNDS)


def test_clean_item_passes_and_each_defect_is_flagged():
    plan = plan_item("p", "sound", "IE", "cue_to_fact", SOUNDS, np.random.default_rng(0))
    base = _history(plan)
    assert _check(plan, base, base) == []
    evidence = next(s for s in base if s.role == "evidence")
    rival_fact = dataclasses.replace(evidence.fact, value="a different value")
    rival = dataclasses.replace(evidence, session_id="rival", role="haystack", fact=rival_fact)
    assert "unique_answer@2000" in _check(plan, base, [*base, rival])
    leaky = dataclasses.replace(base[1], turns=(Turn(role="user", text="Hear the rain outside?"),))
    assert "transcript_only@2000" in _check(plan, base, [*base[:1], leaky, *base[2:]])
    subject = plan.query.subjects[0]
    dirty = Session(session_id="f1", role="filler", turns=(Turn(role="user", text=f"Tell me about {subject}"),))
    assert "filler_clean@2000" in _check(plan, base, [*base, dirty])
    assert "budget@1000" in _check(plan, base, base, {1000: 1001, 2000: 900})
    assert "nesting@1000<2000" in _check(plan, base, list(reversed(base)))


def test_turn_checks():
    good = Turn(role="user", text="x", duration_s=3.0, sound="rain", snr_db=10.1, cue="fast", cue_delta=0.3)
    assert qc.turn_failures(good, 10.0) == []
    assert qc.turn_failures(dataclasses.replace(good, duration_s=31.0), 10.0) == ["duration"]
    assert qc.turn_failures(dataclasses.replace(good, snr_db=12.0), 10.0) == ["snr"]
    assert qc.turn_failures(dataclasses.replace(good, cue_delta=0.01), 10.0) == ["cue"]
    assert qc.turn_failures(dataclasses.replace(good, clipped=0.01), 10.0) == ["clipping"]


def test_separability_detects_surface_patterns_and_not_random_ones():
    rng = np.random.default_rng(0)
    words = ["plan", "budget", "week", "call", "fix", "trip", "lamp", "cake"]

    def session(i, role, marker=""):
        text = " ".join(rng.choice(words, size=8)) + marker
        return Session(session_id=str(i), role=role, turns=(Turn(role="user", text=text),))

    leaky = [session(i, "evidence", " zebra zebra") for i in range(30)] + [
        session(i + 30, "haystack") for i in range(30)
    ]
    clean = [session(i, "evidence") for i in range(30)] + [session(i + 30, "haystack") for i in range(30)]
    assert qc.separability(leaky)["accuracy"] > 0.9
    result = qc.separability(clean)
    assert abs(result["accuracy"] - 0.5) < 0.2 and result["sessions"] == 60
