"""Keeping processes forked from a memgym process usable.

Gymnasium's async vector envs (``gymnasium.make_vec(..., vectorization_mode="async")``) start
their workers with ``fork`` by default. A process that has already run torch code holds a
started OpenMP thread pool, which does not survive ``fork``: the child's first multi-threaded
torch op waits forever in an OpenMP barrier for threads that do not exist, and such stuck
workers never read their pipe again, so they even outlive the parent. :func:`install_fork_guard`
(run on ``import memgym``) registers an ``os.register_at_fork`` handler that limits torch to one
thread in every forked child of a process that has imported torch; torch then runs its ops
inline (as PyTorch's own DataLoader workers do), so forked workers work, and they leave when
the parent's end of their pipe closes. ``spawn`` and ``forkserver`` children are not affected.
"""

from __future__ import annotations

import os
import sys

_installed = False


def install_fork_guard() -> None:
    """Register the after-fork handler once per process (idempotent)."""
    global _installed
    if not _installed and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=single_thread_torch)
        _installed = True


def single_thread_torch() -> None:
    """Limit torch to one intra-op thread when torch is loaded (no-op otherwise)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
