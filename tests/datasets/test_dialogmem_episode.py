"""The episode record: deterministic construction, JSONL round trip, dangling-id checks, stats."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dialogmem_fixtures import LOG, OBJECTS, TRAVERSAL

from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError, RecordError
from memgym.datasets.dialogmem.content import COUNTS
from memgym.datasets.dialogmem.episode import ConstructionConfig, DialogMemEpisode, build_episode
from memgym.datasets.dialogmem.statistics import dataset_statistics


def build(seed: int, episode_id: str = "e0", config: ConstructionConfig | None = None) -> DialogMemEpisode:
    return build_episode(
        episode_id=episode_id,
        objects=OBJECTS,
        traversal=TRAVERSAL,
        rng=np.random.default_rng(seed),
        config=config or ConstructionConfig(),
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


def test_the_sighting_gap_is_recorded_in_the_episode_and_counts_its_times_seen(tmp_path):
    """``construction.max_sighting_gap`` decides the annotation's ``times_seen`` words and is
    written into the episode's annotations (where the memories read it); a bad recorded value is
    refused when the record is checked."""
    episodes = {gap: build(3, f"e{gap}", ConstructionConfig(max_sighting_gap=gap)) for gap in (0, 2, 6)}
    words = {}
    for gap, episode in episodes.items():
        assert episode.annotations["max_sighting_gap"] == gap
        words[gap] = {m.object_id: m.value for m in episode.memory if m.key == "times_seen"}
        assert words[gap] == {o: COUNTS[c] for o, c in LOG.sightings(gap).items() if c in COUNTS}
    # the fixture's mug is seen in steps 1-3 and 6-7, the bed in 17, 19 and 22-23
    assert words[0]["mug_2"] == "twice" and words[2]["mug_2"] == "once" and words[6]["mug_2"] == "once"
    assert words[0]["bed_8"] == "three times" and words[2]["bed_8"] == "once"
    assert build(3).annotations["max_sighting_gap"] == 6  # the default
    Dataset([episodes[2]]).save(tmp_path / "d.jsonl")
    assert Dataset.load(tmp_path / "d.jsonl")[0].annotations["max_sighting_gap"] == 2
    for bad in (-1, 2.5, "6", True):
        with pytest.raises(RecordError, match="max_sighting_gap"):
            dataclasses.replace(episodes[6], annotations={**episodes[6].annotations, "max_sighting_gap": bad}).check()
    for bad in (-1, 2.5):
        with pytest.raises(ConfigError, match="max_sighting_gap"):
            ConstructionConfig(max_sighting_gap=bad)
