"""Doctests of the package: pyproject.toml runs pytest with ``--doctest-modules`` over ``tests/`` and
``memgym/`` (``pytest --doctest-modules memgym`` is part of the suite). This hook keeps that
collection to memgym's own modules that carry ``>>>`` examples: a module without one is not imported
for it, and the files under ``tests/`` are collected as tests only (their support modules and the
plugin package the registry tests install are imported by those tests, under their own names)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

PACKAGE = Path(__file__).resolve().parent / "memgym"


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    collectors = yield
    if file_path.suffix != ".py" or (PACKAGE in file_path.parents and ">>>" in file_path.read_text(encoding="utf-8")):
        return collectors
    return [collector for collector in collectors if not isinstance(collector, DoctestModule)]
