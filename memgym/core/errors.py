"""User-facing errors.

Every error a user can cause by bad input (a malformed config, an unknown registry name, a
corrupt episode file, an incompatible results folder, a missing data folder) is a
:class:`MemgymError`. The CLI prints its message as one line and exits with code 2; library
callers can catch it. The message always names the file, key or setting and what was expected.
"""

from __future__ import annotations


class MemgymError(Exception):
    """An error caused by the user's input, reported as one clear line."""


class ConfigError(MemgymError):
    """A config file or ``key=value`` override that does not fit its typed schema."""


class RegistryError(MemgymError, KeyError):
    """An unknown name asked of a registry, or a bad registration."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RecordError(MemgymError):
    """A record file (episodes, results) that cannot be read as the expected schema."""


class FeatureUnavailableError(MemgymError):
    """A CLI subcommand or option that no registered benchmark implements yet."""


class PluginImportError(RegistryError):
    """A registered name whose module cannot be imported (usually an optional extra not installed)."""
