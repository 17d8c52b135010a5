"""Builds ``dialogmem_reworded.json``: DialogMem items with independently written wordings and the
oracle's facts of their episodes, stored so the test needs neither the generator nor the dataset.

Inputs (kept out of the repository): ``episodes.jsonl`` from ``memgym generate dialogmem scenes=8
first_house_seed=900 seed=900`` (commit 30d04f1); ``meanings.json`` (per item: its task, object kind,
identifying cues and their values, the asked aspect and answer, and its portion, ``tune`` or
``heldout``, drawn before anything was written); ``written.json`` (``[{"n", "text"}]``, one wording
per item of meanings' ``qa`` then ``navigation`` lists, by a writer shown only each item's meaning and
answer, never the templates or the code). Items whose meaning named a superseded value of a cue (an
owner or usage that was later updated, so the writer described another state than the item's) are
left out and listed under ``excluded``.

Run from the repository root::

    PYTHONPATH=$PWD python tests/support/data/make_dialogmem_reworded.py EPISODES MEANINGS WRITTEN
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memgym.datasets.dialogmem.content import KEY_TYPE
from memgym.datasets.dialogmem.episode import observation_log
from memgym.datasets.dialogmem.task_specs import available_content
from memgym.pipelines.dialogmem.evaluation import load_episodes

OUT = Path(__file__).with_name("dialogmem_reworded.json")


def main(episodes_path: str, meanings_path: str, written_path: str) -> None:
    episodes, _ = load_episodes(Path(episodes_path))
    meanings = json.loads(Path(meanings_path).read_text(encoding="utf-8"))
    written = {row["n"]: row["text"] for row in json.loads(Path(written_path).read_text(encoding="utf-8"))}
    facts, items_by_id = {}, {}
    for episode in episodes:
        content = available_content(episode.memory, set(observation_log(episode.traversal).first_seen()))
        facts[episode.episode_id] = {
            object_id: [next(iter(keys.values())).category, {k: item.value for k, item in keys.items()}]
            for object_id, keys in sorted(content.items())
        }
        items_by_id.update({item.item_id: (episode.episode_id, item) for item in episode.items})
    items, excluded = [], []
    for n, meaning in enumerate(meanings["qa"] + meanings["navigation"]):
        episode_id, item = items_by_id[meaning["item_id"]]
        notes = item.annotations
        held = facts[episode_id][notes["object_id"]][1]
        stale = [c["aspect"] for c in meaning["identify_it_by"] if held.get(c["aspect"]) != c["value"]]
        if stale:
            excluded.append({"item_id": item.item_id, "reason": f"meaning named a superseded {', '.join(stale)}"})
            continue
        items.append(
            {
                "item_id": item.item_id,
                "task": item.task,
                "portion": meaning["portion"],
                "object_id": notes["object_id"],
                "cue_keys": notes["cue_keys"],
                "answer_key": notes.get("answer_key"),
                "answer": item.answer if item.task == "qa" else None,
                "template": item.prompt,
                "written": written[n],
            }
        )
    used = {i["item_id"].split("/")[0] for i in items}
    data = {
        "_about": (
            "DialogMem items of `memgym generate dialogmem scenes=8 first_house_seed=900 seed=900` (commit 30d04f1): "
            "the generator's wording (template) and one written by a helper shown only the item's meaning and "
            "answer (written); portion: heldout items are never used to tune the reader. episodes: the oracle "
            "probe's facts (object id -> [category, {key: latest value}]). Built by make_dialogmem_reworded.py."
        ),
        "key_types": {k: KEY_TYPE[k] for k in sorted(KEY_TYPE)},
        "excluded": excluded,
        "episodes": {e: facts[e] for e in sorted(used)},
        "items": items,
    }
    OUT.write_text(compact_json(data), encoding="utf-8")
    print(f"{OUT}: {len(items)} items ({len(excluded)} excluded), {len(used)} episodes")


def compact_json(data: dict) -> str:
    """JSON with one line per episode object and per item (a reviewable diff, a small file)."""

    def one(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = ["{"]
    for key in ("_about", "key_types", "excluded"):
        lines.append(f"{one(key)}: {one(data[key])},")
    lines.append('"episodes": {')
    episodes = list(data["episodes"].items())
    for e, (episode_id, objects) in enumerate(episodes):
        lines.append(f"{one(episode_id)}: {{")
        rows = [f"{one(o)}: {one(v)}" for o, v in objects.items()]
        lines.append(",\n".join(rows))
        lines.append("}" + ("," if e < len(episodes) - 1 else ""))
    lines.append("},")
    lines.append('"items": [')
    lines.append(",\n".join(one(item) for item in data["items"]))
    lines.append("]")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main(*sys.argv[1:4])
