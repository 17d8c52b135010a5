"""The episode record: deterministic construction, JSONL round trip, dangling-id checks, stats."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dialogmem_fixtures import OBJECTS, TRAVERSAL

from memgym.core.episode import Dataset
from memgym.core.errors import RecordError
from memgym.datasets.dialogmem.episode import DialogMemEpisode, build_episode
from memgym.datasets.dialogmem.statistics import dataset_statistics


def build(seed: int, episode_id: str = "e0") -> DialogMemEpisode:
    return build_episode(
        episode_id=episode_id,
        objects=OBJECTS,
        traversal=TRAVERSAL,
        rng=np.random.default_rng(seed),
    )


def test_construction_is_deterministic_and_round_trips(tmp_path):
    a, b = build(3), build(3)
    assert a == b
    assert a != build(4)
    Dataset([a, build(4, "e1")]).save(tmp_path / "d.jsonl")
    loaded = Dataset.load(tmp_path / "d.jsonl")
    assert loaded[0] == a and isinstance(loaded[0], DialogMemEpisode)
    assert loaded[0].dialogue[0].spec.content == a.dialogue[0].spec.content


def test_check_reports_dangling_ids_and_bad_steps():
    episode = build(3)
    episode.check()
    bad_turn = dataclasses.replace(episode.dialogue[0].spec, referenced=("ghost_9",))
    broken = dataclasses.replace(episode, dialogue=(dataclasses.replace(episode.dialogue[0], spec=bad_turn),))
    with pytest.raises(RecordError, match="unknown object"):
        broken.check()
    late = dataclasses.replace(episode.dialogue[0].spec, step=len(TRAVERSAL.frames))
    with pytest.raises(RecordError, match="outside"):
        dataclasses.replace(episode, dialogue=(dataclasses.replace(episode.dialogue[0], spec=late),)).check()
    bad_item = dataclasses.replace(episode.items[0], annotations={"object_id": "ghost_9"})
    with pytest.raises(RecordError, match="unknown object"):
        dataclasses.replace(episode, items=(bad_item,)).check()


def test_duplicated_episode_ids_are_refused():
    with pytest.raises(RecordError, match="duplicated episode id"):
        Dataset([build(1), build(2)])


def test_statistics_tables():
    stats = dataset_statistics([build(s, f"e{s}") for s in range(3)])
    summary = stats["summary"][0]
    assert summary["episodes"] == 3
    assert summary["qa_items"] == sum(r["n"] for r in stats["items"] if r["task"] == "qa")
    assert 0 < summary["qa_verbalised_%"] < 100
    navigation = [i for s in range(3) for i in build(s, f"e{s}").items if i.task == "navigation"]
    dialogue_only = sum(not i.annotations["names_category"] for i in navigation)
    assert summary["navigation_dialogue_only_%"] == pytest.approx(100 * dialogue_only / len(navigation))
    assert {r["turn_type"] for r in stats["turns"]} >= {"navigation", "commentary"}
