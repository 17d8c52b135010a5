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
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return f"{here}array {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        equal = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        return None if equal else f"{here}arrays differ in {int(np.sum(a != b))} of {a.size} values"
    if type(a) is not type(b) and not (_number(a) and _number(b)):
        return f"{here}{type(a).__name__} != {type(b).__name__}"
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        a = {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
        b = {f.name: getattr(b, f.name) for f in dataclasses.fields(b)}
    if isinstance(a, Mapping):
        if list(a) != list(b):
            return f"{here}keys {sorted(map(str, a))} != {sorted(map(str, b))}"
        return next((d for k in a if (d := difference(a[k], b[k], f"{where}[{k!r}]")) is not None), None)
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"{here}{len(a)} entries != {len(b)}"
        return next(
            (d for i, (x, y) in enumerate(zip(a, b)) if (d := difference(x, y, f"{where}[{i}]")) is not None), None
        )
    if _number(a) and _number(b) and math.isnan(float(a)) and math.isnan(float(b)):
        return None
    return None if a == b else f"{here}{_short(a)} != {_short(b)}"


def _number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
