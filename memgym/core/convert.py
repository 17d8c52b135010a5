"""One converter from plain data (YAML / JSON mappings) to typed stdlib dataclasses.

Configs (:mod:`memgym.core.config`) and records (:mod:`memgym.core.records`) are both frozen
stdlib dataclasses; :func:`convert` validates a mapping against one with a pydantic
``TypeAdapter`` (built once per class and mode) and returns the instance. Field types may be JSON
scalars, ``X | None``, ``Literal`` choices, ``tuple[X, ...]`` / fixed ``tuple[X, Y]`` /
``list[X]`` (read from lists), ``dict[str, X]``, nested dataclasses (read from mappings) and
``Any``. Every mapping is checked for unknown keys; the class's ``__post_init__`` runs as usual.

Two modes:

* ``"json"`` (records read back from JSON): JSON types exactly -- an ``int`` field takes only
  integers (not ``true`` or ``2.0``), a ``float`` field integers or floats, a ``str`` field only
  strings, a ``bool`` only ``true``/``false``.
* ``"config"`` (YAML files and ``key=value`` overrides typed by people; pydantic's lax mode): also
  numbers written as strings (``"3"`` for an ``int``), integral floats for ``int`` fields
  (``2.0``, not ``2.5``), numbers for ``str`` fields (``budgets=[8192]`` reads ``("8192",)``),
  ``0``/``1`` and ``"yes"``/``"no"`` for booleans, and ``true``/``false`` as 1/0 for numbers.

The first problem raises the caller's error class (:class:`~memgym.core.errors.ConfigError`,
:class:`~memgym.core.errors.RecordError`) as ``"{where}: {key.path}: {what was expected}, got
{value}"``, e.g. ``config.yaml: data.stream.gain_db: expected a number, got 'loud'``; an unknown key
lists the allowed ones.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict  # pydantic wants these before Python 3.12 (its dependency)

from memgym.core.errors import MemgymError
from memgym.core.suggest import did_you_mean

T = TypeVar("T")
Mode = Literal["json", "config"]

_EXPECTED = {
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "dict_type": "expected a mapping",
    "dataclass_type": "expected a mapping",
    "dataclass_args_type": "expected a mapping",
    "none_required": "expected null",
}
"""pydantic error type -> what the key expected (the value given is appended)."""


@functools.cache
def _adapter(cls: type, mode: Mode) -> TypeAdapter:
    """A TypeAdapter of ``{"data": cls}`` (``"schema"`` and ``"kind"`` may sit beside it, as in a
    record's JSON envelope) whose config (strictness, no extra keys) reaches every nested dataclass
    (stdlib dataclasses take the config of the type that holds them)."""
    config = (
        ConfigDict(strict=True, extra="forbid")
        if mode == "json"
        else ConfigDict(strict=False, extra="forbid", coerce_numbers_to_str=True)
    )
    fields = {"schema": NotRequired[Any], "kind": NotRequired[Any], "data": cls}
    holder = with_config(config)(TypedDict(f"{cls.__name__}Holder", fields))  # type: ignore[misc,operator]
    return TypeAdapter(holder)


def convert(cls: type[T], data: Any, *, mode: Mode, where: str, error: type[MemgymError]) -> T:
    """``data`` (a mapping of ``cls``'s fields) validated into a ``cls`` instance.

    Args:
        cls: a stdlib dataclass.
        data: its fields as plain data (nested mappings for nested dataclasses).
        mode: ``"json"`` or ``"config"`` (see the module docstring).
        where: what the data came from (a file, ``file:line``, a class name), first in messages.
        error: the :class:`MemgymError` subclass raised.
    Raises:
        error: the first key that does not fit, named by its dotted path.
    """
    if not isinstance(data, Mapping):
        raise error(f"{where}: expected a mapping of {cls.__name__} keys, got {_shown(data)}")
    adapter = _adapter(cls, mode)
    try:
        if mode == "json":
            return adapter.validate_json(f'{{"data":{json.dumps(data, default=_jsonable)}}}')["data"]
        return adapter.validate_python({"data": data})["data"]
    except ValidationError as exc:
        raise error(f"{where}: {describe_error(cls, exc)}") from None


def convert_envelope(cls: type[T], line: str, *, where: str, error: type[MemgymError]) -> T:
    """The ``data`` of a JSON envelope line (``{"schema": .., "kind": .., "data": {...}}``) as a
    ``cls`` instance, validated from the text in ``"json"`` mode (one parse, no Python dicts);
    ``schema`` and ``kind`` are the caller's to check. Raises ``error`` as :func:`convert` does."""
    try:
        return _adapter(cls, "json").validate_json(line)["data"]
    except ValidationError as exc:
        raise error(f"{where}: {describe_error(cls, exc)}") from None


def describe_error(cls: type, exc: ValidationError) -> str:
    """The first of ``exc``'s errors as ``"key.path: expected ..., got ..."``."""
    first = exc.errors(include_url=False)[0]
    loc = first["loc"][1:]  # past the holder's "data"
    path, parent, hint = _walk(cls, loc)
    kind, given = first["type"], first.get("input")
    if kind == "unexpected_keyword_argument":
        keys = sorted(f.name for f in dataclasses.fields(parent) if f.init) if parent else []
        return f"unknown key '{path}'{did_you_mean(str(loc[-1]), keys)}; allowed keys: {', '.join(keys) or 'none'}"
    if kind in ("missing", "missing_argument"):
        return f"{path}: missing item" if loc and isinstance(loc[-1], int) else f"{path}: missing (it has no default)"
    if kind == "literal_error":
        return f"{path}: {_shown(given)} is not allowed; allowed values: {first['ctx']['expected']}"
    if kind in ("too_short", "too_long") and first.get("ctx"):
        return f"{path}: expected {len(typing.get_args(hint))} items, got {_shown(given)}"
    if kind in ("value_error", "assertion_error"):
        return f"{path or cls.__name__}: {first['ctx']['error']}"
    expected = _EXPECTED.get(kind)
    if expected is None:
        expected = first["msg"][0].lower() + first["msg"][1:]
    if kind in ("dataclass_type", "dataclass_args_type") and dataclasses.is_dataclass(hint):
        expected = f"expected a mapping of {hint.__name__} keys"
    if union := _union_text(hint):
        expected = f"expected {union}"
    return f"{path or cls.__name__}: {expected}, got {_shown(given)}"


def _walk(cls: type, loc: tuple[Any, ...]) -> tuple[str, type | None, Any]:
    """(dotted path of ``loc``, the dataclass holding its last key, the type hint at ``loc``).

    Union members appear in pydantic locations by tag (``'int'``, ``'A'``): a dataclass member is
    followed; for others the union itself is kept as the hint, so its error says what it accepts."""
    path, parent, hint = "", None, cls
    for part in loc:
        hint = strip_none(hint)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if dataclasses.is_dataclass(hint) and isinstance(part, str):
            parent = hint
            path = f"{path}.{part}" if path else part
            hint = field_hints(hint).get(part, Any)
        elif origin in (tuple, list) and isinstance(part, int):
            path += f"[{part}]"
            hint = _element_hint(origin, args, part)
        elif origin is dict:
            path = f"{path}.{part}" if path else str(part)
            hint = args[1] if len(args) == 2 else Any
        elif _union_text(hint):  # the tag of the union member tried: follow a dataclass member
            member = next((m for m in args if dataclasses.is_dataclass(m) and m.__name__ == part), None)
            hint = member if member is not None else hint
        else:
            path = f"{path}.{part}" if path else str(part)
            hint = Any
    return path, parent, hint


def _element_hint(origin: type, args: tuple[Any, ...], index: int) -> Any:
    """The hint of entry ``index`` of a ``tuple[A, B]`` (its own), a ``tuple[A, ...]`` or a
    ``list[A]`` (``A``); ``Any`` where the hint does not say."""
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return args[index] if index < len(args) else Any
    return args[0] if args else Any


@functools.cache
def field_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints`` of a dataclass (cached)."""
    return typing.get_type_hints(cls)


def strip_none(hint: Any) -> Any:
    """``X`` for ``X | None``; other hints unchanged."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return hint


def _union_text(hint: Any) -> str:
    """``"int or str"`` for a union of several non-None types, else ``""``."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return ""
    members = typing.get_args(hint)
    if len([a for a in members if a is not type(None)]) < 2:
        return ""
    return " or ".join(type_text(a) for a in members)


def type_text(hint: Any) -> str:
    """A short readable name of a type hint (``int``, ``list[float]``, ``{a, b}``, ``str | null``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return "any"
    if hint is type(None):
        return "null"
    if origin is Literal:
        return "{" + ", ".join(repr(a) for a in args) + "}"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin in (tuple, list):
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return "[" + ", ".join(type_text(a) for a in args) + "]"
        return f"list[{type_text(args[0]) if args else 'any'}]"
    if origin is dict:
        return f"dict[{', '.join(type_text(a) for a in args)}]" if args else "dict"
    return getattr(hint, "__name__", str(hint))


def _shown(value: Any) -> str:
    """``value`` as a message shows it (its repr, shortened; the type for mappings and lists)."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)) and len(repr(value)) > 60:
        return f"a list of {len(value)}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _jsonable(value: Any) -> Any:
    """JSON form of what ``json`` cannot write: dataclasses, numpy scalars and arrays, else text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return value.tolist()
    return str(value)
