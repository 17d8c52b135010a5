"""Open a source library by name from a small typed config (used by benchmark configs)."""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.core.errors import ConfigError
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED
from memgym.datasets.sources.library import SourceLibrary

TONE_IDENTITIES = 60
"""Identities of the tones library unless ``library.identities`` says otherwise."""


@dataclasses.dataclass(frozen=True)
class LibraryConfig:
    """Which sound library to use."""

    kind: Literal["synthetic_env", "synthetic_instruments", "esc50", "nsynth", "tones"] = dataclasses.field(
        default="synthetic_env", metadata={"help": "sound source library (tones = fast diagnostic harmonic tones)"}
    )
    root: str = dataclasses.field(default="", metadata={"help": "local data folder (esc50 / nsynth)"})
    instrument_set: int = dataclasses.field(default=1, metadata={"help": "NSynth / synthetic instrument set (1-3)"})
    seed: int = dataclasses.field(default=0, metadata={"help": "seed of the synthetic libraries' content"})
    room: Literal["simple", "pyroomacoustics"] = dataclasses.field(
        default="simple",
        metadata={"help": "room model of the synthetic libraries (pyroomacoustics: image-source shoebox)"},
    )
    exclude_duplicates: bool = dataclasses.field(
        default=False, metadata={"help": "nsynth: drop eval notes that duplicate a training waveform"}
    )
    cache_dir: str = dataclasses.field(
        default="", metadata={"help": "optional folder caching synthesised clips/notes", **NOT_HASHED}
    )
    identities: int = dataclasses.field(
        default=TONE_IDENTITIES,
        metadata={
            "help": "tones: number of identities (a symbolic vocabulary wider than the memory's key channels)",
            "min": 1,
            **ADDED_FIELD,
        },
    )

    def __post_init__(self) -> None:
        if self.identities != TONE_IDENTITIES and self.kind != "tones":
            raise ConfigError(f"library.identities sets the tones library's size; library.kind is {self.kind}")


def open_library(config: LibraryConfig | str) -> SourceLibrary:
    """Build the library named by ``config`` (a :class:`LibraryConfig` or just its ``kind``)."""
    if isinstance(config, str):
        config = LibraryConfig(kind=config)  # type: ignore[arg-type]
    if config.kind == "synthetic_env":
        from memgym.datasets.sources.synthetic_environment import SyntheticEnvironmentLibrary

        return SyntheticEnvironmentLibrary(seed=config.seed, cache_dir=config.cache_dir or None, room=config.room)
    if config.kind == "synthetic_instruments":
        from memgym.datasets.sources.synthetic_instruments import SyntheticInstrumentLibrary

        return SyntheticInstrumentLibrary(
            config.instrument_set, seed=config.seed, cache_dir=config.cache_dir or None, room=config.room
        )
    if config.kind == "tones":
        from memgym.datasets.sources.tones import ToneLibrary

        return ToneLibrary(identities=config.identities)
    if not config.root:
        raise ConfigError(f"library.kind={config.kind} needs library.root=<local folder>")
    if config.kind == "esc50":
        from memgym.datasets.sources.esc50 import ESC50Library

        return ESC50Library(config.root)
    if config.kind == "nsynth":
        from memgym.datasets.sources.nsynth import NSynthLibrary

        return NSynthLibrary(
            config.root, instrument_set=config.instrument_set, exclude_duplicates=config.exclude_duplicates
        )
    raise ConfigError(f"unknown library.kind '{config.kind}'")
