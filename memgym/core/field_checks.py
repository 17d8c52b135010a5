"""Config checks declared on the fields they check, run by one loop.

A field names its checks in its metadata, beside its help text::

    breakdowns: tuple[str, ...] = dataclasses.field(
        default=(), metadata={"help": "extra tables", **checked(members(BREAKDOWNS))}
    )

and the config's ``__post_init__`` calls :func:`check_fields`. A check is called with the field's
name, its value and the whole config (checks that relate two fields read the other from it) and
returns what is wrong, one line naming the field, or None. :func:`check_fields` runs the checks of
every field in the order the fields are declared and raises the first problem as a
:class:`~memgym.core.errors.ConfigError` (printed as one ``memgym: error:`` line). Bounds of
numbers stay in ``min``/``max`` metadata (:func:`memgym.core.config.check_ranges`).

>>> import dataclasses
>>> @dataclasses.dataclass(frozen=True)
... class Tables:
...     names: tuple[str, ...] = dataclasses.field(default=(), metadata=checked(members(("a", "b"))))
...     resamples: int = 0
...     intervals: bool = dataclasses.field(
...         default=False, metadata=checked(requires(lambda c: c.resamples > 0, "intervals need resamples > 0"))
...     )
...     def __post_init__(self) -> None:
...         check_fields(self)
>>> Tables(names=("a", "c"))
Traceback (most recent call last):
...
memgym.core.errors.ConfigError: names: 'c' is unknown; choose from a, b
>>> Tables(intervals=True)
Traceback (most recent call last):
...
memgym.core.errors.ConfigError: intervals need resamples > 0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from memgym.core.errors import ConfigError

Check = Callable[[str, Any, Any], "str | None"]
"""``(field name, value, config) -> problem`` (one line) or None when the value is fine."""

CHECKS = "checks"
"""The field metadata key holding a field's checks (:func:`checked`)."""


def checked(*checks: Check) -> dict[str, tuple[Check, ...]]:
    """Field metadata declaring ``checks`` (merge it into the field's ``metadata``)."""
    return {CHECKS: checks}


def check_fields(config: Any) -> None:
    """Run the declared checks of every field of the dataclass ``config``, in field order.

    Raises:
        ConfigError: the first problem a check reports.
    """
    for field in dataclasses.fields(config):
        for check in field.metadata.get(CHECKS, ()):
            problem = check(field.name, getattr(config, field.name), config)
            if problem:
                raise ConfigError(problem)


def members(
    choices: Iterable[str], problem: str = "is unknown; choose from {choices}", key: Callable[[Any], Any] = str
) -> Check:
    """Every element of a sequence field (or a text field's value) is one of ``choices`` once
    mapped by ``key``; else ``"<field>: '<first bad element>' <problem>"``, ``{choices}`` in
    ``problem`` standing for the choices joined by commas (in the order given)."""
    allowed = tuple(choices)

    def check(name: str, value: Any, config: Any) -> str | None:
        bad = [v for v in ((value,) if isinstance(value, str) else value) if key(v) not in allowed]
        return f"{name}: '{bad[0]}' {problem.format(choices=', '.join(allowed))}" if bad else None

    return check


def each(problem: Callable[[str, Any, Any], str | None]) -> Check:
    """``problem(field name, element, config)`` for every element of a sequence field; the first
    one found."""

    def check(name: str, value: Any, config: Any) -> str | None:
        return next((p for v in value if (p := problem(name, v, config))), None)

    return check


def requires(condition: Callable[[Any], bool], problem: str) -> Check:
    """When the field is set (truthy), ``condition(config)`` must hold; else ``problem``."""

    def check(name: str, value: Any, config: Any) -> str | None:
        return problem if value and not condition(config) else None

    return check
