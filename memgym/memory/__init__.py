"""Pluggable memories: embodied/ (DialogMem), recurrent/ (AMemOps torch cores), voxmem/ (VoxMem).

Every memory implements :class:`memgym.core.protocols.Memory`; what it reads (``reads``) decides
which benchmarks can evaluate it. :func:`memory_reads` and :func:`memories_reading` answer that for
memgym's own memories from :data:`memgym.plugin_table.MEMORY_TABLE`, without importing them (a
plugin's memory is imported to read its class's ``reads``).
"""

from __future__ import annotations

from collections.abc import Set

from memgym.core.registry import MEMORIES
from memgym.plugin_table import MEMORY_READS


def memory_reads(name: str) -> frozenset[str]:
    """What the registered memory ``name`` reads (an unknown name is a one-line RegistryError)."""
    if name in MEMORY_READS:
        return MEMORY_READS[name]
    return frozenset(MEMORIES.get(name).reads)


def memories_reading(offered: Set[str]) -> list[str]:
    """The registered memories that read nothing beyond ``offered``, sorted."""
    return [name for name in MEMORIES.names() if memory_reads(name) <= offered]
