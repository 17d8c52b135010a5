"""What one benchmark contributes to the quickstart: its jobs, and its report read from their outputs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from memgym.core.benchmark import ReportSection
from memgym.pipelines.quickstart.jobs import Job


@dataclasses.dataclass(frozen=True)
class Section:
    """One benchmark's part of the quickstart.

    Attributes:
        benchmark: registered benchmark name; its runs go under ``REPORT_DIR/<benchmark>/``.
        shows: what the section shows, printed before its jobs start.
        jobs: the jobs, given that folder (they resume when run again).
        report: the report section, read from the jobs' outputs in that folder; plot paths
            relative to the report folder.
        scale: one line saying the size it ran at (items, seeds, steps), from the outputs.
    """

    benchmark: str
    shows: str
    jobs: Callable[[Path], list[Job]]
    report: Callable[[Path], ReportSection]
    scale: Callable[[Path], str]


def markdown_part(path: Path, heading: str) -> str:
    """The part of the Markdown file ``path`` under ``## heading`` (to the next ``## ``), without
    the heading; the whole file when ``heading`` is empty (its first ``# `` title dropped)."""
    text = path.read_text(encoding="utf-8")
    if not heading:
        return re.sub(r"\A# [^\n]*\n+", "", text).strip() + "\n"
    match = re.search(rf"^## {re.escape(heading)}[^\n]*\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M)
    if match is None:
        raise ValueError(f"{path} has no section '## {heading}'")
    return match.group(1).strip() + "\n"


def relative(path: Path, folder: Path) -> str:
    """``path`` relative to the report folder (the parent of a section's ``folder``)."""
    return str(path.relative_to(folder.parent))
