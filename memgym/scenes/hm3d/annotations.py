"""HM3D annotation files: ``X.semantic.txt`` (instance id, colour, category, region) and
GOAT-Bench-style object goals (``X.objects.json.gz``); regions from the objects' positions."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path
from typing import Any

from memgym.core.errors import MemgymError
from memgym.core.paths import require_file
from memgym.core.textfiles import read_text
from memgym.scenes.objects import Region, SceneObject, ViewPoint

HEADER = "HM3D Semantic Annotations"


def read_semantic_txt(path: Path) -> list[tuple[int, str, str, int]]:
    """Rows ``(instance id, HEX colour, category, region id)`` of an HM3D ``semantic.txt``."""
    require_file(path, "HM3D semantic annotations", "a semantic.txt file")
    rows = []
    lines = read_text(path).splitlines()
    for number, row in enumerate(csv.reader(lines), start=1):
        if not row or (number == 1 and row[0].strip() == HEADER):
            continue
        try:
            instance, color, category, region = int(row[0]), row[1].strip().upper(), row[2], int(row[3])
            int(color, 16)
            if len(color) != 6 or len(row) != 4:
                raise ValueError
        except (ValueError, IndexError):
            raise MemgymError(
                f'{path}:{number}: expected \'id,HEXCOLOR,"category",region_id\' (e.g. 12,4B8AF2,"chair",3), got {lines[number - 1]!r}'
            ) from None
        rows.append((instance, color, category, region))
    if not rows:
        raise MemgymError(f"{path}: no annotation rows")
    return rows


def regions_of(objects: list[SceneObject]) -> list[Region]:
    by_region: dict[int, list[SceneObject]] = {}
    for obj in objects:
        if obj.region_id >= 0:
            by_region.setdefault(obj.region_id, []).append(obj)
    out = []
    for rid, objs in sorted(by_region.items()):
        xs = [o.position[0] for o in objs]
        zs = [o.position[2] for o in objs]
        out.append(Region(region_id=rid, name=f"region {rid}", bounds=(min(xs), min(zs), max(xs), max(zs))))
    return out


_TRAILING_INT = re.compile(r"(\d+)$")


def read_goals(path: Path, *, required: bool) -> list[SceneObject]:
    if not path.is_file():
        if required:
            require_file(path, "object annotations", "a JSON file")
        return []
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError) as exc:  # ValueError: JSON and UTF-8 decoding errors
        raise MemgymError(f"{path}: not valid (gzipped) UTF-8 JSON ({exc})") from None
    goals = None
    if isinstance(data, dict):  # GOAT-Bench: "goals"; HM3D ObjectNav: "goals_by_category"
        goals = data.get("goals", data.get("goals_by_category"))
    if not isinstance(goals, dict):
        raise MemgymError(f"{path}: expected a GOAT-Bench goals file with a 'goals' (or 'goals_by_category') mapping")
    objects, seen = [], set()
    for key, entries in goals.items():
        for n, entry in enumerate(entries):
            goal = _goal_object(entry, key, f"{path}: goals[{key!r}][{n}]")
            if goal.object_id not in seen:
                seen.add(goal.object_id)
                objects.append(goal)
    return objects


def _goal_object(entry: Any, key: str, where: str) -> SceneObject:
    """The :class:`SceneObject` of one goals entry (its category from ``key`` when it names none).

    Raises:
        MemgymError: a missing or malformed field, named with ``where``.
    """
    try:
        object_id = str(entry["object_id"])
        category = str(entry.get("object_category") or key.rsplit("_", 1)[-1])
        position = tuple(float(c) for c in entry["position"])
        sid = entry.get("semantic_id")
        if sid is None:
            match = _TRAILING_INT.search(object_id)
            if match is None:
                raise KeyError("semantic_id (or an object_id ending in the instance id)")
            sid = int(match.group(1))
        views = tuple(
            ViewPoint(
                position=tuple(float(c) for c in vp["agent_state"]["position"]),
                rotation=tuple(float(c) for c in vp["agent_state"]["rotation"]),
            )
            for vp in entry.get("view_points", [])
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise MemgymError(f"{where}: missing or malformed field {exc}") from None
    if len(position) != 3:
        raise MemgymError(f"{where}: position must have 3 numbers")
    return SceneObject(
        object_id=object_id,
        semantic_id=int(sid),
        category=category,
        position=position,
        size=(0.0, 0.0, 0.0),
        view_points=views,
        lang_desc=str(entry.get("lang_desc") or ""),
        attributes={k: str(v) for k, v in (entry.get("attributes") or {}).items()},
    )
