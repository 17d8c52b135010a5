"""VoxMem in the quickstart: a cascade, a transcript and the oracle-tags probe at two history lengths.

    memgym generate voxmem items=N cells=[...] budgets=[8k,16k] asr.compute_type=int8 asr.window=fit \\
        asr.batch_turns=8 out=DIR/dataset
    memgym eval voxmem dataset=DIR/dataset models=[structured] memories=[cascaded,transcript,oracle_tags] \\
        asr.compute_type=int8 asr.window=fit asr.batch_turns=8 name=quickstart

``cascaded`` hears the history through the bundled Whisper tiny.en plus speaker, cue and sound
taggers, ``transcript`` through the recogniser alone, and ``oracle_tags`` reads the true words and
tags (a probe: what is left when perception is perfect); the offline ``structured`` reader answers
from each. The recogniser runs batched in int8 with fitted windows (about 17x the default's speed,
a few more word errors; docs/voxmem_eval.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from memgym.core.benchmark import ReportSection
from memgym.pipelines.quickstart.jobs import Job
from memgym.pipelines.quickstart.section import Section, markdown_part, relative

CELLS = ("semantics/TET", "speaker/IE", "paralinguistic/MSR", "sound/IE", "sound/AR")
"""One cell per evidence type, and an answer-refusal item."""
BUDGETS = ("8k", "16k")
MEMORIES = ("cascaded", "transcript", "oracle_tags")
FAST_ASR = ("asr.compute_type=int8", "asr.window=fit", "asr.batch_turns=8")
RUN = "quickstart"


def _dataset(folder: Path) -> Path:
    return folder / "dataset"


def _run(folder: Path) -> Path:
    return folder / "runs" / "eval-voxmem" / RUN


def jobs(folder: Path) -> list[Job]:
    """Build the items at both budgets, then evaluate the three memories on them."""
    dataset = _dataset(folder)
    generate = (
        f"items={len(CELLS)}",
        f"cells=[{','.join(CELLS)}]",
        f"budgets=[{','.join(BUDGETS)}]",
        "max_revisions=6",  # more redraws than a default build: each evidence type should pass the intelligibility gate
        *FAST_ASR,  # the gate hears as the eval's recogniser does: 40 CPU s where 5 beams in float32 take ~195
        f"out={dataset}",
    )
    evaluate = (
        f"dataset={dataset}",
        "models=[structured]",
        f"memories=[{','.join(MEMORIES)}]",
        *FAST_ASR,
        f"name={RUN}",
    )
    return [
        Job("voxmem generate", "voxmem", "generate", generate, folder / "runs"),
        Job("voxmem eval", "voxmem", "eval", evaluate, folder / "runs", after=("voxmem generate",)),
    ]


def report(folder: Path) -> ReportSection:
    """Accuracy per memory and budget with intervals, by evidence type, refusals; the figures."""
    run, qc = _run(folder), _qc(folder)
    results = run / "results.md"
    body = [
        f"{qc['items_kept']} of {qc['items_planned']} items (one per evidence type, and a refusal) at "
        f"{' and '.join(b.upper() for b in BUDGETS)} tokens, {qc['audio_hours'] * 60:.1f} min of synthetic "
        f"speech with background sounds, in `{_dataset(folder)}` (QC report `qc_report.md` beside it). "
        "The offline `structured` reader answers from what each memory hands it: `cascaded` (recogniser + "
        "speaker, cue and sound taggers + retrieval), `transcript` (recogniser only), `oracle_tags` (the "
        "true words and tags: a probe of the reader). Accuracy (%, 95% bootstrap intervals over items):",
        "",
        markdown_part(results, "accuracy per budget"),
        "By evidence type (what was said, who said it, how, what was audible):",
        "",
        markdown_part(results, "accuracy by evidence type and budget"),
        "Refusals (AR items should be refused; answerable ones should not):",
        "",
        markdown_part(results, "refusals"),
        f"All tables: `{results}`.",
    ]
    names = ("accuracy_vs_budget.png", "semantic_gap.png")
    plots = tuple(relative(run / name, folder) for name in names if (run / name).is_file())
    return ReportSection("VoxMem: cascade, transcript and oracle tags at two budgets", "\n".join(body), plots)


def _qc(folder: Path) -> dict:
    return json.loads((_dataset(folder) / "qc_report.json").read_text(encoding="utf-8"))


def scale(folder: Path) -> str:
    """``VoxMem: K items x 2 budgets (8K, 16K), structured reader``."""
    qc = _qc(folder)
    budgets = ", ".join(b.upper() for b in BUDGETS)
    return f"VoxMem: {qc['items_kept']} items x {len(BUDGETS)} budgets ({budgets}), offline structured reader"


SECTION = Section(
    "voxmem",
    f"spoken histories heard through a cascade (recogniser + taggers), a transcript and the true tags, "
    f"at {' and '.join(b.upper() for b in BUDGETS)} tokens: what was said against who said it, how, and "
    "what was audible",
    jobs,
    report,
    scale,
)
