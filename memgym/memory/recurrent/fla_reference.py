"""flash-linear-attention's pure-PyTorch reference implementations, loaded by file path.

fla-core (``pip install memgym[bench]``) ships a ``naive.py`` per operator (plain PyTorch, runs
on CPU) next to its Triton kernels; the package ``__init__`` imports Triton, which needs a GPU,
so the file is executed on its own instead of imported. Used to cross-check and time the
recurrences in :mod:`memgym.memory.recurrent.delta_rule` against fla's own.

fla lays tensors out ``(B, T, H, ·)`` (ours ``(B, H, T, ·)``) and stores the state keys-first
``(B, H, d_k, d_v)`` (ours is its transpose).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_fla_naive(op: str) -> ModuleType:
    """Execute ``fla/ops/<op>/naive.py`` of the installed fla-core (e.g. ``"gdn2"``,
    ``"gated_delta_rule"``, ``"kda"``) and return it as a module.

    Raises:
        ImportError: fla-core is not installed, or this version has no such file.
    """
    spec = importlib.util.find_spec("fla")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("fla-core is not installed (pip install 'memgym[bench]'; never with triton on CPU)")
    path = Path(next(iter(spec.submodule_search_locations))) / "ops" / op / "naive.py"
    if not path.is_file():
        raise ImportError(f"fla-core has no reference file {path} (operator '{op}')")
    module_spec = importlib.util.spec_from_file_location(f"fla_naive_{op}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module
