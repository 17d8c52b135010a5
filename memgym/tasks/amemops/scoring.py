"""Scoring AMemOps query answers: one answer (the metrics of the ``attribute_query`` scorer, with
which ``memgym/AMemOps-v0`` scores by default), and the result rows of a played stream from the
env's scores (``memgym eval amemops``).

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
from memgym.datasets.amemops.records import AMemOpsStream

OPERATION_TO_QUERY_TYPE = {
    "initial": "initial",
    "updated": "post_update",
    "retained": "retained",
    "interference": "interference",
    "absent": "absent",
    "no_update": "no_update",
}
"""Generator ``operation`` annotation -> table query type."""


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


def stream_rows(stream: AMemOpsStream, scores: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The eval's per-query result rows of ``stream`` from the env's per-item ``scores``
    (:func:`score_query` plus ``item_id``): query id and type, attribute, answer, prediction,
    correct, previous-value answer, the item's conditions, the stream's recordings (and ``joint``)."""
    items = {item.item_id: item for item in stream.items}
    rows = []
    for score in scores:
        item = items[score["item_id"]]
        annotations = item.annotations
        rows.append(
            {
                "query": item.item_id,
                "query_type": OPERATION_TO_QUERY_TYPE[annotations["operation"]],
                "attribute": annotations["attribute"],
                "answer": int(score["answer"]),
                "prediction": int(score["predicted"]),
                "correct": int(score["correct"]),
                "previous_value": int(score["previous_value"]),
                **{k: annotations.get(k) for k in ("operation", "delay_s", "load", "earlier", "template")},
                "recordings": stream.recordings,
                **({"joint": True} if annotations.get("joint") else {}),
            }
        )
    return rows
