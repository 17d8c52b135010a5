"""How the memory contract plays a memory on its benchmark: a :class:`Harness` per benchmark.

A harness knows what an evaluation of its benchmark does with a memory, at the smallest size
that still exercises it: the options memories are built from (:meth:`Harness.options`, what the
eval passes to :meth:`~memgym.core.protocols.Memory.from_options`), two small episodes of its
registered env (:meth:`Harness.episodes`), the env they are played in, the agent the eval wraps
the memory in (:meth:`Harness.agent`) and what the agent needs from ``retrieve``
(:meth:`Harness.evidence_problem`). :func:`harness_for` picks the harness of a memory class
(:meth:`Harness.takes`); the built-in ones are DialogMem's, VoxMem's and AMemOps's, and a
benchmark of a plugin package adds its own with :func:`add_harness`.
"""

from __future__ import annotations

from memgym.core.protocols import Memory
from memgym.testing import harness_amemops, harness_dialogmem, harness_voxmem  # noqa: F401 (they add theirs)
from memgym.testing.harness_base import HARNESSES, Harness, add_harness, built_harness

__all__ = ["BUILTIN", "Harness", "add_harness", "harness_for", "harness_names"]


BUILTIN = ("amemops", "voxmem", "dialogmem")
"""memgym's benchmarks with a harness, in the order :func:`harness_for` asks them."""


def harness_names() -> list[str]:
    """The benchmarks with a harness, in the order :func:`harness_for` asks them: plugin
    benchmarks' (the last added first), then :data:`BUILTIN`."""
    return [name for name in reversed(HARNESSES) if name not in BUILTIN] + list(BUILTIN)


def harness_for(cls: type[Memory]) -> Harness:
    """The harness of the benchmark whose evaluation takes memories of class ``cls``.

    Raises:
        AssertionError: no harness takes it (a memory no benchmark can evaluate).
    """
    for benchmark in harness_names():
        harness = built_harness(benchmark)
        if harness.takes(cls):
            return harness
    raise AssertionError(
        f"{cls.__module__}:{cls.__qualname__} (reads {sorted(cls.reads)}) is taken by no benchmark's evaluation: "
        f"a VoxMem memory subclasses memgym.memory.voxmem.base.VoxMemMemory, an AMemOps one "
        f"memgym.memory.recurrent.core_memory.CoreMemory, and a DialogMem one reads no audio"
    )
