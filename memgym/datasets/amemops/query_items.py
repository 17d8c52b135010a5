"""The task item of one AMemOps query: its answer (the queried attribute's class at the source's
latest earlier event, or "none") and the condition annotations the analyses split by."""

from __future__ import annotations

from memgym.core.episode import TaskItem
from memgym.datasets.amemops.config import FRAME_RATE
from memgym.datasets.amemops.records import StreamEvent


def query_item(
    query_id: str,
    query: StreamEvent,
    proposal: dict,
    attribute: str,
    operation: str,
    own: list[StreamEvent],
    none_index: int,
) -> TaskItem:
    """The task item of query ``query_id`` (event ``query``) asking ``attribute`` of ``proposal``'s
    source, from the source's earlier events ``own`` (time order; empty: absent, answer
    ``none_index``): the latest event's class, its delay, and the superseded value of an update."""
    previous = None
    if own:
        latest = own[-1]
        gain_index, pan_index = latest.attribute_class("gain"), latest.attribute_class("pan")
        answer = gain_index if attribute == "gain" else pan_index
        delay = (query.end_frame - latest.end_frame) / FRAME_RATE
        values = [e.attribute_class(attribute) for e in own]
        changed = [v for v in values[:-1] if v != answer]
        previous = changed[-1] if changed else None  # the superseded value, for updated queries
    else:
        gain_index = pan_index = answer = none_index
        delay = None
    return TaskItem(
        item_id=query_id,
        task="attribute_query",
        answer=answer,
        annotations={
            "type": proposal["type"],
            "operation": operation,
            "attribute": attribute,
            "identity": proposal["identity"],
            "group": query.group,
            "onset_frame": query.onset_frame,
            "end_frame": query.end_frame - 1,
            "delay_s": delay,
            "history_events": len(own),
            "gain_index": gain_index,
            "pan_index": pan_index,
            "previous_index": previous,
            **({"partner": proposal["partner"]} if "partner" in proposal else {}),
        },
    )
