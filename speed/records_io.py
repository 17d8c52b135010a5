"""Episode JSONL round trip (typed records) vs plain ``json`` of the same dicts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from memgym.core.episode import Dataset, Episode, TaskItem
from speed.harness import report, time_best


def _episodes(n: int) -> list[Episode]:
    return [
        Episode(
            episode_id=f"ep{i}",
            benchmark="bench",
            items=tuple(TaskItem(item_id=f"q{j}", task="qa", answer=j, annotations={"type": "x"}) for j in range(10)),
        )
        for i in range(n)
    ]


def main(argv: list[str]) -> None:
    episodes = _episodes(2000)
    dicts = [e.to_dict() for e in episodes]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "eps.jsonl"
        plain = Path(tmp) / "plain.jsonl"

        def typed() -> None:
            Dataset(episodes).save(path)
            Dataset.load(path)

        def baseline() -> None:
            plain.write_text("".join(json.dumps(d) + "\n" for d in dicts))
            [json.loads(line) for line in plain.read_text().splitlines()]

        report(
            "records_io: episodes written + read back",
            time_best("memgym Dataset save/load", typed, units=len(episodes), unit_name="episodes"),
            time_best("json.dumps/loads of dicts", baseline, units=len(episodes), unit_name="episodes"),
        )
