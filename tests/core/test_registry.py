import pytest

from memgym.core.errors import RegistryError
from memgym.core.protocols import Memory, Scorer
from memgym.core.registry import MEMORIES, SCORERS, Registry


class Base:
    pass


def test_register_and_get():
    registry: Registry = Registry("widget", Base)

    @registry.register("a")
    class A(Base):
        pass

    assert registry.get("a") is A
    assert registry.names() == ["a"]
    assert "a" in registry
    assert A.registered_name == "a"


def test_register_wrong_type_is_a_type_error():
    registry: Registry = Registry("widget", Base)
    with pytest.raises(TypeError, match="expects a subclass of Base"):
        registry.register("x")(int)


def test_two_classes_under_one_name_are_refused():
    registry: Registry = Registry("widget", Base)
    registry.register("a")(type("A", (Base,), {}))
    with pytest.raises(TypeError, match="already registered"):
        registry.register("a")(type("B", (Base,), {}))


def test_unknown_name_lists_registered_names():
    with pytest.raises(RegistryError, match=r"unknown scorer 'nope'; registered: .*exact_match"):
        SCORERS.get("nope")


def test_memory_registry_refuses_a_scorer():
    with pytest.raises(TypeError, match="subclass of Memory"):
        MEMORIES.register("not-a-memory")(type("S", (Scorer,), {"score": lambda self, i, p: {}}))
    assert issubclass(MEMORIES.base, Memory)
