import pytest

from memgym.core.episode import Dataset, Episode, TaskItem
from memgym.core.errors import RecordError


def episodes(n: int) -> list[Episode]:
    return [
        Episode(
            episode_id=f"ep{i}",
            benchmark="b",
            items=(TaskItem(item_id="q0", task="qa", answer=i),),
            annotations={"scene": f"s{i % 3}"},
        )
        for i in range(n)
    ]


def test_dataset_save_load_round_trip(tmp_path):
    data = Dataset(episodes(5))
    data.save(tmp_path / "d.jsonl")
    loaded = Dataset.load(tmp_path / "d.jsonl")
    assert list(loaded) == list(data)
    assert loaded.by_id("ep3").items[0].answer == 3


def test_duplicated_episode_ids_are_rejected():
    eps = episodes(2)
    with pytest.raises(RecordError, match="duplicated episode id 'ep0'"):
        Dataset([eps[0], eps[1], eps[0]])


def test_filter_by_annotation_and_predicate():
    data = Dataset(episodes(9))
    assert [e.episode_id for e in data.filter(scene="s1")] == ["ep1", "ep4", "ep7"]
    assert len(data.filter(lambda e: e.items[0].answer > 5, scene="s0")) == 1


def test_split_is_deterministic_complete_and_stable_under_growth():
    small = Dataset(episodes(200)).split({"train": 0.8, "test": 0.2})
    again = Dataset(episodes(200)).split({"train": 0.8, "test": 0.2})
    assert [e.episode_id for e in small["test"]] == [e.episode_id for e in again["test"]]
    assert len(small["train"]) + len(small["test"]) == 200
    assert 20 < len(small["test"]) < 60
    bigger = Dataset(episodes(400)).split({"train": 0.8, "test": 0.2})
    assert {e.episode_id for e in small["test"]} <= {e.episode_id for e in bigger["test"]}


def test_split_fractions_are_validated():
    with pytest.raises(RecordError, match="sum to 1"):
        Dataset(episodes(3)).split({"a": 0.5, "b": 0.4})


def test_corrupt_episode_file_names_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    Dataset(episodes(2)).save(path)
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:-5] + "\n")
    with pytest.raises(RecordError, match=r"d.jsonl:2"):
        Dataset.load(path)
