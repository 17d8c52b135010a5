"""The scorer contract: what every registered scorer must do for an env and an evaluation to use it.

A scorer (:class:`~memgym.core.protocols.Scorer`) turns one answer to one task item into the
metrics an env returns in ``info["score"]`` (its ``"reward"`` is the step's reward) and an
evaluation writes into its result rows. Given cases (:class:`ScorerCase`: an item, the answer a
perfect agent gives and a wrong one), it must:

1. **register**: subclass :class:`~memgym.core.protocols.Scorer`;
2. **score**: return a dict of metric name -> value with a finite float ``"reward"`` in [0, 1]
   and JSON-ready values (result rows are JSON lines);
3. **tell right from wrong**: the gold answer's reward is at least the wrong one's, and above it
   for some case;
4. **be a function**: the same answer scores the same whatever was scored before (cases scored
   again in reverse order), and scoring changes neither the item nor the answer.

:func:`check_scorer` runs them all; :class:`ScorerContract` is the mixin form.

>>> from memgym.core.episode import TaskItem
>>> from memgym.tasks.text_match import ExactMatchScorer
>>> item = TaskItem(item_id="q0", task="qa", prompt="Which mug is Amelia's?", answer="the red mug")
>>> check_scorer(ExactMatchScorer(), [ScorerCase(item, gold="the red mug", wrong="the blue mug")])
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any

from memgym.core.episode import TaskItem
from memgym.core.protocols import Scorer
from memgym.testing.compare import difference


@dataclasses.dataclass(frozen=True)
class ScorerCase:
    """One task item with the answer a perfect agent gives (``gold``) and a ``wrong`` one, each
    in the form the env's action space takes for the item's task."""

    item: TaskItem
    gold: Any
    wrong: Any


def check_scorer(scorer: Scorer, cases: Sequence[ScorerCase]) -> None:
    """Run every check of the scorer contract on ``scorer`` over ``cases``.

    Raises:
        AssertionError: the first check it fails, naming the scorer, the item and what went wrong.
    """
    name = getattr(scorer, "registered_name", type(scorer).__name__)

    def fail(problem: str) -> None:
        raise AssertionError(f"scorer '{name}': {problem}")

    if not isinstance(scorer, Scorer):
        fail(f"is a {type(scorer).__name__}, not a memgym.core.protocols.Scorer")
    if not cases:
        fail("the contract needs at least one case")
    answers = [(case.item, answer) for case in cases for answer in (case.gold, case.wrong)]
    first = [_score(scorer, item, answer, fail) for item, answer in answers]
    again = [_score(scorer, item, answer, fail) for item, answer in reversed(answers)][::-1]
    for (item, answer), one, two in zip(answers, first, again):
        found = difference(one, two)
        if found is not None:
            fail(f"item '{item.item_id}' answered {answer!r} scored differently the second time, {found}")
    rewards = [(first[2 * i]["reward"], first[2 * i + 1]["reward"]) for i in range(len(cases))]
    for case, (gold, wrong) in zip(cases, rewards):
        if gold < wrong:
            fail(f"item '{case.item.item_id}': the gold answer's reward {gold} is below the wrong answer's {wrong}")
    if all(gold == wrong for gold, wrong in rewards):
        fail("no case rewards the gold answer above the wrong one")


def _score(scorer: Scorer, item: TaskItem, answer: Any, fail: Any) -> dict[str, Any]:
    """One checked score (a dict with a finite ``reward`` in [0, 1], JSON-ready, inputs unchanged)."""
    item_before, answer_before = copy.deepcopy(item), copy.deepcopy(answer)
    score = scorer.score(item, answer)
    where = f"item '{item.item_id}' answered {answer!r}"
    if not isinstance(score, dict) or not all(isinstance(key, str) for key in score):
        fail(f"{where}: score returned {type(score).__name__}, not a dict of metric name -> value")
    reward = score.get("reward")
    if not isinstance(reward, int | float) or isinstance(reward, bool) or not math.isfinite(reward):
        fail(f"{where}: the score has no finite number 'reward' (the env's step reward): {score}")
    if not 0.0 <= reward <= 1.0:
        fail(f"{where}: reward {reward} is outside [0, 1]")
    try:
        json.dumps(score, allow_nan=True)
    except (TypeError, ValueError) as exc:
        fail(f"{where}: the score is not JSON-ready ({exc}): {score}")
    for before, after, what in ((item_before, item, "item"), (answer_before, answer, "answer")):
        found = difference(before, after)
        if found is not None:
            fail(f"{where}: scoring changed the {what}, {found}")
    return score


class ScorerContract:
    """The scorer contract as a test class to mix in: implement :meth:`make_scorer` and
    :meth:`cases`::

        from memgym.testing import ScorerCase, ScorerContract

        class TestContains(ScorerContract):
            def make_scorer(self):
                return SCORERS.get("contains")()

            def cases(self):
                item = TaskItem(item_id="q0", task="qa", answer="red mug")
                return [ScorerCase(item, gold="the red mug", wrong="a blue cup")]
    """

    def make_scorer(self) -> Scorer:
        """The scorer under test."""
        raise NotImplementedError

    def cases(self) -> Sequence[ScorerCase]:
        """Items with a gold and a wrong answer."""
        raise NotImplementedError

    def test_scorer_contract(self) -> None:
        check_scorer(self.make_scorer(), self.cases())
