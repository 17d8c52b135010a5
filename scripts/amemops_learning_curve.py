"""Held-out learning curves of an AMemOps eval against the best constant answer.

Usage: ``python scripts/amemops_learning_curve.py RUNS/amemops_eval/NAME [RUNS/amemops_train/RUN ...]``.
From the eval's ``results.jsonl`` it prints, per model and checkpoint (seeds pooled per seed, then
averaged, as ``table.md``), the query-weighted accuracy (%) per query type, and a last row with
the best constant answer: per query type, the answer that is most often right on these very
queries for each attribute (gain, pan), so no constant policy scores more (absent queries: "none",
100%), then the same for gain and pan queries alone. For each training run
folder given it also prints the training query accuracy (%) and loss of ``metrics.csv``, averaged
over the logged rows of each window ending at one of the eval's checkpoints (with fresh streams
every training stream is new to the model, so this too is accuracy on unseen streams, from the
training split's recordings).
"""

from __future__ import annotations

import collections
import csv
import json
import sys
from pathlib import Path

from memgym.tasks.amemops.tables import accuracy_cell

TYPES = ("initial", "post_update", "absent", "retained")


def query_rows(folder: Path) -> list[dict]:
    """One dict per answered query: model, seed, checkpoint, stream and the query's fields."""
    rows = []
    with (folder / "results.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "queries" not in record:
                continue
            keys = {k: record[k] for k in ("model", "seed", "checkpoint", "stream")}
            rows.extend(keys | query for query in record["queries"])
    return rows


def constant_answer(rows: list[dict], query_type: str, attributes: tuple[str, ...] = ("gain", "pan")) -> float | None:
    """Best constant answer (%) on the queries of ``attributes`` and ``query_type`` of one model,
    seed and checkpoint (the streams are the same for all)."""
    first = rows[0]["model"], rows[0]["seed"], rows[0]["checkpoint"]
    of_type = [
        r
        for r in rows
        if (r["model"], r["seed"], r["checkpoint"]) == first
        and r["query_type"] == query_type
        and r["attribute"] in attributes
    ]
    if not of_type:
        return None
    best = 0
    for attribute in attributes:
        answers = collections.Counter(r["answer"] for r in of_type if r["attribute"] == attribute)
        best += max(answers.values(), default=0)
    return 100.0 * best / len(of_type)


def training_windows(run: Path, checkpoints: list[int]) -> list[tuple[int, float, float]]:
    """``(checkpoint, query accuracy %, loss)`` of ``run``'s ``metrics.csv`` averaged over each
    window of logged rows ``(previous checkpoint, checkpoint]``."""
    with (run / "metrics.csv").open(newline="", encoding="utf-8") as handle:
        metrics = [(int(r["step"]), float(r["query_accuracy"]), float(r["loss"])) for r in csv.DictReader(handle)]
    out, previous = [], 0
    for checkpoint in checkpoints:
        window = [m for m in metrics if previous < m[0] <= checkpoint]
        if window:
            n = len(window)
            out.append((checkpoint, 100.0 * sum(m[1] for m in window) / n, sum(m[2] for m in window) / n))
        previous = checkpoint
    return out


def main(folder: Path, runs: list[Path]) -> None:
    """Print the tables for the eval in ``folder`` and the training runs ``runs``."""
    rows = query_rows(folder)
    groups: dict[tuple[str, int], list[dict]] = collections.defaultdict(list)
    for r in rows:
        groups[(r["model"], r["checkpoint"])].append(r)
    print("| model | checkpoint | seeds | " + " | ".join(t.replace("_", "-") for t in TYPES) + " |")
    print("| --- | ---: | ---: |" + " ---: |" * len(TYPES))
    for (model, checkpoint), members in sorted(groups.items()):
        cells = [accuracy_cell([r for r in members if r["query_type"] == t]) for t in TYPES]
        shown = " | ".join("-" if c is None else f"{c:.1f}" for c in cells)
        print(f"| {model} | {checkpoint} | {len({r['seed'] for r in members})} | {shown} |")
    for label, attributes in (("", ("gain", "pan")), (", gain", ("gain",)), (", pan", ("pan",))):
        constants = [constant_answer(rows, t, attributes) for t in TYPES]
        shown = " | ".join("-" if c is None else f"{c:.1f}" for c in constants)
        print(f"| best constant answer{label} | | | {shown} |")
    checkpoints = sorted({int(r["checkpoint"]) for r in rows})
    for run in runs:
        print(f"\n{run.name}: training query accuracy (%) / loss, mean of the logged rows up to each checkpoint")
        for checkpoint, accuracy, loss in training_windows(run, checkpoints):
            print(f"  step <= {checkpoint}: {accuracy:.1f} / {loss:.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
