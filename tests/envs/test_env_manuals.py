"""The env manuals: every registered Gymnasium env class and :class:`~memgym.envs.two_phase.TwoPhaseEnv`
carries a ``>>>`` example in its class docstring (Gymnasium's cartpole is the model). The suite runs
every example of ``memgym/`` (``--doctest-modules``, pyproject.toml), so each must give the output
it shows."""

from __future__ import annotations

import doctest
import importlib

import pytest

from memgym.core.registry import ENVS
from memgym.envs.registration import GYM_ENVS

MANUAL_CLASSES = sorted({*(ENVS.locate(name)[0] for name in GYM_ENVS.values()), "memgym.envs.two_phase:TwoPhaseEnv"})
PENDING: dict[str, str] = {}
"""Env classes whose class docstring has no example yet -> why; the entry goes when it has one."""


def _examples(obj: object, name: str) -> list[doctest.DocTest]:
    return [test for test in doctest.DocTestFinder(recurse=False).find(obj, name) if test.examples]


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
