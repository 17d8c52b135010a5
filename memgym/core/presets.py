"""Named presets of a job's command line: ``preset=NAME`` stands for a list of ``key=value`` overrides.

A preset's overrides come after the ``--config`` file and before the command line's other keys
(which win). A command-line key may also stand for a preset key it conflicts with (``memory=NAME``
for a preset's ``memories=[...]``): ``replaced_by`` names those, and such preset keys are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

from memgym.core.errors import ConfigError


def _key(override: str) -> str:
    return override.split("=", 1)[0].strip()


def expand_preset(
    overrides: tuple[str, ...],
    presets: Mapping[str, tuple[str, ...]],
    replaced_by: Mapping[str, frozenset[str]] | None = None,
) -> tuple[tuple[str, ...], str]:
    """``overrides`` with a ``preset=NAME`` key replaced by ``presets[NAME]`` (placed first);
    returns them and the preset name ("" when none).

    Args:
        overrides: the command line's ``key=value`` items.
        presets: preset name -> its overrides (for this job).
        replaced_by: preset key -> command-line keys that replace it (the preset's is dropped).
    Raises:
        ConfigError: an unknown preset, or more than one ``preset=`` key.
    """
    named = [o for o in overrides if _key(o) == "preset"]
    if not named:
        return overrides, ""
    if len(named) > 1:
        raise ConfigError(f"preset is given {len(named)} times: {', '.join(named)}")
    name = named[0].split("=", 1)[1].strip()
    if name not in presets:
        raise ConfigError(f"preset='{name}' is unknown; choose from {', '.join(presets)}")
    rest = tuple(o for o in overrides if o not in named)
    given = {_key(o) for o in rest}
    dropped = {key for key, by in (replaced_by or {}).items() if given & by}
    return (*(o for o in presets[name] if _key(o) not in dropped), *rest), name
