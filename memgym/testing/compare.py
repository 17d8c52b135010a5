"""Exact comparison of what memories, scorers and envs return, for the contracts' determinism
and isolation checks: nested dicts, sequences, dataclasses, numpy arrays and torch tensors, with
NaN equal to NaN (a navigation answer with no location is a NaN position).

>>> import numpy as np
>>> difference({"position": np.array([np.nan, 1.0])}, {"position": np.array([np.nan, 1.0])}) is None
True
>>> difference({"text": "mug", "n": [1, 2]}, {"text": "mug", "n": [1, 3]})
"at ['n'][1]: 2 != 3"
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def difference(a: Any, b: Any, where: str = "") -> str | None:
    """Where and how ``a`` and ``b`` first differ (one line), or None when they are equal."""
    here = f"at {where or 'top level'}: "
    if hasattr(a, "detach") and hasattr(b, "detach"):  # torch tensors, without importing torch
        a, b = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _array_difference(np.asarray(a), np.asarray(b), here)
    if type(a) is not type(b) and not (_number(a) and _number(b)):
        return f"{here}{type(a).__name__} != {type(b).__name__}"
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        a = {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
        b = {f.name: getattr(b, f.name) for f in dataclasses.fields(b)}
    if isinstance(a, Mapping | list | tuple):
        return _container_difference(a, b, where, here)
    if _number(a) and _number(b) and math.isnan(float(a)) and math.isnan(float(b)):
        return None
    return None if a == b else f"{here}{_short(a)} != {_short(b)}"


def _array_difference(a: np.ndarray, b: np.ndarray, here: str) -> str | None:
    """How two arrays differ (shape and kind of dtype, then values; NaN equals NaN in float arrays)."""
    if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
        return f"{here}array {a.dtype}{a.shape} != {b.dtype}{b.shape}"
    equal = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return None if equal else f"{here}arrays differ in {int(np.sum(a != b))} of {a.size} values"


def _container_difference(a: Any, b: Any, where: str, here: str) -> str | None:
    """How two mappings (keys in order, then values) or two lists/tuples (length, then entries)
    of the same type differ, the first difference found."""
    if isinstance(a, Mapping):
        if list(a) != list(b):
            return f"{here}keys {sorted(map(str, a))} != {sorted(map(str, b))}"
        pairs = [(a[k], b[k], f"{where}[{k!r}]") for k in a]
    else:
        if len(a) != len(b):
            return f"{here}{len(a)} entries != {len(b)}"
        pairs = [(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b))]
    return next((d for x, y, at in pairs if (d := difference(x, y, at)) is not None), None)


def _number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
