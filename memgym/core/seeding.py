"""Deterministic randomness: one generator per episode from (config hash, seed, index).

Any single episode can be regenerated alone: its generator depends only on the hash of the
config that produced it, the run seed and the episode's index, never on how many random numbers
earlier episodes drew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import numpy as np


def canonical_json(value: Any) -> str:
    """Canonical JSON (sorted keys, no spaces) of a dataclass, mapping or JSON value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


def config_hash(config: Any, length: int = 16) -> str:
    """Hex SHA-256 prefix of :func:`canonical_json` of ``config``."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()[:length]


def episode_seed_sequence(config_digest: str, seed: int, index: int) -> np.random.SeedSequence:
    """Seed sequence for episode ``index`` of a run with ``seed`` under config ``config_digest``."""
    if seed < 0 or index < 0:
        raise ValueError(f"seed and index must be non-negative, got seed={seed}, index={index}")
    digest_words = [int(config_digest[i : i + 8], 16) for i in range(0, len(config_digest), 8)]
    return np.random.SeedSequence([*digest_words, int(seed), int(index)])


def episode_rng(config_digest: str, seed: int, index: int) -> np.random.Generator:
    """NumPy generator for one episode (PCG64)."""
    return np.random.Generator(np.random.PCG64(episode_seed_sequence(config_digest, seed, index)))


def episode_torch_seed(config_digest: str, seed: int, index: int) -> int:
    """A 63-bit integer seed for ``torch.Generator().manual_seed`` for one episode."""
    return int(episode_seed_sequence(config_digest, seed, index).generate_state(2, np.uint64)[0] >> 1)


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)
