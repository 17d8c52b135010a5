"""Deterministic randomness: one generator per episode from (config hash, seed, index).

Any single episode can be regenerated alone: its generator depends only on the hash of the
config that produced it, the run seed and the episode's index, never on how many random numbers
earlier episodes drew.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import typing
from typing import Any

import numpy as np


def canonical_json(value: Any) -> str:
    """Canonical JSON (sorted keys, no spaces) of a dataclass, mapping or JSON value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


NOT_HASHED = {"hashed": False}
"""Field metadata of settings that cannot change a result (threads, devices, worker counts, cache
folders, how stored rows are summarised): ``dataclasses.field(..., metadata={"help": ..., **NOT_HASHED})``."""

ADDED_FIELD = {"hash_default": False}
"""Field metadata of a setting added after runs were stored: at its default it is left out of
hashes, so configs that leave it alone keep their earlier hashes and run folders. The default of a
field of a nested config is the one its enclosing config's default gives it (a ``default_factory``
may choose another than the nested class). Combine with :data:`NOT_HASHED` for a setting that
cannot change a result (then it never enters hashes)."""


def setting(default: Any, help: str, *, hashed: bool = True, added: bool = False, **metadata: Any) -> Any:
    """A config key: ``dataclasses.field(default=default, metadata={"help": help, ...})``, with
    :data:`NOT_HASHED` when ``hashed`` is False, :data:`ADDED_FIELD` when ``added``, and any further
    ``metadata`` (``min``, ``max``)."""
    extra = {**({} if hashed else NOT_HASHED), **(ADDED_FIELD if added else {})}
    return dataclasses.field(default=default, metadata={"help": help, **metadata, **extra})


@functools.cache
def _float_fields(cls: type) -> frozenset[str]:
    """Fields of dataclass ``cls`` typed ``float`` or a tuple of floats."""
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):  # unresolvable annotations: leave values as they are
        return frozenset()
    names = set()
    for name, hint in hints.items():
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        if hint is float or (typing.get_origin(hint) is tuple and args and all(a is float for a in args)):
            names.add(name)
    return frozenset(names)


def _as_float(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_as_float(v) for v in value)
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def result_identity(config: Any) -> Any:
    """``config`` as it enters hashes: every field marked :data:`NOT_HASHED` set back to its
    default, and integers in ``float`` fields written as floats (``offset_seconds=(2, 4)`` and
    ``(2.0, 4.0)`` are the same config), recursively through nested dataclasses. Settings that
    cannot change a result so leave hashes, seeds and run folders unchanged."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return config
    changes = {}
    floats = _float_fields(type(config))
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if field.metadata.get("hashed", True):
            identity = _as_float(value) if field.name in floats else result_identity(value)
            if identity is not value:
                changes[field.name] = identity
        elif field.default is not dataclasses.MISSING:
            changes[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            changes[field.name] = field.default_factory()
    return dataclasses.replace(config, **changes) if changes else config


def _default(field: dataclasses.Field) -> Any:
    """A field's default (built by its default factory), or ``dataclasses.MISSING``."""
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def _hashed_value(value: Any, defaults: Any = None) -> Any:
    """``dataclasses.asdict`` of ``value`` without the :data:`ADDED_FIELD` fields at their defaults.

    ``defaults`` is the value (of ``value``'s class) the enclosing config gives ``value`` by default
    (a nested config's ``default_factory`` may set an added field otherwise than its class does);
    None: the class's own field defaults."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            default = _default(field) if defaults is None else getattr(defaults, field.name, dataclasses.MISSING)
            if field.metadata.get("hash_default", True) is False and item == default:
                continue
            nested = default if type(default) is type(item) and dataclasses.is_dataclass(item) else None
            out[field.name] = _hashed_value(item, nested)
        return out
    if isinstance(value, (list, tuple)):
        return [_hashed_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _hashed_value(v) for k, v in value.items()}
    return value


def hashed_dict(config: Any) -> Any:
    """``config`` as plain data the way it enters hashes: :func:`result_identity`, then nested
    dicts and lists with the :data:`ADDED_FIELD` fields at their defaults left out."""
    return _hashed_value(result_identity(config))


def config_hash(config: Any, length: int = 16) -> str:
    """Hex SHA-256 prefix of :func:`canonical_json` of :func:`hashed_dict` of ``config``."""
    return hashlib.sha256(canonical_json(hashed_dict(config)).encode()).hexdigest()[:length]


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
