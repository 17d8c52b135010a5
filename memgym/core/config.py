"""Typed configs: dataclass defaults, YAML files, ``key=value`` overrides, strict validation.

A config is a (frozen) dataclass whose fields carry their defaults and a help string in
``field(metadata={"help": ...})``. :func:`load_config` starts from those defaults, applies a
YAML file (for example one of ``memgym/configs/*.yaml``) and then command-line overrides such as
``model=gdn2 train.steps=200 distractors=[4,8]``. Values are parsed as YAML scalars, checked
against the field's ``metadata={"min": ..., "max": ...}`` bounds (inclusive; applied to each
element of a tuple or list) and converted by :func:`memgym.core.convert.convert` (``"config"``
mode: type hints, ``Literal`` choices, tuples from lists, nested dataclasses, no unknown keys);
the first bad key raises :class:`~memgym.core.errors.ConfigError` naming the file and the dotted
key with the allowed keys, values or range. :func:`as_config` accepts a config in any of the
forms a ``gymnasium.make(id, config=...)`` takes. Checks beyond a range (choices, relations
between keys) are declared on the fields too and run by one loop
(:mod:`memgym.core.field_checks`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any, TypeVar

import yaml

from memgym.core.convert import convert, field_hints, strip_none, type_text
from memgym.core.errors import ConfigError
from memgym.core.paths import require_file
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
        require_file(path, "config file", "a YAML config file", error=ConfigError)
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


def build_config(cls: type[C], data: Mapping[str, Any], *, where: str = "config") -> C:
    """Instantiate ``cls`` from a (nested) mapping, validating every key and value.

    Keys given for a nested config update the field's default (e.g. an eval config's
    ``default_factory`` data split), they do not start from the nested class's own defaults.
    Values are converted by :func:`memgym.core.convert.convert` in its ``"config"`` mode.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    return convert(cls, _prepared(cls, data, where, ""), mode="config", where=where, error=ConfigError)


def as_config(cls: type[C], config: C | Mapping[str, Any] | str | Path | None, *, where: str) -> C:
    """``config`` as a ``cls`` instance: given one, ``None`` (the defaults), a (nested) mapping of
    its keys, or the path of a YAML file of them (what every ``gymnasium.make(id, config=...)`` takes).

    Raises:
        ConfigError: anything else, or a mapping or file that does not fit ``cls``.
    """
    if config is None:
        return cls()
    if isinstance(config, cls):
        return config
    if isinstance(config, Mapping):
        return build_config(cls, config, where=where)
    if isinstance(config, (str, Path)):
        return load_config(cls, path=config)
    raise ConfigError(
        f"{where}: expected a {cls.__name__}, a mapping of its keys or a YAML file path, got {type(config).__name__}"
    )


def _prepared(cls: type, data: Mapping[str, Any], where: str, prefix: str) -> Any:
    """``data`` with every nested-config mapping laid over its field's default, ``Path`` values as
    text, and every given number checked against its field's ``min``/``max`` first (so errors name
    the dotted key even where the nested class checks its own bounds in ``__post_init__``). Unknown
    keys and wrong types are left for :func:`convert` to report."""
    if not isinstance(data, Mapping):
        return data
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    out = dict(data)
    for name, value in data.items():
        if name not in fields:
            continue
        if isinstance(value, PurePath):  # a path given as a Path object is read as its text
            out[name] = value = str(value)
        _check_range(value, field_bounds(fields[name]), where, f"{prefix}{name}")
        nested = strip_none(field_hints(cls)[name])
        if dataclasses.is_dataclass(nested) and isinstance(value, Mapping):
            default = _field_default(fields[name])
            if dataclasses.is_dataclass(default):
                merged = config_to_dict(default)
                _merge(merged, value)
                value = merged
            out[name] = _prepared(nested, value, where, f"{prefix}{name}.")
    return out


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


def describe_config(cls: type, defaults: Any = None) -> list[tuple[str, str, str, str]]:
    """(dotted key, type, default, help) rows for ``--help`` output, nested configs flattened (with
    the defaults their enclosing config gives them); bounded fields say their range."""
    rows: list[tuple[str, str, str, str]] = []
    hints = field_hints(cls)
    defaults = cls() if defaults is None else defaults
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        value = getattr(defaults, field.name)
        if dataclasses.is_dataclass(hints[field.name]):
            nested = value if isinstance(value, hints[field.name]) else None
            rows += [(f"{field.name}.{k}", t, d, h) for k, t, d, h in describe_config(hints[field.name], nested)]
        else:
            help_text = field.metadata.get("help", "")
            limits = field_bounds(field)
            if limits.get("min") is not None or limits.get("max") is not None:
                bounds = f"({_range_text(limits.get('min'), limits.get('max'))})"
                help_text = f"{help_text} {bounds}" if help_text else bounds
            rows.append((field.name, type_text(hints[field.name]), repr(_plain(value)), help_text))
    return rows


def check_ranges(config: Any) -> None:
    """Check every field of a config dataclass against its metadata ``min``/``max`` (for
    ``__post_init__`` of configs that are also built in code).

    Raises:
        ConfigError: naming the class, field and allowed range.
    """
    for field in dataclasses.fields(config):
        _check_range(getattr(config, field.name), field_bounds(field), type(config).__name__, field.name)


SEED_BOUNDS = {"min": 0, "max": 2**64 - 1}
"""Bounds of every seed key (``seed``, ``seeds``, ``*_seed``, ``*_seeds``) where it declares none: what
numpy's and torch's generators both accept, so that a seed out of range is refused with the
config's other errors, before any run folder is made."""


def field_bounds(field: dataclasses.Field) -> Mapping[str, Any]:
    """``field``'s metadata with its ``min``/``max``; a seed key gets :data:`SEED_BOUNDS` for a bound it
    does not declare."""
    name = field.name
    if not (name in ("seed", "seeds") or name.endswith(("_seed", "_seeds"))):
        return field.metadata
    declared = {key: field.metadata[key] for key in SEED_BOUNDS if field.metadata.get(key) is not None}
    return {**field.metadata, **SEED_BOUNDS, **declared}


def _check_range(value: Any, metadata: Mapping[str, Any], where: str, key: str) -> None:
    """Raise ConfigError when a number (or any number in a list) is outside the field's min/max;
    numbers written as text (``"0"``) are checked too, as the config converter reads them as numbers."""
    low, high = metadata.get("min"), metadata.get("max")
    if low is None and high is None:
        return
    values = value if isinstance(value, (list, tuple)) else [value]
    for index, given in enumerate(values):
        number = _as_number(given)
        if number is None:
            continue
        name = f"{key}[{index}]" if isinstance(value, (list, tuple)) else key
        if low is not None and number < low:
            raise ConfigError(f"{where}: '{name}' = {given!r} is too small; expected {_range_text(low, high)}")
        if high is not None and number > high:
            raise ConfigError(f"{where}: '{name}' = {given!r} is too large; expected {_range_text(low, high)}")


def _as_number(value: Any) -> float | None:
    """``value`` as a number (an int, a float or numeric text), else None (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _range_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"a value from {low} to {high}"
    return f"a value >= {low}" if low is not None else f"a value <= {high}"


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
