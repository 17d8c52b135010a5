"""The GGUF de-quantisation cache: written once per file version, published whole, checked.

The real de-quantisation (SmolLM2's GGUF) runs in the slow tests that load it
(tests/backends/test_smollm2.py, the audio LM's brief run); here ``_write`` is replaced by a
recorder so that the cache's own logic runs in milliseconds."""

from __future__ import annotations

import os

import pytest
import torch

from memgym.backends import gguf_cache
from memgym.core.errors import ConfigError


@pytest.fixture
def writes(monkeypatch) -> list[str]:
    calls: list[str] = []

    def fake_write(model_dir: str, gguf_file: str, staging) -> None:
        calls.append(gguf_file)
        (staging / "config.json").write_text("{}")

    monkeypatch.setattr(gguf_cache, "_write", fake_write)
    return calls


def test_a_file_is_dequantised_once_and_again_when_it_changes(tmp_path, writes):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"v1")
    first = gguf_cache.dequantised_folder(tmp_path, "m.gguf", root=tmp_path / "cache")
    assert gguf_cache.dequantised_folder(tmp_path, "m.gguf", root=tmp_path / "cache") == first
    assert writes == ["m.gguf"] and (first / "config.json").is_file()
    gguf.write_bytes(b"v2, longer")
    os.utime(gguf, ns=(1, 1))
    second = gguf_cache.dequantised_folder(tmp_path, "m.gguf", root=tmp_path / "cache")
    assert second != first and writes == ["m.gguf", "m.gguf"]
    assert sorted(p.name for p in (tmp_path / "cache" / "gguf").iterdir()) == sorted([first.name, second.name])


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    def failing_write(model_dir: str, gguf_file: str, staging) -> None:
        (staging / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("killed")

    monkeypatch.setattr(gguf_cache, "_write", failing_write)
    (tmp_path / "m.gguf").write_bytes(b"v1")
    with pytest.raises(RuntimeError, match="killed"):
        gguf_cache.dequantised_folder(tmp_path, "m.gguf", root=tmp_path / "cache")
    assert list((tmp_path / "cache" / "gguf").iterdir()) == []


def test_a_missing_file_is_a_config_error(tmp_path, writes):
    with pytest.raises(ConfigError, match="absent.gguf"):
        gguf_cache.dequantised_folder(tmp_path, "absent.gguf", root=tmp_path / "cache")
    assert writes == []


def test_an_unwritable_cache_warns_and_gives_a_folder_for_this_process(tmp_path, writes):
    (tmp_path / "m.gguf").write_bytes(b"v1")
    (tmp_path / "file").write_text("not a folder")
    with pytest.warns(UserWarning, match="MEMGYM_CACHE"):
        folder = gguf_cache.dequantised_folder(tmp_path, "m.gguf", root=tmp_path / "file")
    assert (folder / "config.json").is_file() and writes == ["m.gguf"]
    with pytest.warns(UserWarning):  # the same process: the same copy, not a second de-quantisation
        assert gguf_cache.dequantised_folder(tmp_path, "m.gguf", root=tmp_path / "file") == folder
    assert writes == ["m.gguf"]
    gguf_cache._process_copy.cache_clear()


def test_the_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(gguf_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_cache.cache_root() == tmp_path / "xdg" / "memgym"
    monkeypatch.setenv(gguf_cache.CACHE_ENV, str(tmp_path / "mine"))
    assert gguf_cache.cache_root() == tmp_path / "mine"


def test_a_weight_changed_by_save_and_reload_is_refused():
    weights = {"a": torch.ones(3), "b": torch.zeros(2)}
    gguf_cache._check_same(weights, {k: v.clone() for k, v in weights.items()})
    with pytest.raises(RuntimeError, match="weight b"):
        gguf_cache._check_same(weights, {"a": torch.ones(3), "b": torch.tensor([0.0, 1e-7])})
    with pytest.raises(RuntimeError, match="weight b"):
        gguf_cache._check_same(weights, {"a": torch.ones(3)})
