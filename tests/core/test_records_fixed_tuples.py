"""Regression: fixed-length tuple fields (``tuple[float, float, float]``) decode their values."""

from __future__ import annotations

import dataclasses

from memgym.core.records import Record, record


@record("test.pose_record")
@dataclasses.dataclass(frozen=True, kw_only=True)
class PoseRecord(Record):
    position: tuple[float, float, float]
    label: tuple[str, int]


def test_fixed_length_tuples_round_trip():
    pose = PoseRecord(position=(1.0, 2.5, -3.0), label=("a", 2))
    assert PoseRecord.from_dict(pose.to_dict()) == pose
