"""Name registries that make memories, scorers, scenes, reasoners and envs pluggable.

Usage::

    from memgym.core.registry import register_memory

    @register_memory("dialogue")
    class DialogueMemory(Memory):
        ...

    memory_cls = MEMORIES.get("dialogue")

A registry asserts that what is registered is a subclass of its base type (a ``Memory`` registry
refuses a ``Scorer``), refuses to register two different classes under one name, and answers an
unknown name with a :class:`~memgym.core.errors.RegistryError` that lists the known names.
Modules that register themselves are imported lazily through :func:`ensure_registered` so that
``import memgym`` stays cheap; ``memgym list`` prints every registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

from memgym.core.errors import RegistryError

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from names to classes of one base type.

    Args:
        kind: what is registered (``"memory"``), used in messages.
        base: the class every registered class must subclass.
    """

    def __init__(self, kind: str, base: type) -> None:
        self.kind = kind
        self.base = base
        self._entries: dict[str, type[T]] = {}

    def register(self, name: str) -> Callable[[type[T]], type[T]]:
        """Decorator registering a class under ``name``."""

        def wrap(cls: type[T]) -> type[T]:
            if not (isinstance(cls, type) and issubclass(cls, self.base)):
                raise TypeError(
                    f"@register_{self.kind}('{name}') expects a subclass of {self.base.__name__}, got {cls!r}"
                )
            if name in self._entries and self._entries[name] is not cls:
                raise TypeError(f"{self.kind} '{name}' is already registered by {self._entries[name]!r}")
            self._entries[name] = cls
            cls.registered_name = name  # type: ignore[attr-defined]
            return cls

        return wrap

    def get(self, name: str) -> type[T]:
        """The class registered under ``name``."""
        ensure_registered()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none yet"
            raise RegistryError(f"unknown {self.kind} '{name}'; registered: {known}")
        return self._entries[name]

    def names(self) -> list[str]:
        """Sorted registered names."""
        ensure_registered()
        return sorted(self._entries)

    def items(self) -> list[tuple[str, type[T]]]:
        """Sorted (name, class) pairs."""
        ensure_registered()
        return sorted(self._entries.items())

    def __contains__(self, name: object) -> bool:
        ensure_registered()
        return name in self._entries


PLUGIN_MODULES: list[str] = [
    "memgym.tasks.text_match",
    "memgym.memory.recurrent.core_memory",
    "memgym.scenes.procedural",
    "memgym.scenes.hm3d",
    "memgym.scenes.habitat_sim_adapter",
    "memgym.pipelines.dialogmem",
    "memgym.backends.structured",
    "memgym.backends.hf",
    "memgym.backends.openai_http",
    "memgym.backends.hf_audio",
    "memgym.tasks.llm_match",
    "memgym.tasks.voxmem_scoring",
    "memgym.tasks.navigation",
    "memgym.memory.embodied.dialogue",
    "memgym.memory.embodied.oracle",
    "memgym.memory.embodied.frames",
    "memgym.memory.embodied.conceptgraph",
    "memgym.memory.embodied.snapshots",
    "memgym.memory.spoken.full_history",
    "memgym.memory.spoken.transcript",
    "memgym.memory.spoken.cascaded",
    "memgym.memory.spoken.probes",
    "memgym.memory.embodied.probes",
    "memgym.envs.spoken_history_env",
    "memgym.pipelines.voxmem",
    "memgym.tasks.attribute_retrieval",
    "memgym.pipelines.amemops",
]
"""Modules imported on first registry lookup; each registers its classes on import."""

_loaded = False


def ensure_registered() -> None:
    """Import every module in :data:`PLUGIN_MODULES` once."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in PLUGIN_MODULES:
        importlib.import_module(module)


def _registries():
    # Imported here: the protocols module imports this one for nothing, but keeping the
    # registries next to their base types avoids a second source of truth.
    import gymnasium

    from memgym.core.benchmark import Benchmark
    from memgym.core.protocols import Memory, Reasoner, Scene, Scorer

    return (
        Registry("env", gymnasium.Env),
        Registry("memory", Memory),
        Registry("scorer", Scorer),
        Registry("scene", Scene),
        Registry("reasoner", Reasoner),
        Registry("benchmark", Benchmark),
    )


ENVS, MEMORIES, SCORERS, SCENES, REASONERS, BENCHMARKS = _registries()
register_env = ENVS.register
register_memory = MEMORIES.register
register_scorer = SCORERS.register
register_scene = SCENES.register
register_reasoner = REASONERS.register
register_benchmark = BENCHMARKS.register
ALL_REGISTRIES: tuple[Registry, ...] = (ENVS, MEMORIES, SCORERS, SCENES, REASONERS, BENCHMARKS)
