"""VoxMem's two axes: acoustic evidence x memory operation, the 15 valid cells and their subtypes.

Evidence: ``semantics`` (what was said), ``speaker`` (who said it), ``paralinguistic`` (how it
was said), ``sound`` (what was audible). Operations: ``IE`` information extraction, ``MSR``
multi-session reasoning, ``TET`` temporal evolution tracking, ``AR`` answer refusal. The paper
leaves IE over semantics out (it would be plain transcript retrieval), giving 15 cells; memgym
can build it on request (:data:`EXTRA_CELLS`, ``cells=[semantics/IE,...]``) so that the
semantics minus audio-native gap can be compared across every operation on matched cells.
"""

from __future__ import annotations

EVIDENCE_TYPES: tuple[str, ...] = ("semantics", "speaker", "paralinguistic", "sound")
OPERATIONS: tuple[str, ...] = ("IE", "MSR", "TET", "AR")
AUDIO_NATIVE: frozenset[str] = frozenset({"speaker", "paralinguistic", "sound"})
"""Evidence types whose answers cannot be recovered from a transcript."""

SUBTYPES: dict[str, tuple[str, ...]] = {
    "IE": ("context_to_cue", "cue_to_fact"),
    "MSR": ("counting", "matching", "comparing"),
    "TET": ("latest", "at_point", "full_sequence"),
    "AR": ("from_IE", "from_MSR", "from_TET"),
}
"""Operation -> subtypes. AR subtypes name the operation the refused item was derived from."""

CELLS: tuple[tuple[str, str], ...] = tuple(
    (evidence, operation)
    for evidence in EVIDENCE_TYPES
    for operation in OPERATIONS
    if not (evidence == "semantics" and operation == "IE")
)
"""The paper's 15 (evidence, operation) cells: a build without ``cells`` builds these."""

EXTRA_CELLS: tuple[tuple[str, str], ...] = (("semantics", "IE"),)
"""Cells the paper leaves out that memgym builds when asked: semantics IE, a value asked of the one
session on a subject (context-to-cue: other subjects' sessions around it; cue-to-fact: also a
session on the same subject that states no value)."""

BUILDABLE_CELLS: tuple[tuple[str, str], ...] = (*CELLS, *EXTRA_CELLS)
"""Every cell a build may name."""

REFUSAL = "unanswerable"
"""Gold answer of answer-refusal items (and the oracle's answer when the premise is absent)."""

AMBIGUOUS = "<ambiguous>"
"""The oracle's answer when the history supports more than one answer (a construction error)."""


def cell_name(evidence: str, operation: str) -> str:
    """``"speaker/IE"`` style name of a cell."""
    return f"{evidence}/{operation}"
