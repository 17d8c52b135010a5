"""The suite's scheduling list (tests/conftest.py, ``LONGEST_FIRST``) names test files that exist:
a renamed file would silently fall back to collection order and could end up at the tail."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONGEST_FIRST


def test_longest_first_names_existing_test_files_once():
    root = Path(__file__).resolve().parent.parent
    assert [p for p in LONGEST_FIRST if not (root / p).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
