import dataclasses
from typing import Literal

import pytest

from memgym.core.config import describe_config, dump_config, load_config, parse_override
from memgym.core.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    steps: int = dataclasses.field(default=100, metadata={"help": "optimiser steps"})
    lr: float = 1e-3


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    model: Literal["gdn2", "kda", "attention"] = "gdn2"
    seed: int = 0
    distractors: tuple[int, ...] = (4, 8, 16)
    data_dir: str | None = None
    verbose: bool = False
    train: TrainConfig = TrainConfig()


def test_defaults_file_and_overrides_apply_in_order(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model: kda\ntrain:\n  steps: 5\n")
    config = load_config(ExperimentConfig, path=path, overrides=["train.lr=0.5", "distractors=[4,8]", "seed=3"])
    assert config == ExperimentConfig(model="kda", seed=3, distractors=(4, 8), train=TrainConfig(steps=5, lr=0.5))


def test_dump_and_load_round_trip(tmp_path):
    config = ExperimentConfig(model="attention", data_dir="/x", train=TrainConfig(steps=7))
    dump_config(config, tmp_path / "c.yaml")
    assert load_config(ExperimentConfig, path=tmp_path / "c.yaml") == config


@pytest.mark.parametrize(
    "override, message",
    [
        ("modle=kda", r"unknown key 'modle' \(did you mean 'model'\?\); allowed keys: .*model"),
        ("model=mamba", r"model: 'mamba' is not allowed; allowed values: 'gdn2', 'kda' or 'attention'"),
        ("seed=abc", "^command line: seed: expected an integer, got 'abc'$"),
        ("seed=2.5", "seed: expected an integer, got 2.5"),
        ("train.stepz=3", r"unknown key 'train.stepz' \(did you mean 'steps'\?\); allowed keys: lr, steps"),
        ("train=3", "train: expected a mapping of TrainConfig keys, got 3"),
        ("train.lr=loud", "train.lr: expected a number, got 'loud'"),
        ("distractors=[4,x]", r"distractors\[1\]: expected an integer, got 'x'"),
        ("verbose=maybe", "verbose: expected true or false, got 'maybe'"),
        ("noequals", "not of the form key=value"),
    ],
)
def test_bad_overrides_name_the_key_and_allowed_values(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(ExperimentConfig, overrides=[override])


def test_bad_file_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load_config(ExperimentConfig, path=path)
    path.write_text("- a list\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(ExperimentConfig, path=path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(ExperimentConfig, path=tmp_path / "missing.yaml")
    path.write_text("train:\n  lr: loud\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: train.lr: expected a number, got 'loud'$"):
        load_config(ExperimentConfig, path=path)
    with pytest.raises(ConfigError, match=r"bad.yaml \+ command line: unknown key 'train.x'; allowed keys: lr, steps"):
        load_config(ExperimentConfig, path=path, overrides=["train.lr=1", "train.x=1"])


def test_optional_and_parse_override():
    assert load_config(ExperimentConfig, overrides=["data_dir=null"]).data_dir is None
    assert parse_override("a.b=[1, 2]") == ("a.b", [1, 2])


def test_describe_lists_nested_keys_with_help():
    rows = {
        key: (type_text, default, help_text) for key, type_text, default, help_text in describe_config(ExperimentConfig)
    }
    assert rows["train.steps"] == ("int", "100", "optimiser steps")
    assert rows["model"] == ("{'gdn2', 'kda', 'attention'}", "'gdn2'", "")
    assert rows["distractors"][:2] == ("list[int]", "[4, 8, 16]")
    assert rows["data_dir"][:2] == ("str | null", "None")


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    train: TrainConfig = dataclasses.field(default_factory=lambda: TrainConfig(steps=7, lr=0.5))


def test_nested_keys_update_the_fields_own_default():
    assert load_config(EvalConfig, overrides=["train.lr=0.1"]) == EvalConfig(train=TrainConfig(steps=7, lr=0.1))
    assert load_config(EvalConfig) == EvalConfig()


@dataclasses.dataclass(frozen=True)
class Bounded:
    width: int = dataclasses.field(default=8, metadata={"min": 1, "max": 64})
    rate: float = dataclasses.field(default=0.5, metadata={"min": 0.0, "max": 1.0})
    steps: tuple[int, ...] = dataclasses.field(default=(1, 2), metadata={"min": 1})


@dataclasses.dataclass(frozen=True)
class Outer:
    inner: Bounded = dataclasses.field(default_factory=Bounded)


def test_metadata_bounds_are_checked_with_the_key_path():
    assert load_config(Outer, overrides=["inner.width=1", "inner.rate=1", "inner.steps=[1,9]"]).inner.width == 1
    with pytest.raises(ConfigError, match=r"'inner.width' = 0 is too small; expected a value from 1 to 64"):
        load_config(Outer, overrides=["inner.width=0"])
    with pytest.raises(ConfigError, match=r"'inner.width' = 65 is too large"):
        load_config(Outer, overrides=["inner.width=65"])
    with pytest.raises(ConfigError, match=r"'inner.rate' = -0.1 is too small"):
        load_config(Outer, values={"inner": {"rate": -0.1}})
    with pytest.raises(ConfigError, match=r"'inner.steps\[1\]' = 0 is too small; expected a value >= 1"):
        load_config(Outer, overrides=["inner.steps=[3,0]"])


def test_configs_built_in_code_check_their_bounds():
    from memgym.sensors.camera import CameraConfig

    with pytest.raises(ConfigError, match=r"CameraConfig: 'width' = 0 is too small"):
        CameraConfig(width=0)
    with pytest.raises(ConfigError, match=r"'height' = 50000 is too large"):
        CameraConfig(height=50000)


def test_describe_states_bounds():
    rows = {key: help_text for key, _, _, help_text in describe_config(Outer)}
    assert rows["inner.width"] == "(a value from 1 to 64)" and rows["inner.steps"] == "(a value >= 1)"


@dataclasses.dataclass(frozen=True)
class Spans:
    span: tuple[int, int] = (18, 32)
    offsets: tuple[float, float] = (2.0, 60.0)


@dataclasses.dataclass(frozen=True)
class WithSpans:
    stream: Spans = dataclasses.field(default_factory=Spans)


def test_fixed_length_tuples_from_lists_name_the_key():
    config = load_config(WithSpans, overrides=["stream.span=[4,8]", "stream.offsets=[1,2]"])
    assert config.stream == Spans(span=(4, 8), offsets=(1.0, 2.0))
    assert isinstance(config.stream.offsets[0], float)
    with pytest.raises(ConfigError, match=r"^command line: stream.span: expected 2 items, got \[4, 8, 16\]$"):
        load_config(WithSpans, overrides=["stream.span=[4,8,16]"])
    with pytest.raises(ConfigError, match=r"stream.span\[1\]: missing item"):
        load_config(WithSpans, overrides=["stream.span=[4]"])
    with pytest.raises(ConfigError, match=r"stream.offsets\[1\]: expected a number, got 'far'"):
        load_config(WithSpans, overrides=["stream.offsets=[1,far]"])


@dataclasses.dataclass(frozen=True)
class Grid:
    cells: int = 4


@dataclasses.dataclass(frozen=True)
class Ring:
    radius: float = 1.0


@dataclasses.dataclass(frozen=True)
class Layout:
    shape: Grid | Ring | None = None
    label: int | str = 0


def test_union_fields_name_the_member_key_or_the_types_accepted():
    assert load_config(Layout, overrides=["shape.cells=9"]).shape == Grid(cells=9)
    assert load_config(Layout, overrides=["label=x"]).label == "x"
    with pytest.raises(ConfigError, match=r"unknown key 'shape.zz'; allowed keys: cells$"):
        load_config(Layout, overrides=["shape.zz=1"])
    with pytest.raises(ConfigError, match=r"label: expected int or str, got \[1\]$"):
        load_config(Layout, overrides=["label=[1]"])


@dataclasses.dataclass(frozen=True)
class _Seeded:
    seed: int = 0
    eval_seeds: tuple[int, ...] = (0,)
    stream_seed: int = dataclasses.field(default=0, metadata={"min": 5})


@pytest.mark.parametrize(
    "override, message",
    [
        (
            "seed=18446744073709551616",
            r"'seed' = 18446744073709551616 is too large; expected a value from 0 to 18446744073709551615",
        ),
        ("seed=-1", r"'seed' = -1 is too small"),
        ("eval_seeds=[1,-2]", r"'eval_seeds\[1\]' = -2 is too small"),
        ("stream_seed=4", r"'stream_seed' = 4 is too small; expected a value from 5 to"),
        ("stream_seed=18446744073709551616", r"'stream_seed' = 18446744073709551616 is too large"),
    ],
)
def test_seed_keys_are_bounded_to_what_the_generators_accept(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(_Seeded, overrides=[override])
    assert load_config(_Seeded, overrides=[f"seed={2**64 - 1}"]).seed == 2**64 - 1
