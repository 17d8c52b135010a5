"""Typed configs: dataclass defaults, YAML files, ``key=value`` overrides, strict validation.

A config is a (frozen) dataclass whose fields carry their defaults and a help string in
``field(metadata={"help": ...})``. :func:`load_config` starts from those defaults, applies a
YAML file (for example one of ``memgym/configs/*.yaml``) and then command-line overrides such as
``model=gdn2 train.steps=200 distractors=[4,8]``. Values are parsed as YAML scalars and checked
against the field's type hint, ``Literal`` choices and nested dataclasses, and against the
field's ``metadata={"min": ..., "max": ...}`` bounds (inclusive; applied to each element of a
tuple or list); the first bad key raises :class:`~memgym.core.errors.ConfigError` naming the key
(and the file) with the allowed keys, values or range.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from memgym.core.errors import ConfigError
from memgym.core.textfiles import read_text

C = TypeVar("C")
CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
"""Folder of the packaged YAML configs (``memgym/configs``)."""


def load_config(
    cls: type[C],
    *,
    path: str | Path | None = None,
    overrides: Iterable[str] = (),
    values: Mapping[str, Any] | None = None,
) -> C:
    """Build a ``cls`` instance from defaults, an optional YAML file, values and overrides.

    Args:
        cls: the config dataclass.
        path: YAML file with a mapping of field values (nested mappings for nested configs).
        overrides: ``dotted.key=value`` strings; the value is parsed as YAML.
        values: extra field values applied after the file and before the overrides.
    Raises:
        ConfigError: unreadable file, unknown key, wrong type or a value outside its choices.
    """
    data: dict[str, Any] = {}
    where = "config"
    if path is not None:
        path = Path(path)
        where = str(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            loaded = yaml.safe_load(read_text(path))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({_first_line(exc)})") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping of config keys, got {type(loaded).__name__}")
        _merge(data, loaded)
    if values:
        _merge(data, dict(values))
    for override in overrides:
        key, value = parse_override(override)
        _merge(data, _nest(key, value))
        where = "command line" if path is None else f"{path} + command line"
    return build_config(cls, data, where=where)


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``key=value`` and parse the value as YAML (``3`` -> 3, ``[4,8]`` -> [4, 8])."""
    if "=" not in text:
        raise ConfigError(f"override '{text}' is not of the form key=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"override '{text}' has an empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key, value


def build_config(cls: type[C], data: Mapping[str, Any], *, where: str = "config", prefix: str = "") -> C:
    """Instantiate ``cls`` from a (nested) mapping, validating every key and value."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [k for k in data if k not in fields]
    if unknown:
        raise ConfigError(f"{where}: unknown key '{prefix}{unknown[0]}'; allowed keys: {', '.join(sorted(fields))}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, value in data.items():
        default = _field_default(fields[name])
        if dataclasses.is_dataclass(hints[name]) and dataclasses.is_dataclass(default) and isinstance(value, Mapping):
            # keys given for a nested config update the field's default (e.g. an eval config's
            # default_factory data split), they do not start from the nested class's own defaults
            merged = config_to_dict(default)
            _merge(merged, value)
            value = merged
        kwargs[name] = _convert(value, hints[name], where, f"{prefix}{name}")
        _check_range(kwargs[name], fields[name].metadata, where, f"{prefix}{name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _field_default(field: dataclasses.Field) -> Any:
    """A field's default value (calling its default factory), or None when it has none."""
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def config_to_dict(config: Any) -> dict[str, Any]:
    """Plain nested dict of a config dataclass or mapping (tuples become lists)."""
    if isinstance(config, Mapping):
        return _plain(dict(config))
    return _plain(dataclasses.asdict(config))


def yaml_text(config: Any) -> str:
    """A config as YAML text that :func:`load_config` reads back to an equal config."""
    return yaml.safe_dump(config_to_dict(config), sort_keys=False)


def dump_config(config: Any, path: str | Path) -> None:
    """Write a config as YAML that :func:`load_config` reads back to an equal config."""
    Path(path).write_text(yaml_text(config), encoding="utf-8")


def describe_config(cls: type) -> list[tuple[str, str, str]]:
    """(dotted key, default, help) rows for ``--help`` output, nested configs flattened; bounded
    fields say their range."""
    rows: list[tuple[str, str, str]] = []
    hints = typing.get_type_hints(cls)
    defaults = cls()
    for field in dataclasses.fields(cls):
        value = getattr(defaults, field.name)
        if dataclasses.is_dataclass(hints[field.name]):
            rows += [(f"{field.name}.{k}", d, h) for k, d, h in describe_config(hints[field.name])]
        else:
            help_text = field.metadata.get("help", "")
            if field.metadata.get("min") is not None or field.metadata.get("max") is not None:
                bounds = f"({_range_text(field.metadata.get('min'), field.metadata.get('max'))})"
                help_text = f"{help_text} {bounds}" if help_text else bounds
            rows.append((field.name, repr(_plain(value)), help_text))
    return rows


def _convert(value: Any, hint: Any, where: str, key: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: '{key}' must be a mapping of {hint.__name__} keys")
        return build_config(hint, value, where=where, prefix=f"{key}.")
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is not type(None):
                try:
                    return _convert(value, arg, where, key)
                except ConfigError:
                    continue
        raise ConfigError(f"{where}: '{key}' = {value!r} does not fit {_type_name(hint)}")
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{where}: '{key}' = {value!r} is not allowed; allowed values: {list(args)}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            value = [value]
        inner = args[0] if args else Any
        items = [_convert(v, inner, where, f"{key}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: '{key}' must be a mapping")
        return dict(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: '{key}' must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: '{key}' must be an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: '{key}' must be a number, got {value!r}")
        return float(value)
    if hint is str:
        if isinstance(value, (dict, list)):
            raise ConfigError(f"{where}: '{key}' must be a string, got {value!r}")
        return "" if value is None else str(value)
    return value


def check_ranges(config: Any) -> None:
    """Check every field of a config dataclass against its metadata ``min``/``max`` (for
    ``__post_init__`` of configs that are also built in code).

    Raises:
        ConfigError: naming the class, field and allowed range.
    """
    for field in dataclasses.fields(config):
        _check_range(getattr(config, field.name), field.metadata, type(config).__name__, field.name)


def _check_range(value: Any, metadata: Mapping[str, Any], where: str, key: str) -> None:
    """Raise ConfigError when a number (or any number in a list) is outside the field's min/max."""
    low, high = metadata.get("min"), metadata.get("max")
    if low is None and high is None:
        return
    values = value if isinstance(value, (list, tuple)) else [value]
    for index, number in enumerate(values):
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            continue
        name = f"{key}[{index}]" if isinstance(value, (list, tuple)) else key
        if low is not None and number < low:
            raise ConfigError(f"{where}: '{name}' = {number!r} is too small; expected {_range_text(low, high)}")
        if high is not None and number > high:
            raise ConfigError(f"{where}: '{name}' = {number!r} is too large; expected {_range_text(low, high)}")


def _range_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"a value from {low} to {high}"
    return f"a value >= {low}" if low is not None else f"a value <= {high}"


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", str(hint))


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    node = out
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


def _merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
