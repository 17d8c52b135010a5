"""``preset=decisive`` of ``memgym generate voxmem`` / ``memgym eval voxmem``: what it builds and plays."""

from __future__ import annotations

import collections

import pytest

from memgym.core.config import load_config
from memgym.core.errors import ConfigError
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.pipelines.voxmem.evaluation import VoxMemEvalConfig
from memgym.pipelines.voxmem.presets import DECISIVE_ITEMS, apply_preset


def test_decisive_build_has_100_items_per_evidence_type_and_operation(tmp_path):
    """25 items per cell of the 16 buildable cells: every evidence type and every operation holds
    100 items, so a 95 % interval of an accuracy is at most 19.6 points wide (2 x 1.96 x sqrt(0.25/100))."""
    overrides, name = apply_preset(("preset=decisive", f"out={tmp_path}"), "generate")
    config = load_config(VoxMemConfig, overrides=overrides)
    assert name == "decisive" and config.items == DECISIVE_ITEMS == 400 and config.out == str(tmp_path)
    assert config.budgets == ("8k", "64k") and (config.asr.window, config.asr.batch_turns) == ("fit", 8)
    schedule, sources = VoxMemBuilder(config).items.layout()
    by_type = collections.Counter(e for e, _, _ in schedule)
    by_operation = collections.Counter(op for _, op, _ in schedule)
    assert set(by_type.values()) == {100} and set(by_operation.values()) == {100}
    assert len(sources) == 100 and 2 * 1.96 * (0.25 / 100) ** 0.5 <= 0.20


def test_decisive_eval_and_the_keys_beside_it():
    config = load_config(VoxMemEvalConfig, overrides=apply_preset(("preset=decisive", "name=small"), "eval")[0])
    assert config.dataset == "runs/voxmem/decisive" and config.budgets == ("8k", "64k") and config.name == "small"
    assert "cascaded_evidence_only" in config.memories and config.turn_cache.endswith("turn_cache.jsonl")
    assert config.asr.batch_scope == "history"
    one = load_config(VoxMemEvalConfig, overrides=apply_preset(("preset=decisive", "memory=cascaded"), "eval")[0])
    assert one.memories == ("cascaded",)  # memory= replaces the preset's memories
    assert apply_preset(("items=3",), "generate") == (("items=3",), "")
    with pytest.raises(ConfigError, match="unknown; choose from decisive"):
        apply_preset(("preset=huge",), "eval")
    with pytest.raises(ConfigError, match="2 times"):
        apply_preset(("preset=decisive", "preset=decisive"), "generate")
