"""Name registries that make memories, scorers, scenes, reasoners, benchmarks, envs and the
snapshot memories' dialogue linkers pluggable.

Usage::

    from memgym.core.registry import register_memory

    @register_memory("dialogue")
    class DialogueMemory(Memory):
        ...

    memory_cls = MEMORIES.get("dialogue")

Every name points at where its class lives, ``"module:attr"`` (the form Gymnasium's registration
and Python entry points use), and only that module is imported, on the first ``get`` of the name:

- memgym's own names are declared from the static table in :mod:`memgym.plugin_table` (filled on
  ``import memgym``); the module a name points at registers it with the decorator above, and the
  two must agree (a test checks every table entry).
- third-party packages add names through Python entry points in the groups of
  :data:`ENTRY_POINT_GROUPS` (``memgym.memories``, ``memgym.scorers``, ...). Their classes need
  no decorator: loading the entry point registers the class under the entry point's name.
- classes registered by the decorator alone (e.g. in a script) are found once their module ran.

:meth:`Registry.names` and ``in`` answer without importing anything, so ``memgym list`` works
without the optional extras. A name whose module cannot be imported raises one
:class:`~memgym.core.errors.PluginImportError` naming the extra to install, leaves no
half-registered classes behind and does not affect other names. A registry asserts that what is
registered is a subclass of its base type (a ``Memory`` registry refuses a ``Scorer``), refuses
two different classes under one name, and answers an unknown name with a
:class:`~memgym.core.errors.RegistryError` listing the known names.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from typing import Generic, TypeVar

from memgym.core.errors import RegistryError
from memgym.core.loading import load_target, split_target, track_imports
from memgym.core.suggest import did_you_mean

T = TypeVar("T")

BUILTIN = "memgym"
"""Provider shown for memgym's own names (plugins show their distribution's name)."""


class Registry(Generic[T]):
    """A mapping from names to classes of one base type, imported on first use.

    Args:
        kind: what is registered (``"memory"``), used in messages.
        base: the class every registered class must subclass, or its ``"module:attr"``
            (resolved on first use, so that importing the registry stays cheap); memgym's own
            registries are given theirs by :mod:`memgym.plugin_table` (:meth:`declare_base`).
        group: the Python entry point group third-party packages add names through.
    """

    def __init__(self, kind: str, base: type | str | None = None, group: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._base = base
        self._base_target: str | None = None
        self._entries: dict[str, type[T]] = {}
        self._declared: dict[str, str] = {}
        self._plugins: tuple[tuple[str, ...], dict[str, tuple[str, str]]] | None = None

    @property
    def base(self) -> type:
        """The class every registered class must subclass.

        Raises:
            RegistryError: none was given or declared.
        """
        if self._base is None:
            raise RegistryError(f"the {self.kind} registry has no base class declared (memgym.plugin_table.BASES)")
        if isinstance(self._base, str):
            module, attr = split_target(self._base, f"base of the {self.kind} registry")
            self._base = getattr(importlib.import_module(module), attr)
        return self._base

    def declare_base(self, target: str) -> None:
        """Declare the base class every registered class must subclass by its ``"module:attr"``
        (imported on first use); the same one again is a no-op."""
        split_target(target, f"base of the {self.kind} registry")
        if self._base_target not in (None, target):
            raise RegistryError(f"the {self.kind} registry's base is already declared as '{self._base_target}'")
        self._base_target = target
        if self._base is None:
            self._base = target

    def declare(self, name: str, target: str) -> None:
        """Declare that ``name`` lives at ``target`` (``"module:attr"``), imported on first use."""
        split_target(target, f"{self.kind} '{name}'")
        if self._declared.get(name, target) != target:
            raise RegistryError(f"{self.kind} '{name}' is already declared at '{self._declared[name]}'")
        self._declared[name] = target

    def register(self, name: str) -> Callable[[type[T]], type[T]]:
        """Decorator registering a class under ``name``."""

        def wrap(cls: type[T]) -> type[T]:
            if not (isinstance(cls, type) and issubclass(cls, self.base)):
                raise TypeError(
                    f"@register_{self.kind}('{name}') expects a subclass of {self.base.__name__}, got {cls!r}"
                )
            if name in self._entries and self._entries[name] is not cls:
                raise TypeError(f"{self.kind} '{name}' is already registered by {self._entries[name]!r}")
            where, declared = f"{cls.__module__}:{cls.__qualname__}", self._declared.get(name)
            if declared not in (None, where):
                raise TypeError(f"@register_{self.kind}('{name}') on {where}, but '{name}' is declared at {declared}")
            self._entries[name] = cls
            cls.registered_name = name  # type: ignore[attr-defined]
            return cls

        return wrap

    def get(self, name: str) -> type[T]:
        """The class registered under ``name``, importing its module on first use.

        Raises:
            RegistryError: ``name`` is not known.
            PluginImportError: its module cannot be imported (message names the extra to install).
        """
        if name in self._entries:
            return self._entries[name]
        if name in self._declared:
            return self._load(name, self._declared[name], plugin=False)
        plugins = self._plugin_entries()
        if name in plugins:
            return self._load(name, plugins[name][0], plugin=True)
        raise self._unknown(name)

    def locate(self, name: str) -> tuple[str, str]:
        """``(target, provider)`` of ``name`` without importing it.

        ``target`` is ``"module:attr"``; ``provider`` is ``"memgym"``, the distribution of a
        plugin, or ``"runtime"`` for a class registered only by a decorator that already ran.
        """
        if name in self._declared:
            return self._declared[name], BUILTIN
        plugins = self._plugin_entries()
        if name in plugins:
            return plugins[name]
        if name in self._entries:
            cls = self._entries[name]
            return f"{cls.__module__}:{cls.__qualname__}", "runtime"
        raise self._unknown(name)

    def names(self) -> list[str]:
        """Sorted known names (declared, plugin entry points, registered); imports nothing."""
        return sorted(set(self._declared) | set(self._plugin_entries()) | set(self._entries))

    def items(self) -> list[tuple[str, type[T]]]:
        """Sorted (name, class) pairs; imports every name's module."""
        return [(name, self.get(name)) for name in self.names()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def _unknown(self, name: str) -> RegistryError:
        names = self.names()
        hint = did_you_mean(name, names)
        return RegistryError(f"unknown {self.kind} '{name}'{hint}; registered: {', '.join(names) or 'none yet'}")

    def _load(self, name: str, target: str, *, plugin: bool) -> type[T]:
        what = f"{self.kind} '{name}'"
        cls = load_target(target, what)
        registered = self._entries.get(name)
        if registered is None and plugin:
            if not (isinstance(cls, type) and issubclass(cls, self.base)):
                raise RegistryError(f"{what} points at '{target}', which is not a subclass of {self.base.__name__}")
            return self.register(name)(cls)
        if registered is None:
            raise RegistryError(
                f"{what} points at '{target}', but importing it did not register '{name}' "
                f"(decorate the class with @register_{self.kind}('{name}'))"
            )
        if registered is not cls:
            raise RegistryError(f"{what} points at '{target}', but {registered!r} is registered under that name")
        return cls

    def _plugin_entries(self) -> dict[str, tuple[str, str]]:
        """name -> (target, distribution) of this group's entry points (cached per ``sys.path``)."""
        if self.group is None:
            return {}
        key = tuple(sys.path)
        if self._plugins is None or self._plugins[0] != key:
            self._plugins = (key, self._scan_entry_points())
        return self._plugins[1]

    def _scan_entry_points(self) -> dict[str, tuple[str, str]]:
        from importlib import metadata  # deferred: importing it costs more than the rest of the registry

        found: dict[str, tuple[str, str]] = {}
        for point in metadata.entry_points(group=self.group):
            dist = point.dist.name if point.dist is not None else "unknown distribution"
            taken = self._declared.get(point.name) or found.get(point.name, (None,))[0]
            if taken is not None and taken != point.value:
                warnings.warn(
                    f"{self.kind} '{point.name}' from entry point {point.value} ({dist}) is ignored: "
                    f"the name is already taken by {taken}",
                    stacklevel=3,
                )
            elif point.name not in self._declared:
                found[point.name] = (point.value, dist)
        return found


ENTRY_POINT_GROUPS: dict[str, str] = {
    "env": "memgym.envs",
    "memory": "memgym.memories",
    "scorer": "memgym.scorers",
    "scene": "memgym.scenes",
    "reasoner": "memgym.reasoners",
    "benchmark": "memgym.benchmarks",
    "linker": "memgym.linkers",
}
"""Registry kind -> the Python entry point group third-party packages use to add names."""

ENVS: Registry = Registry("env", group=ENTRY_POINT_GROUPS["env"])
MEMORIES: Registry = Registry("memory", group=ENTRY_POINT_GROUPS["memory"])
SCORERS: Registry = Registry("scorer", group=ENTRY_POINT_GROUPS["scorer"])
SCENES: Registry = Registry("scene", group=ENTRY_POINT_GROUPS["scene"])
REASONERS: Registry = Registry("reasoner", group=ENTRY_POINT_GROUPS["reasoner"])
BENCHMARKS: Registry = Registry("benchmark", group=ENTRY_POINT_GROUPS["benchmark"])
LINKERS: Registry = Registry("linker", group=ENTRY_POINT_GROUPS["linker"])
register_env = ENVS.register
register_memory = MEMORIES.register
register_scorer = SCORERS.register
register_scene = SCENES.register
register_reasoner = REASONERS.register
register_benchmark = BENCHMARKS.register
register_linker = LINKERS.register
ALL_REGISTRIES: tuple[Registry, ...] = (ENVS, MEMORIES, SCORERS, SCENES, REASONERS, BENCHMARKS, LINKERS)
for _registry in ALL_REGISTRIES:
    track_imports(_registry._entries)

RECORD_KINDS: dict[str, str] = {}
"""Record kind -> ``"module:attr"`` of its class, for :func:`memgym.core.records.record_class`
(declared by :mod:`memgym.plugin_table`; the record module itself registers the kind)."""
