"""DialogMem requests reworded by someone who never saw the templates, against the oracle's facts.

``data/dialogmem_reworded.json`` (built by ``data/make_dialogmem_reworded.py``) holds 409 items of
eight generated episodes, each in the generator's wording (``template``) and in an independently
written one (``written``), with the oracle probe's facts of every episode. :func:`scores` runs the
offline structured reasoner on them, told each item's task as the env tells it; the written
wordings are split into a ``tune`` portion (the only one whose failures were looked at) and a
``heldout`` portion (never used to tune the reader).

Print the table (the numbers in docs/dialogmem.md)::

    PYTHONPATH=$PWD:tests/support python -m reworded_cases
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from memgym.backends.structured import Fact, format_fact
from memgym.core.chat import Message
from memgym.core.task_line import request_line
from memgym.core.words import normalize_answer
from memgym.pipelines.structured_reasoner import StructuredReasoner

REWORDED = Path(__file__).parent / "data" / "dialogmem_reworded.json"
WORDINGS = ("template", "tune", "heldout")


@cache
def load() -> dict:
    """The data file."""
    return json.loads(REWORDED.read_text(encoding="utf-8"))


@cache
def memory_text(episode_id: str) -> str:
    """The oracle's fact lines of an episode."""
    data = load()
    types = data["key_types"]
    lines = [
        format_fact(Fact(object_id, category, types[key], key, value))
        for object_id, (category, keys) in data["episodes"][episode_id].items()
        for key, value in keys.items()
    ]
    return "\n".join(lines)


def expected(item: dict) -> str:
    """The reply that answers ``item``: its answer, or ``OBJECT <target>`` for an instruction."""
    return item["answer"] if item["task"] == "qa" else f"OBJECT {item['object_id']}"


def reply(item: dict, text: str) -> str:
    """The structured reasoner's reply to ``text`` as ``item``'s request, given its episode's facts."""
    memory = memory_text(item["item_id"].split("/")[0])
    line = request_line(item["task"], text)
    return StructuredReasoner().generate([Message.text("user", f"Memory:\n{memory}\n{line}")])


def outcomes(wording: str) -> list[tuple[dict, str, bool]]:
    """``(item, reply, right)`` for every item in ``wording`` (``template``: every item in the
    generator's words; ``tune`` / ``heldout``: that portion's written words)."""
    found = []
    for item in load()["items"]:
        if wording != "template" and item["portion"] != wording:
            continue
        answer = reply(item, item["template" if wording == "template" else "written"])
        found.append((item, answer, normalize_answer(answer) == normalize_answer(expected(item))))
    return found


def scores() -> dict[tuple[str, str], tuple[float, int]]:
    """(task, wording) -> (percent answered right, items)."""
    table = {}
    for wording in WORDINGS:
        rows = outcomes(wording)
        for task in ("qa", "navigation"):
            right = [ok for item, _, ok in rows if item["task"] == task]
            table[task, wording] = (100.0 * sum(right) / max(1, len(right)), len(right))
    return table


if __name__ == "__main__":
    print("| task | template | written, tune | written, held out |")
    print("| --- | --- | --- | --- |")
    results = scores()
    for task in ("qa", "navigation"):
        cells = [f"{results[task, w][0]:.1f}% of {results[task, w][1]}" for w in WORDINGS]
        print(f"| {task} | " + " | ".join(cells) + " |")
