"""Fixtures for backend tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_hf_models import build_tiny_llama


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """A tiny random Llama folder shared by the session."""
    return build_tiny_llama(tmp_path_factory.mktemp("tiny_llama"))
