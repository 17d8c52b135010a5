"""Scoring one AMemOps query answer (used by the env and by the ``attribute_query`` scorer).

A prediction may be the class of the asked head (``int``), a ``(gain, pan)`` pair / array, or a
mapping ``{"gain": g, "pan": p}``; only the asked head counts. Classes: ``0..N-1`` attribute
values, ``N`` = none, with ``N`` the stream's ``attribute_values`` (4 for audio, 16 symbolic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.core.episode import TaskItem
from memgym.core.errors import MemgymError


def predicted_class(item: TaskItem, prediction: Any) -> int:
    """The predicted class of the head ``item`` asks."""
    attribute = item.annotations["attribute"]
    if isinstance(prediction, Mapping):
        if attribute not in prediction:
            raise MemgymError(f"prediction for {item.item_id} has no '{attribute}' entry: {prediction!r}")
        return int(prediction[attribute])
    values = np.asarray(prediction).reshape(-1)
    if values.size == 1:
        return int(values[0])
    if values.size == 2:
        return int(values[0 if attribute == "gain" else 1])
    raise MemgymError(
        f"prediction for {item.item_id} must be a class, a (gain, pan) pair or a mapping, got {prediction!r}"
    )


def score_query(item: TaskItem, prediction: Any) -> dict[str, Any]:
    """``reward``/``correct`` plus the item's condition columns and whether the model gave the
    *previous* value of an updated attribute (``previous_value``)."""
    predicted = predicted_class(item, prediction)
    correct = predicted == int(item.answer)
    previous = item.annotations.get("previous_index")
    return {
        "reward": float(correct),
        "correct": correct,
        "predicted": predicted,
        "answer": int(item.answer),
        "previous_value": previous is not None and predicted == previous,
        **{k: item.annotations.get(k) for k in ("type", "operation", "attribute", "delay_s", "load", "earlier")},
    }
