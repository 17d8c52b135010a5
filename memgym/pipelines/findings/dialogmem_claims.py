"""The DialogMem findings (:class:`~memgym.pipelines.findings.claim.Claim` each)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memgym.pipelines.findings import measures as m
from memgym.pipelines.findings.claim import Claim, Measured, Outcome, Tables, mean_text, runs_of
from memgym.pipelines.findings.verdicts import ClaimKind

EVAL_DM = "memgym eval dialogmem dataset=D memories=[{}]"
SWEEP_DM = "memgym eval dialogmem dataset=D sweep=link_quality"


def _task(task: str) -> m.Select:
    return lambda r: r["task"] == task


def dm_pair(plus: str, minus: str, task: str, run_hint: str) -> Callable[[Tables], Outcome]:
    """``plus - minus`` on ``task`` items both scored."""

    def measure(t: Tables) -> Outcome:
        effect = m.paired_effect(t.dialogmem, plus, minus, f"dm|{plus}|{minus}|{task}", _task(task))
        if effect is None:
            return f"needs {plus} and {minus} on the same {task} items: {run_hint}"
        a, b = (m.item_scores(t.dialogmem, system, _task(task)) for system in (minus, plus))
        common = set(a) & set(b)  # the means of the items the effect pairs
        ours = f"{minus} {np.mean([a[i] for i in common]):.1f} -> {plus} {np.mean([b[i] for i in common]):.1f}"
        return Measured(effect, ours, runs_of(t.dialogmem, plus, minus))

    return measure


def dm_verbalised_gain(plus: str, minus: str) -> Callable[[Tables], Outcome]:
    """How much more appending dialogue gains on verbalised QA answers than on the others."""

    def measure(t: Tables) -> Outcome:
        verbal = lambda r: r["task"] == "qa" and r["verbalised"] is True  # noqa: E731
        silent = lambda r: r["task"] == "qa" and r["verbalised"] is False  # noqa: E731
        effect = m.gain_interaction(t.dialogmem, plus, minus, verbal, silent, f"dm|verbalised|{plus}|{minus}")
        if effect is None:
            return f"needs {plus} and {minus} on verbalised and other QA items: " + EVAL_DM.format(f"{minus},{plus}")
        return Measured(
            effect, f"gain of {plus} over {minus}, verbalised minus other", runs_of(t.dialogmem, plus, minus)
        )

    return measure


def dm_updated_social() -> Callable[[Tables], Outcome]:
    system = "3dmem+dialogue"

    def measure(t: Tables) -> Outcome:
        fresh = lambda r: r["task"] == "qa" and r["content_type"] == "social" and not r["updated"]  # noqa: E731
        stale = lambda r: r["task"] == "qa" and r["content_type"] == "social" and r["updated"]  # noqa: E731
        effect = m.group_effect(t.dialogmem, system, fresh, stale, "dm|updated")
        if effect is None:
            return f"needs {system} on social QA items with and without updated facts: " + EVAL_DM.format(system)
        ours = f"not updated {mean_text(t.dialogmem, system, fresh)} vs updated {mean_text(t.dialogmem, system, stale)}"
        return Measured(effect, ours, runs_of(t.dialogmem, system))

    return measure


def by_rules(reason: str, *systems: str, when: m.Select | None = None) -> Callable[[Tables], str]:
    """A ``by_construction`` rule: ``reason`` when every row of ``systems`` in the runs was answered
    by the offline ``structured`` reasoner (and, with ``when``, every such row passes it); "" else."""

    def rule(t: Tables) -> str:
        rows = [r for r in t.dialogmem if r["system"] in systems]
        if not rows or any(r["reasoner"] != "structured" for r in rows):
            return ""
        return reason if when is None or all(when(r) for r in rows) else ""

    return rule


def _names_category(row: dict) -> bool:
    return row["task"] != "navigation" or row["names_category"]


APPENDED_NAVIGATION = (
    "every instruction of these runs names its target's category and the structured reasoner reads "
    "unlinked transcript lines only as facts about a category, so the transcript cannot change which "
    "entry it picks (datasets with dialogue-only instructions, construction.dialogue_navigation_share, "
    "measure it)"
)
APPENDING_BEATS_LINKING = (
    "the structured reasoner answers from every transcript line about the asked category (the latest "
    "wins) whenever the target's entry lacks the key, while with links it reads only the lines linked "
    "to the retrieved snapshots: appending reaches every line linking can, and loses only where two "
    "objects of one category were told different values"
)
LINK_ERRORS = (
    "the structured reasoner reads a linked line as a fact of every entry of the snapshot it is linked "
    "to, whatever object the line names, so how QA moves with missing or wrong links follows from that "
    "rule and the sweep's random placement, not from the memory"
)


def _paired(
    claim_id: str,
    sentence: str,
    paper: str,
    kind: ClaimKind,
    pair: tuple[str, str, str],
    run_hint: str,
    paper_effect: float | None = None,
    by_construction: Callable[[Tables], str] | None = None,
) -> Claim:
    """A DialogMem claim measured as ``plus - minus`` on ``task`` items (``pair``, :func:`dm_pair`)."""
    return Claim(
        claim_id,
        "dialogmem",
        sentence,
        paper,
        kind,
        dm_pair(*pair, run_hint),
        paper_effect=paper_effect,
        by_construction=by_construction,
    )


def _controlled(mode: str, level: int) -> str:
    return f"controlled-{mode}-{level:03d}"


DIALOGMEM: tuple[Claim, ...] = (
    _paired(
        "dm-append-qa-3dmem",
        "Appending the dialogue lifts 3D-Mem's QA",
        "35.1 -> 63.4 (+28.3)",
        "positive",
        ("3dmem+dialogue", "3dmem", "qa"),
        EVAL_DM.format("3dmem,3dmem+dialogue"),
        28.3,
    ),
    _paired(
        "dm-append-qa-frames",
        "Appending the dialogue lifts Frames' QA",
        "24.3 -> 60.1 (+35.8)",
        "positive",
        ("frames+dialogue", "frames", "qa"),
        EVAL_DM.format("frames,frames+dialogue"),
        35.8,
    ),
    Claim(
        "dm-append-qa-verbalised",
        "dialogmem",
        "The QA gain from appended dialogue is mostly on verbalised answers",
        "far higher on verbalised items; 3D-Mem alone nearly invariant (App. K)",
        "positive",
        dm_verbalised_gain("3dmem+dialogue", "3dmem"),
    ),
    _paired(
        "dm-append-nav-3dmem",
        "Appending the dialogue does not move 3D-Mem's navigation",
        "31.0 -> 31.1 (McNemar p=0.42)",
        "flat",
        ("3dmem+dialogue", "3dmem", "navigation"),
        EVAL_DM.format("3dmem,3dmem+dialogue"),
        0.1,
        by_construction=by_rules(APPENDED_NAVIGATION, "3dmem", "3dmem+dialogue", when=_names_category),
    ),
    _paired(
        "dm-append-nav-frames",
        "Appending the dialogue does not move Frames' navigation",
        "11.3 -> 12.7",
        "flat",
        ("frames+dialogue", "frames", "navigation"),
        EVAL_DM.format("frames,frames+dialogue"),
        1.4,
        by_construction=by_rules(APPENDED_NAVIGATION, "frames", "frames+dialogue", when=_names_category),
    ),
    _paired(
        "dm-linker-clip-qa",
        "Appending beats the CLIP linker on QA",
        "63.4 vs 58.8 (+4.6)",
        "positive",
        ("3dmem+dialogue", "3dmem+clip", "qa"),
        SWEEP_DM + " link.clip_model=MODEL",
        4.6,
        by_construction=by_rules(APPENDING_BEATS_LINKING, "3dmem+dialogue", "3dmem+clip"),
    ),
    _paired(
        "dm-linker-vlm-qa",
        "Appending beats the VLM linker on QA",
        "63.4 vs 48.6 (+14.8)",
        "positive",
        ("3dmem+dialogue", "3dmem+vlm", "qa"),
        SWEEP_DM,
        14.8,
        by_construction=by_rules(APPENDING_BEATS_LINKING, "3dmem+dialogue", "3dmem+vlm"),
    ),
    _paired(
        "dm-linker-vlm-nav",
        "The VLM linker does not improve 3D-Mem's navigation",
        "31.0 -> 30.8",
        "flat",
        ("3dmem+vlm", "3dmem", "navigation"),
        SWEEP_DM,
        -0.2,
    ),
    _paired(
        "dm-linkq-nav",
        "Navigation rises with link quality (missing links, 0 -> 100%)",
        "rises steadily, 39.3 at 100%",
        "positive",
        (_controlled("missing", 100), _controlled("missing", 0), "navigation"),
        SWEEP_DM,
    ),
    _paired(
        "dm-missing-qa",
        "Missing links collapse QA (link quality 0 vs 100%)",
        "34.3 at 0% vs ~67 at 100%",
        "positive",
        (_controlled("missing", 100), _controlled("missing", 0), "qa"),
        SWEEP_DM,
        33.2,
        by_construction=by_rules(LINK_ERRORS, _controlled("missing", 100), _controlled("missing", 0)),
    ),
    _paired(
        "dm-wrong-qa",
        "Wrong links leave QA flat (link quality 0 vs 100%)",
        "67.5, flat",
        "flat",
        (_controlled("wrong", 100), _controlled("wrong", 0), "qa"),
        SWEEP_DM,
        0.0,
        by_construction=by_rules(LINK_ERRORS, _controlled("wrong", 100), _controlled("wrong", 0)),
    ),
    _paired(
        "dm-probe-metadata",
        "Snapshot metadata lifts navigation over 3D-Mem+Dialogue",
        "33.6 -> 44.1 (+10.5)",
        "positive",
        ("3dmem+gt_metadata", "3dmem+dialogue", "navigation"),
        SWEEP_DM,
        10.5,
    ),
    _paired(
        "dm-probe-selection",
        "Oracle selection lifts navigation over snapshot metadata",
        "44.1 -> 56.6 (+12.5)",
        "positive",
        ("3dmem+oracle_selection", "3dmem+gt_metadata", "navigation"),
        SWEEP_DM,
        12.5,
    ),
    _paired(
        "dm-probe-position",
        "Oracle position lifts navigation over oracle selection (3D location error)",
        "56.6 -> 96.2 (+39.6)",
        "positive",
        ("3dmem+oracle_position", "3dmem+oracle_selection", "navigation"),
        SWEEP_DM,
        39.6,
    ),
    Claim(
        "dm-updated-qa",
        "dialogmem",
        "Updated or corrected social facts lower 3D-Mem+Dialogue's QA",
        "77.4 -> 61.1 (-16.3)",
        "positive",
        dm_updated_social(),
        min_items=15,
        paper_effect=16.3,
    ),
)
