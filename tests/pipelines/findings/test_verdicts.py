"""The verdict rules of ``memgym findings`` on constructed effects, one case per verdict."""

import math

import pytest

from memgym.pipelines.findings.verdicts import Decision, Effect, decide


@pytest.mark.parametrize(
    ("effect", "kind", "verdict"),
    [
        pytest.param(Effect(12.0, 4.0, 20.0, 60), "positive", "reproduced", id="positive-above-zero"),
        pytest.param(Effect(-9.0, -15.0, -3.0, 60), "positive", "reversed", id="positive-below-zero"),
        pytest.param(Effect(0.5, -2.0, 3.0, 60), "positive", "not reproduced", id="positive-flat"),
        pytest.param(Effect(3.0, -4.0, 10.0, 60), "positive", "undecided", id="positive-spans-both"),
        pytest.param(Effect(0.4, -3.0, 3.5, 200), "flat", "reproduced", id="flat-inside-margin"),
        pytest.param(Effect(8.0, 2.0, 14.0, 200), "flat", "not reproduced", id="flat-clear-rise"),
        pytest.param(Effect(-8.0, -14.0, -2.0, 200), "flat", "not reproduced", id="flat-clear-fall"),
        pytest.param(Effect(1.0, -7.0, 9.0, 60), "flat", "undecided", id="flat-too-wide"),
    ],
)
def test_each_verdict(effect: Effect, kind: str, verdict: str) -> None:
    decision = decide(effect, kind, margin=5.0, min_items=30)
    assert decision.verdict == verdict
    assert (decision.needed is not None) == (verdict == "undecided")


def test_too_few_items_is_undecided_even_with_a_clear_interval() -> None:
    decision = decide(Effect(30.0, 20.0, 40.0, 10), "positive", min_items=30)
    assert decision.verdict == "undecided"
    assert decision.needed >= 30
    assert "below the minimum" in decision.reason


def test_too_few_training_seeds_is_undecided_and_effects_without_seeds_are_not_counted() -> None:
    decision = decide(Effect(30.0, 20.0, 40.0, 90, seeds=1), "positive", min_items=30, min_seeds=3)
    assert decision == Decision("undecided", None, "1 training seed(s), below the minimum 3")
    assert decide(Effect(30.0, 20.0, 40.0, 90, seeds=3), "positive", min_seeds=3).verdict == "reproduced"
    assert decide(Effect(30.0, 20.0, 40.0, 90), "positive", min_seeds=3).verdict == "reproduced"


def test_needed_count_shrinks_the_interval_until_one_verdict_holds() -> None:
    # reproduced needs a half-width below the estimate: 4x the items halve the width 7 -> 3.5
    decision = decide(Effect(3.5, -3.5, 10.5, 40), "positive", margin=5.0, min_items=30)
    assert decision.verdict == "undecided"
    assert decision.needed == 160
    # below zero, "not reproduced" (high < margin) is the nearer verdict: half-width 14 -> 12
    decision = decide(Effect(-7.0, -21.0, 7.0, 40), "positive", margin=5.0, min_items=30)
    assert decision.needed == math.ceil(40 * (14.0 / 12.0) ** 2)
    # a flat claim centred on zero is decided once the interval fits inside the margin
    decision = decide(Effect(0.0, -10.0, 10.0, 50), "flat", margin=5.0, min_items=30)
    assert decision.needed == 200


@pytest.mark.parametrize(
    "bad",
    [dict(estimate=float("nan"), low=0, high=1, n=5), dict(estimate=0, low=2, high=1, n=5)],
    ids=["nan", "reversed"],
)
def test_malformed_effects_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        Effect(**bad)


def test_unknown_kind_and_bad_margin_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown claim kind"):
        decide(Effect(1, 0, 2, 50), "bigger")
    with pytest.raises(ValueError, match="margin"):
        decide(Effect(1, 0, 2, 50), "flat", margin=0)
