"""Dataset statistics in the paper's terms: items per task and content type, verbalised share (per
content type in ``items``), the share of instructions naming their target only by dialogue
(``navigation_dialogue_only_%``), and how much of navigation the category alone (or category and
room) already decides.

:func:`dataset_statistics` returns plain tables (lists of row dicts) that
:func:`~memgym.core.results.to_markdown` prints. :func:`category_shortcuts` measures, per
navigation item, whether its target is the only *observed* object of its category in the episode
(``category_unique``) and whether it is the only observed one of its category in its room
(``category_room_unique``): items for which a memory needs no more than the category, or the
category and the room, to pick the right object.
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
    item_rows = [_item_row(task, content_type, group) for (task, content_type), group in sorted(items.items())]
    summary = _summary(episodes, items, turns)
    return {
        "summary": [summary],
        "items": item_rows,
        "turns": [{"turn_type": k, "n": v} for k, v in sorted(turns.items())],
        "filters": [{"reason": k, "n": v} for k, v in sorted(filters.items())],
    }


def _item_row(task: str, content_type: str, group: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``items`` row of one task and content type (``group``: its items' annotations); the
    verbalised and updated shares are of QA items only."""
    qa = task == "qa"
    return {
        "task": task,
        "content_type": content_type,
        "n": len(group),
        "verbalised_%": 100.0 * sum(a["verbalised"] for a in group) / len(group) if qa else None,
        "updated_%": 100.0 * sum(a["updated"] for a in group) / len(group) if qa else None,
    }


def _summary(
    episodes: list[DialogMemEpisode], items: dict[tuple[str, str], list[dict[str, Any]]], turns: Counter
) -> dict[str, Any]:
    """The ``summary`` row: counts, the QA verbalised share and the navigation shortcuts."""
    qa = [a for (task, _), rows in items.items() if task == "qa" for a in rows]
    shortcuts = [category_shortcuts(e) for e in episodes]
    navigation = [row for rows in shortcuts for row in rows["items"]]
    return {
        "episodes": len(episodes),
        "navigation_items": sum(len(r) for (t, _), r in items.items() if t == "navigation"),
        "qa_items": len(qa),
        "qa_verbalised_%": 100.0 * sum(a["verbalised"] for a in qa) / len(qa) if qa else None,
        "dialogue_turns": sum(turns.values()),
        "observed_objects_per_episode": _mean([s["observed_objects"] for s in shortcuts]),
        "observed_categories_per_episode": _mean([s["observed_categories"] for s in shortcuts]),
        "navigation_category_unique_%": _percent([r["category_unique"] for r in navigation]),
        "navigation_category_room_unique_%": _percent([r["category_room_unique"] for r in navigation]),
        "navigation_dialogue_only_%": _percent(
            [not i.annotations.get("names_category", True) for e in episodes for i in e.items if i.task == "navigation"]
        ),
    }


def category_shortcuts(episode: DialogMemEpisode) -> dict[str, Any]:
    """Observed objects and categories of ``episode`` and, per navigation item, whether its target
    is the only observed object of its category (``category_unique``) or of its category in its
    room (``category_room_unique``; an object without a named room counts as its own room only
    when it is category-unique)."""
    observed = {o.object_id: o.category for o in episode.traversal.observations}
    rooms = {m.object_id: m.value for m in episode.memory if m.key == "room" and m.version == 0}
    per_category = Counter(observed.values())
    per_room = Counter((c, rooms[o]) for o, c in observed.items() if o in rooms)
    rows = []
    for item in episode.items:
        if item.task != "navigation":
            continue
        target = item.annotations["object_id"]
        category = observed.get(target, item.annotations["category"])
        unique = per_category[category] <= 1
        room_unique = unique or (target in rooms and per_room[(category, rooms[target])] <= 1)
        rows.append({"item_id": item.item_id, "category_unique": unique, "category_room_unique": room_unique})
    return {"observed_objects": len(observed), "observed_categories": len(per_category), "items": rows}


def _percent(flags: list[bool]) -> float | None:
    return 100.0 * sum(flags) / len(flags) if flags else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
