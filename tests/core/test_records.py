import dataclasses
import json
from typing import Literal

import pytest

from memgym.core.episode import Episode, TaskItem
from memgym.core.errors import RecordError
from memgym.core.records import SCHEMA_VERSION, Record, from_json, read_jsonl, record, write_jsonl


@record("test.point")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Point(Record):
    x: float
    y: float
    label: str | None = None


@record("test.shape")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Shape(Record):
    name: str
    kind_name: Literal["polygon", "polyline"]
    points: tuple[Point, ...]
    pair: tuple[int, str]
    by_name: dict[str, Point] = dataclasses.field(default_factory=dict)


def make_shape() -> Shape:
    p = Point(x=1, y=2.5)
    return Shape(
        name="s", kind_name="polygon", points=(p, Point(x=0.0, y=-1.0, label="b")), pair=(3, "x"), by_name={"a": p}
    )


def test_nested_record_round_trips_through_dict_and_json():
    shape = make_shape()
    assert Shape.from_dict(shape.to_dict()) == shape
    assert from_json(shape.to_json()) == shape
    assert json.loads(shape.to_json())["schema"] == SCHEMA_VERSION


def test_int_given_for_float_field_is_accepted_and_converted():
    assert Point.from_dict({"x": 1, "y": 2}).x == 1.0


@pytest.mark.parametrize(
    "data, message",
    [
        ({"x": 1.0}, "^Point: y: missing"),
        ({"x": 1.0, "y": 2.0, "z": 3}, "^Point: unknown key 'z'; allowed keys: label, x, y$"),
        ({"x": "a", "y": 2.0}, "^Point: x: expected a number, got 'a'$"),
        ({"x": True, "y": 2.0}, "x: expected a number, got True"),
        ({"x": 1.0, "y": 2.0, "label": 3}, "label: expected a string, got 3"),
    ],
)
def test_bad_fields_name_the_problem(data, message):
    with pytest.raises(RecordError, match=message):
        Point.from_dict(data)


def test_literal_values_are_checked():
    data = make_shape().to_dict()
    data["kind_name"] = "circle"
    with pytest.raises(RecordError, match="Shape: kind_name: 'circle' is not allowed; allowed values: 'polygon' or"):
        Shape.from_dict(data)


def test_nested_and_tuple_errors_name_the_key_path(tmp_path):
    data = make_shape().to_dict()
    data["points"][1]["x"] = "loud"
    with pytest.raises(RecordError, match=r"^Shape: points\[1\]\.x: expected a number, got 'loud'$"):
        Shape.from_dict(data)
    for pair, message in (
        ([1], r"pair\[1\]: missing item"),
        ([1, "a", 3], "pair: expected 2 items"),
        (5, "pair: expected a list"),
    ):
        with pytest.raises(RecordError, match=message):
            Shape.from_dict({**make_shape().to_dict(), "pair": pair})
    path = tmp_path / "bad.jsonl"
    envelope = {"schema": SCHEMA_VERSION, "kind": "test.point", "data": {"x": 1, "y": [2]}}
    path.write_text(Point(x=0, y=0).to_json() + "\n" + json.dumps(envelope) + "\n")
    with pytest.raises(RecordError, match=r"bad.jsonl:2: Point: y: expected a number, got \[2\]$"):
        list(read_jsonl(path))


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"schema": 1, "kind": "test.point", "data": [1]}', r"^x.jsonl:1: Point: expected an object, got list$"),
        ('{"schema": 1, "kind": "test.point", "data": {"x": 1}, "extra": 2}', "keys schema, kind, data"),
        ('{"schema": 1, "kind": "test.point", "data": {"x": 1, "y": 2, "z": 0}}', r"x.jsonl:1: Point: unknown key 'z'"),
        (
            '{"schema": 1, "kind": "test.shape", "data": {"name": 3}}',
            r"x.jsonl:1: Shape: name: expected a string, got 3",
        ),
    ],
)
def test_bad_envelopes_are_one_error_naming_the_line(line, message):
    with pytest.raises(RecordError, match=message):
        from_json(line, where="x.jsonl:1")


def test_jsonl_round_trip_and_error_names_file_and_line(tmp_path):
    path = tmp_path / "shapes.jsonl"
    write_jsonl(path, [make_shape(), Point(x=0, y=0)])
    assert list(read_jsonl(path)) == [make_shape(), Point(x=0.0, y=0.0)]
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(RecordError, match=r"shapes.jsonl:3: not valid JSON"):
        list(read_jsonl(path))


def test_incompatible_schema_version_is_refused(tmp_path):
    path = tmp_path / "old.jsonl"
    envelope = {"schema": SCHEMA_VERSION + 1, "kind": "test.point", "data": {"x": 1, "y": 2}}
    path.write_text(json.dumps(envelope) + "\n")
    with pytest.raises(RecordError, match="schema .* is not supported"):
        list(read_jsonl(path))


def test_unknown_kind_is_refused():
    with pytest.raises(RecordError, match="unknown record kind 'nope'"):
        from_json(json.dumps({"schema": SCHEMA_VERSION, "kind": "nope", "data": {}}))


def test_registering_a_non_record_or_a_taken_kind_fails():
    with pytest.raises(TypeError):
        record("test.bad")(int)
    with pytest.raises(TypeError, match="already registered"):

        @record("test.point")
        @dataclasses.dataclass(frozen=True, kw_only=True)
        class Other(Record):
            pass


def test_episode_subclass_round_trip():
    @record("test.episode")
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class MyEpisode(Episode):
        frames: tuple[int, ...] = ()

    episode = MyEpisode(
        episode_id="e1",
        benchmark="b",
        frames=(1, 2),
        items=(TaskItem(item_id="q", task="qa", answer=["a", "b"], annotations={"type": "social"}),),
    )
    assert from_json(episode.to_json()) == episode
