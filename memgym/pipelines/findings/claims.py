"""The papers' findings that memgym's run folders can measure, one
:class:`~memgym.pipelines.findings.claim.Claim` each, per benchmark (:mod:`.dialogmem_claims`,
:mod:`.amemops_claims`, :mod:`.voxmem_claims`), in the order the report lists them."""

from __future__ import annotations

from memgym.pipelines.findings.amemops_claims import AMEMOPS
from memgym.pipelines.findings.claim import Claim, Measured, Tables
from memgym.pipelines.findings.dialogmem_claims import DIALOGMEM
from memgym.pipelines.findings.voxmem_claims import VOXMEM

CLAIMS: tuple[Claim, ...] = (*DIALOGMEM, *AMEMOPS, *VOXMEM)

__all__ = ["CLAIMS", "Claim", "Measured", "Tables"]
