"""The VoxMem findings (:class:`~memgym.pipelines.findings.claim.Claim` each)."""

from __future__ import annotations

from collections.abc import Callable

from memgym.pipelines.findings import measures as m
from memgym.pipelines.findings.claim import Claim, Measured, Outcome, Tables, mean_text, runs_of

AUDIO_NATIVE = ("speaker", "paralinguistic", "sound")
VOXMEM_PROBES = ("oracle_tags", "evidence_only")
VOXMEM_PREFERENCE = ("full_history", "cascaded", "transcript")
"""VoxMem claims are about models that hear the history: the first of these present is measured."""


EVAL_VX = "memgym eval voxmem dataset=D memories=[cascaded] budgets=[8k,64k]"


def _voxmem_system(t: Tables) -> str | None:
    present = m.systems(t.voxmem)
    for name in VOXMEM_PREFERENCE:
        for system in present:
            if system.split("/", 1)[0] == name:
                return system
    rest = [s for s in present if s.split("/", 1)[0] not in VOXMEM_PROBES]
    return rest[0] if rest else None


def vx_evidence_gap(audio: str) -> Callable[[Tables], Outcome]:
    def measure(t: Tables) -> Outcome:
        system = _voxmem_system(t)
        if system is None:
            return f"needs a VoxMem run of a non-probe memory: {EVAL_VX}"
        semantic = lambda r: r["evidence"] == "semantics" and not r["refusal"]  # noqa: E731
        acoustic = lambda r: r["evidence"] == audio and not r["refusal"]  # noqa: E731
        effect = m.group_effect(t.voxmem, system, semantic, acoustic, f"vx|gap|{audio}|{system}")
        if effect is None:
            return f"needs semantics and {audio} items: {EVAL_VX}"
        ours = f"{system}: semantics {mean_text(t.voxmem, system, semantic)} vs {audio} {mean_text(t.voxmem, system, acoustic)}"
        return Measured(effect, ours, runs_of(t.voxmem, system))

    return measure


COMPLEX_OPERATIONS = ("MSR", "TET")
"""Operations over several sessions (combining, ordering), against IE over one session."""
GEN_IE = "memgym generate voxmem cells=[semantics/IE,speaker/IE,...] (semantics IE is built only when named)"


def matched_cells(rows: list[dict], system: str) -> set[tuple[str, str]]:
    """``(operation, subtype)`` of the answerable items that ``system`` has both semantics and
    audio-native items of: the cells whose gap compares like with like."""
    sides: dict[tuple[str, str], set[bool]] = {}
    for r in rows:
        if r["system"] == system and not r["refusal"] and r["evidence"] in ("semantics", *AUDIO_NATIVE):
            sides.setdefault((r["operation"], r["subtype"]), set()).add(r["evidence"] == "semantics")
    return {cell for cell, seen in sides.items() if seen == {True, False}}


def vx_gap_widens(t: Tables) -> Outcome:
    system = _voxmem_system(t)
    if system is None:
        return f"needs a VoxMem run of a non-probe memory: {EVAL_VX}"
    matched = matched_cells(t.voxmem, system)
    semantic = lambda r: r["evidence"] == "semantics" and (r["operation"], r["subtype"]) in matched  # noqa: E731
    acoustic = lambda r: r["evidence"] in AUDIO_NATIVE and (r["operation"], r["subtype"]) in matched  # noqa: E731
    effect = m.gap_interaction(
        t.voxmem,
        system,
        semantic,
        acoustic,
        lambda r: r["operation"] in COMPLEX_OPERATIONS,
        lambda r: r["operation"] == "IE",
        f"vx|widens|{system}",
    )
    if effect is None:
        return f"needs semantics and audio-native items of IE and of MSR or TET (matched subtypes): {GEN_IE}; {EVAL_VX}"
    ops = sorted({op for op, _ in matched})
    ours = f"{system}: (semantics - audio-native) on MSR+TET minus on IE, {len(matched)} matched subtypes of {ops}"
    return Measured(effect, ours, runs_of(t.voxmem, system))


def vx_length(t: Tables) -> Outcome:
    system = _voxmem_system(t)
    budgets = sorted({r["budget"] for r in t.voxmem if r["system"] == system}) if system else []
    if len(budgets) < 2:
        return f"needs one memory at two or more budgets: {EVAL_VX}"
    short, long = budgets[0], budgets[-1]
    rows = [{**r, "system": f"{r['system']}@{r['budget']}"} for r in t.voxmem if r["system"] == system]
    effect = m.paired_effect(rows, f"{system}@{short}", f"{system}@{long}", f"vx|length|{system}")
    if effect is None:
        return f"needs the same items at {short} and {long} tokens: {EVAL_VX}"
    every: m.Select = lambda r: True  # noqa: E731
    ours = f"{system}: {short // 1024}K {mean_text(rows, f'{system}@{short}', every)} -> "
    ours += f"{long // 1024}K {mean_text(rows, f'{system}@{long}', every)}"
    return Measured(effect, ours, runs_of(t.voxmem, system))


def vx_refusal(t: Tables) -> Outcome:
    system = _voxmem_system(t)
    if system is None:
        return f"needs a VoxMem run of a non-probe memory: {EVAL_VX}"
    semantic = lambda r: r["refusal"] and r["evidence"] == "semantics"  # noqa: E731
    acoustic = lambda r: r["refusal"] and r["evidence"] in AUDIO_NATIVE  # noqa: E731
    effect = m.group_effect(t.voxmem, system, semantic, acoustic, f"vx|refusal|{system}")
    if effect is None:
        return f"needs answer-refusal items of semantics and audio-native evidence: {EVAL_VX}"
    return Measured(effect, f"{system}: refusal accuracy, semantics minus audio-native", runs_of(t.voxmem, system))


VOXMEM: tuple[Claim, ...] = (
    *(
        Claim(
            f"vx-semantics-over-{audio}",
            "voxmem",
            f"What was said is remembered better than {audio} evidence",
            "semantics far above audio-native types for all 15 LALMs",
            "positive",
            vx_evidence_gap(audio),
            min_items=20,
        )
        for audio in AUDIO_NATIVE
    ),
    Claim(
        "vx-gap-widens",
        "voxmem",
        "The semantics - audio gap widens with operation complexity (multi-session MSR+TET vs single-session IE)",
        "widens for complex operations (qualitative)",
        "positive",
        vx_gap_widens,
        min_items=10,
    ),
    Claim(
        "vx-length-decline",
        "voxmem",
        "Accuracy declines as the history grows (shortest vs longest budget)",
        "declines 8K -> 64K for every evidence type",
        "positive",
        vx_length,
    ),
    Claim(
        "vx-refusal",
        "voxmem",
        "Refusal is harder when the evidence was neutralised in the audio",
        "distinct failure modes per evidence type (qualitative)",
        "positive",
        vx_refusal,
        min_items=10,
    ),
)
