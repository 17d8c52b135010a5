"""Accuracy of an AMemOps eval by the number of other sources' events between a query's source's
last event and the query ("intervening" writes), and what the wrong answers were.

Usage: ``python scripts/amemops_intervening.py RUNS/amemops_eval/NAME [checkpoint]``. It regenerates
the eval's streams from the folder's ``config.yaml`` and reads ``results.jsonl``; for each model,
seed and operation (initial, updated) it prints accuracy with 0-1 and >= 2 intervening events (and with exactly 0 and 1),
and, of the wrong answers, how many gave the queried attribute's value of an intervening event,
against how many a wrong answer drawn uniformly from the other classes would (expected count).
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

from memgym.core.config import load_config
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.query_conditions import intervening_events
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.sources.factory import open_library
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig


def _intervening_values(stream: AMemOpsStream, query_id: str, attribute: str) -> tuple[int, set[int]]:
    """(count, queried-attribute classes) of the :func:`intervening_events` of query item ``query_id``."""
    item = next(i for i in stream.items if i.item_id == query_id)
    between = intervening_events(stream)[item.annotations.get("query_event", query_id)] or []
    return len(between), {e.attribute_class(attribute) for e in between}


def main(folder: Path, checkpoint: int | None) -> None:
    """Print the table for the eval in ``folder`` (all checkpoints, or ``checkpoint``)."""
    config = load_config(AMemOpsEvalConfig, path=folder / "config.yaml")
    stream_config = config.data.stream
    generator = StreamGenerator(stream_config, open_library(stream_config.library))
    classes = stream_config.attribute_values
    streams: dict[str, AMemOpsStream] = {}
    counts: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    for line in (folder / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        if checkpoint is not None and row["checkpoint"] != checkpoint:
            continue
        if row["stream"] not in streams:  # episode id amemops-<split>-s<seed>-<index>
            seed, index = row["stream"].rsplit("-", 2)[1:]
            streams[row["stream"]] = generator.generate(seed=int(seed[1:]), index=int(index))
        for q in row["queries"]:
            if q["operation"] not in ("initial", "updated"):
                continue
            n, values = _intervening_values(streams[row["stream"]], q["query"], q["attribute"])
            c = counts[(row["model"], row["seed"], row["checkpoint"], q["operation"])]
            for bin_ in ("0-1" if n < 2 else ">=2", "0" if n == 0 else "1" if n == 1 else ""):
                if bin_:
                    c[f"n {bin_}"] += 1
                    c[f"ok {bin_}"] += q["correct"]
            if not q["correct"]:
                c["wrong"] += 1
                c["intervening"] += q["prediction"] in values
                c["expected"] += len(values - {q["answer"]}) / (classes - 1)
    print(
        "| model | seed | step | operation | accuracy, 0-1 intervening | accuracy, >= 2 | accuracy, 0 | "
        "accuracy, 1 | wrong | an intervening value (expected) |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (model, seed, step, operation), c in sorted(counts.items()):
        acc = [
            f"{100 * c[f'ok {b}'] / c[f'n {b}']:.1f} ({c[f'n {b}']})" if c[f"n {b}"] else "-"
            for b in ("0-1", ">=2", "0", "1")
        ]
        print(
            f"| {model} | {seed} | {step} | {operation} | {acc[0]} | {acc[1]} | {acc[2]} | {acc[3]} | {c['wrong']} | "
            f"{c['intervening']} ({c['expected']:.0f}) |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None)
