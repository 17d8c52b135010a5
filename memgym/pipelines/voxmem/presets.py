"""Named presets of ``memgym generate voxmem`` / ``memgym eval voxmem`` (``preset=decisive``).

``decisive``: the scale at which every VoxMem claim can be decided (docs/voxmem_eval.md,
*Decisive scale*). :data:`DECISIVE_ITEMS` items over the 15 cells and semantics IE (25 per
cell, so every evidence type and every operation has 100 items: a 95 % interval of an accuracy
is at most 2 x 1.96 x sqrt(0.25 / 100) = 19.6 points wide, whatever the accuracy), at 8K and 64K
tokens, built with the intelligibility gate on the fast recogniser settings (int8, fitted
windows, 8 turns a batch) and evaluated with the offline reader on the cascade, its
evidence-only probe, the true-tag probe and the transcript, the recogniser batched per history
and one turn cache shared by both budgets and every memory. Both steps resume: the build reuses
every rendered turn and transcript in its folder, the evaluation every finished row and cached
turn. Any key given beside ``preset=`` wins (``items=16 out=... name=...`` for a small run).
"""

from __future__ import annotations

from memgym.core.presets import expand_preset
from memgym.datasets.voxmem.taxonomy import BUILDABLE_CELLS, cell_name

DECISIVE_ITEMS = 25 * len(BUILDABLE_CELLS)
DECISIVE_DATASET = "runs/voxmem/decisive"
DECISIVE_MEMORIES = ("cascaded", "cascaded_evidence_only", "oracle_tags", "transcript")
FAST_ASR = ("asr.compute_type=int8", "asr.window=fit", "asr.batch_turns=8")

PRESETS: dict[str, dict[str, tuple[str, ...]]] = {
    "decisive": {
        "generate": (
            f"items={DECISIVE_ITEMS}",
            f"cells=[{','.join(cell_name(*c) for c in BUILDABLE_CELLS)}]",
            "budgets=[8k,64k]",
            "seed=0",
            f"out={DECISIVE_DATASET}",
            *FAST_ASR,
        ),
        "eval": (
            f"dataset={DECISIVE_DATASET}",
            "models=[structured]",
            f"memories=[{','.join(DECISIVE_MEMORIES)}]",
            "budgets=[8k,64k]",
            *FAST_ASR,
            "asr.batch_scope=history",
            f"turn_cache={DECISIVE_DATASET}/turn_cache.jsonl",
            "name=decisive",
        ),
    },
}
"""Preset name -> job (``generate`` / ``eval``) -> overrides."""


def apply_preset(overrides: tuple[str, ...], job: str) -> tuple[tuple[str, ...], str]:
    """``overrides`` with ``preset=NAME`` replaced by the preset's overrides for ``job`` (first, so
    the command line's keys win; ``memory=NAME`` replaces the preset's ``memories``).

    Raises:
        ConfigError: an unknown preset, or more than one ``preset=`` key.
    """
    presets = {name: jobs[job] for name, jobs in PRESETS.items()}
    return expand_preset(overrides, presets, {"memories": frozenset({"memory"})})
