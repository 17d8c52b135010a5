"""The env manuals are run: every ``>>>`` example in ``memgym/envs/*.py`` (module, class and
method docstrings) must give the output it shows, and every registered Gymnasium env class and
:class:`~memgym.envs.two_phase.TwoPhaseEnv` carries such an example in its class docstring
(Gymnasium's cartpole is the model)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest
from module_examples import failed_examples

from memgym.core.registry import ENVS
from memgym.envs.registration import GYM_ENVS

ENV_MODULES = sorted(
    f"memgym.envs.{path.stem}"
    for path in (Path(__file__).resolve().parents[2] / "memgym" / "envs").glob("*.py")
    if path.stem != "__init__"
)
MANUAL_CLASSES = sorted({*(ENVS.locate(name)[0] for name in GYM_ENVS.values()), "memgym.envs.two_phase:TwoPhaseEnv"})
PENDING: dict[str, str] = {}
"""Env classes whose class docstring has no example yet -> why; the entry goes when it has one."""


def _examples(obj: object, name: str) -> list[doctest.DocTest]:
    return [test for test in doctest.DocTestFinder(recurse=False).find(obj, name) if test.examples]


@pytest.mark.parametrize("module_name", ENV_MODULES)
def test_the_examples_of_each_env_module_give_what_they_show(module_name):
    failures, report = failed_examples(module_name)
    assert failures == 0, report


@pytest.mark.parametrize("entry_point", MANUAL_CLASSES)
def test_each_env_class_docstring_carries_a_run_example(entry_point):
    module_name, class_name = entry_point.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    has_example = bool(_examples(cls, class_name))
    if entry_point in PENDING:
        assert not has_example, f"{entry_point} has its example now: remove it from PENDING"
    else:
        assert has_example, f"{entry_point}: the class docstring needs a '>>>' gymnasium.make example"


def test_pending_manuals_name_registered_env_classes():
    assert set(PENDING) <= set(MANUAL_CLASSES), set(PENDING) - set(MANUAL_CLASSES)
