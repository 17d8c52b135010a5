import dataclasses

import numpy as np
import torch

from memgym.core.seeding import config_hash, episode_rng, episode_torch_seed


@dataclasses.dataclass(frozen=True)
class Cfg:
    a: int = 1
    b: tuple[int, ...] = (1, 2)


def test_config_hash_is_stable_and_sensitive():
    assert config_hash(Cfg()) == config_hash(Cfg())
    assert config_hash(Cfg()) != config_hash(Cfg(a=2))
    assert config_hash({"b": 1, "a": 2}) == config_hash({"a": 2, "b": 1})


def test_episode_generators_are_independent_of_order_and_reproducible():
    h = config_hash(Cfg())
    first = episode_rng(h, 0, 5).random(4)
    episode_rng(h, 0, 4).random(1000)  # drawing from another episode changes nothing
    assert np.array_equal(first, episode_rng(h, 0, 5).random(4))
    assert not np.array_equal(first, episode_rng(h, 0, 6).random(4))
    assert not np.array_equal(first, episode_rng(h, 1, 5).random(4))
    assert not np.array_equal(first, episode_rng(config_hash(Cfg(a=2)), 0, 5).random(4))


def test_torch_seed_reproducible():
    h = config_hash(Cfg())
    g1 = torch.Generator().manual_seed(episode_torch_seed(h, 0, 1))
    g2 = torch.Generator().manual_seed(episode_torch_seed(h, 0, 1))
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))


@dataclasses.dataclass(frozen=True)
class _Inner:
    rate: float = 1.0
    cache_dir: str = dataclasses.field(default="", metadata={"hashed": False})


@dataclasses.dataclass(frozen=True)
class _Outer:
    span: tuple[float, float] = (2.0, 4.0)
    steps: int = 3
    threads: int = dataclasses.field(default=0, metadata={"hashed": False})
    inner: _Inner = dataclasses.field(default_factory=_Inner)


def test_settings_marked_not_hashed_leave_the_hash_unchanged():
    base = config_hash(_Outer())
    assert config_hash(_Outer(threads=8, inner=_Inner(cache_dir="/tmp/x"))) == base
    assert config_hash(_Outer(steps=4)) != base
    assert config_hash(_Outer(inner=_Inner(rate=2.0))) != base


def test_integers_in_float_fields_hash_like_floats():
    assert config_hash(_Outer(span=(2, 4), inner=_Inner(rate=1))) == config_hash(_Outer())


def test_added_fields_enter_hashes_only_when_changed():
    from memgym.core.seeding import ADDED_FIELD, NOT_HASHED

    @dataclasses.dataclass(frozen=True)
    class Before:
        a: int = 1

    @dataclasses.dataclass(frozen=True)
    class After:
        a: int = 1
        kernel: int = dataclasses.field(default=4, metadata=ADDED_FIELD)
        workers: int = dataclasses.field(default=0, metadata={**NOT_HASHED, **ADDED_FIELD})

    @dataclasses.dataclass(frozen=True)
    class Outer:
        inner: Before | After = dataclasses.field(default_factory=Before)

    assert config_hash(After()) == config_hash(Before())
    assert config_hash(After(workers=8)) == config_hash(Before())
    assert config_hash(After(kernel=0)) != config_hash(Before())
    assert config_hash(Outer(After())) == config_hash(Outer(Before()))
    assert config_hash(Outer(After(kernel=0))) != config_hash(Outer(Before()))

    @dataclasses.dataclass(frozen=True)
    class WithSection:  # an added section with a default factory: left out while at its default
        a: int = 1
        section: After = dataclasses.field(default_factory=After, metadata=ADDED_FIELD)

    assert config_hash(WithSection()) == config_hash(Before())
    assert config_hash(WithSection(section=After(kernel=0))) != config_hash(Before())


def test_added_fields_of_a_nested_config_default_to_the_enclosing_default():
    from memgym.core.seeding import ADDED_FIELD

    @dataclasses.dataclass(frozen=True)
    class Inner:
        a: int = 1
        mode: str = dataclasses.field(default="old", metadata=ADDED_FIELD)

    @dataclasses.dataclass(frozen=True)
    class Before:
        inner: Inner = dataclasses.field(default_factory=Inner)

    @dataclasses.dataclass(frozen=True)
    class After:  # new builds default to the new mode; the hash of the default stays
        inner: Inner = dataclasses.field(default_factory=lambda: Inner(mode="new"))

    assert config_hash(After()) == config_hash(Before())
    assert config_hash(After(Inner(a=2, mode="new"))) == config_hash(Before(Inner(a=2)))
    assert config_hash(After(Inner(mode="old"))) != config_hash(After())
