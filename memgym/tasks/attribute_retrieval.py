"""``attribute_query`` scorer: AMemOps latest-attribute retrieval (gain / pan / none)."""

from __future__ import annotations

from typing import Any

from memgym.core.episode import TaskItem
from memgym.core.protocols import Scorer
from memgym.core.registry import register_scorer
from memgym.tasks.amemops.scoring import score_query


@register_scorer("attribute_query")
class AttributeQueryScorer(Scorer):
    """1.0 when the asked head's class is the answer; columns for per-type/operation accuracy.

    Predictions: the asked head's class, a ``(gain, pan)`` pair or ``{"gain": g, "pan": p}``.
    Metrics: ``reward``, ``correct``, ``previous_value`` (the model gave the superseded value)
    plus ``type``, ``operation``, ``attribute``, ``delay_s``, ``load``, ``earlier`` to group by.
    """

    name = "attribute_query"
    tasks = frozenset({"attribute_query"})

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        return score_query(item, prediction)
