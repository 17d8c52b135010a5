"""One closeness measure for numerical tests (fla's ``assert_close`` style): relative RMS error."""

from __future__ import annotations

import torch


def rel_rms(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """Relative RMS error ``rms(actual - expected) / rms(expected)``."""
    return ((actual - expected).pow(2).mean().sqrt() / expected.pow(2).mean().sqrt()).item()
