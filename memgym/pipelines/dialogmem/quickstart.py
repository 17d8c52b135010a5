"""DialogMem's part of ``memgym run quickstart``: a small generate -> eval of the ``dialogue``
memory and the ``oracle`` probe with the structured reasoner."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from memgym.core.benchmark import JobArgs
from memgym.core.episode import Dataset
from memgym.core.results import RunStore, to_markdown
from memgym.datasets.dialogmem.statistics import dataset_statistics
from memgym.pipelines.dialogmem.comparison import comparison_rows
from memgym.pipelines.dialogmem.evaluation import evaluate
from memgym.pipelines.dialogmem.generation import generate

QUICKSTART_GENERATE = (
    "scenes=2",
    "house.max_rooms=5",
    "traversal.min_goals=3",
    "traversal.max_goals=4",
    "camera.width=64",
    "camera.height=48",
)


def quickstart_generate_eval(report_dir: Path, args: JobArgs) -> tuple[str, tuple[str, ...]]:
    """A small generate -> eval of the ``dialogue`` memory and the ``oracle`` probe with the
    structured reasoner; returns (markdown, plot paths relative to ``report_dir``).

    Writes the dataset under ``report_dir/dialogmem/data`` and the run (one folder per memory
    and the comparison) under ``report_dir/dialogmem/runs/eval-dialogmem/quickstart``; everything
    resumes when run again.
    """
    folder = report_dir / "dialogmem"
    folder.mkdir(parents=True, exist_ok=True)
    dataset = folder / "data" / "episodes.jsonl"
    if not dataset.is_file():
        generate(dataclasses.replace(args, overrides=QUICKSTART_GENERATE, config_path=None, out=dataset))
    overrides = (
        f"dataset={dataset}",
        "memories=[dialogue,oracle]",
        "camera.width=64",
        "camera.height=48",
        "execute_navigation=true",
        "name=quickstart",
    )
    job = dataclasses.replace(args, overrides=overrides, config_path=None, out=None, runs_dir=folder / "runs")
    run = evaluate(job)
    rows = {memory: RunStore(run / memory, config_digest="").rows() for memory in ("dialogue", "oracle")}
    comparison: dict[str, dict[str, Any]] = {}
    for cell in comparison_rows(rows):  # the defaults of DialogMemEvalConfig: as in comparison.md
        if cell["slice"] == "overall":
            comparison.setdefault(cell["memory"], {"memory": cell["memory"]})[f"{cell['task']} {cell['metric']}"] = (
                cell["mean"]
            )
    stats = dataset_statistics(Dataset.load(dataset))
    plot = run / "comparison.png"
    markdown = "\n".join(
        [
            f"Small dataset `{dataset}` (2 generated houses, template dialogue):",
            "",
            to_markdown(stats["summary"]),
            to_markdown(stats["items"]),
            "Evaluation with the offline `structured` reasoner: the `dialogue` memory (raw transcript; it stores "
            "no poses, so it cannot localise) against the `oracle` probe (ground-truth facts and locations, an "
            "upper bound that checks items and scoring). QA by token F1 (no judge model configured), "
            "navigation by geodesic success, execution success and SPL (%):",
            "",
            to_markdown(list(comparison.values()), digits=1),
            f"Per content type, verbalised and updated, with 95% bootstrap intervals (`{run}/comparison.md`):",
            "",
            (run / "comparison.md").read_text(encoding="utf-8").split("\n", 1)[1],
        ]
    )
    return markdown, (str(plot.relative_to(report_dir)),)
