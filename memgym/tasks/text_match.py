"""Offline text scorers: normalised exact match and SQuAD-style token F1.

Normalisation lower-cases, removes punctuation and the articles a/an/the, and collapses
whitespace, so ``"The red mug."`` matches ``"red mug"``. These are *not* LLM-match: they are
reported under their own names (``exact_match``, ``token_f1``) and serve when no judge model is
configured.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memgym.core.episode import TaskItem
from memgym.core.protocols import Scorer
from memgym.core.registry import register_scorer
from memgym.core.words import normalize_answer


def token_f1(prediction: str, reference: str) -> float:
    """Harmonic mean of token precision and recall after :func:`normalize_answer` (0..1)."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def _references(item: TaskItem) -> list[str]:
    answer = item.answer
    return [str(a) for a in answer] if isinstance(answer, (list, tuple)) else [str(answer)]


@register_scorer("exact_match")
class ExactMatchScorer(Scorer):
    """1.0 when the normalised prediction equals any normalised reference answer."""

    name = "exact_match"
    tasks = frozenset({"qa"})

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        hit = any(normalize_answer(prediction) == normalize_answer(r) for r in _references(item))
        return {"exact_match": float(hit), "reward": float(hit)}


@register_scorer("token_f1")
class TokenF1Scorer(Scorer):
    """Best token F1 of the prediction against the reference answers (0..1)."""

    name = "token_f1"
    tasks = frozenset({"qa"})

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        best = max(token_f1(str(prediction), r) for r in _references(item))
        return {"token_f1": best, "reward": best}
