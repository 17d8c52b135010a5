"""``reference_words``: a lenient QA scorer, the share of the reference answer's words found in the
prediction (docs/plugins.md)."""

from __future__ import annotations

from typing import Any

from memgym.core.episode import TaskItem
from memgym.core.protocols import Scorer
from memgym.core.words import normalize_answer


class ReferenceWordsScorer(Scorer):
    """``{"reference_words": share 0..1, "reward": the same}``: the share of the normalised words
    of ``item.answer`` that the normalised prediction contains (1.0 for "the red mug on the table"
    against "red mug"); an empty reference scores 1.0 only for an empty prediction."""

    name = "reference_words"
    tasks = frozenset({"qa"})  # the tasks whose text answers it scores

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        reference = set(normalize_answer(str(item.answer)).split())
        said = set(normalize_answer("" if prediction is None else str(prediction)).split())
        share = len(reference & said) / len(reference) if reference else float(not said)
        return {"reference_words": share, "reward": share}
