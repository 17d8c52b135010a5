"""Dataset statistics in the paper's terms: items per task and content type, verbalised share.

:func:`dataset_statistics` returns plain tables (lists of row dicts) that
:func:`~memgym.core.results.to_markdown` prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from memgym.datasets.dialogmem.episode import DialogMemEpisode


def dataset_statistics(episodes: Iterable[DialogMemEpisode]) -> dict[str, list[dict[str, Any]]]:
    """Tables ``items`` (task x content type, with verbalised/updated shares), ``turns`` (per turn
    type) and ``filters`` (items and turns dropped per reason), plus ``summary``."""
    items: dict[tuple[str, str], list[dict[str, Any]]] = {}
    turns: Counter = Counter()
    filters: Counter = Counter()
    episodes = list(episodes)
    for episode in episodes:
        for item in episode.items:
            items.setdefault((item.task, item.annotations["content_type"]), []).append(item.annotations)
        turns.update(t.spec.turn_type for t in episode.dialogue)
        filters.update(episode.annotations.get("filtered_items", {}))
        filters["dropped_turns"] += episode.annotations.get("dropped_turns", 0)
    item_rows = []
    for (task, content_type), group in sorted(items.items()):
        row: dict[str, Any] = {"task": task, "content_type": content_type, "n": len(group)}
        if task == "qa":
            row["verbalised_%"] = 100.0 * sum(a["verbalised"] for a in group) / len(group)
            row["updated_%"] = 100.0 * sum(a["updated"] for a in group) / len(group)
        else:
            row["verbalised_%"] = None
            row["updated_%"] = None
        item_rows.append(row)
    qa = [a for (task, _), rows in items.items() if task == "qa" for a in rows]
    summary = {
        "episodes": len(episodes),
        "navigation_items": sum(len(r) for (t, _), r in items.items() if t == "navigation"),
        "qa_items": len(qa),
        "qa_verbalised_%": 100.0 * sum(a["verbalised"] for a in qa) / len(qa) if qa else None,
        "dialogue_turns": sum(turns.values()),
    }
    return {
        "summary": [summary],
        "items": item_rows,
        "turns": [{"turn_type": k, "n": v} for k, v in sorted(turns.items())],
        "filters": [{"reason": k, "n": v} for k, v in sorted(filters.items())],
    }
