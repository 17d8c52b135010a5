"""Contracts every memgym plugin must keep, as checks a test suite runs (memgym's own runs them
over every registered memory, scorer and env; a plugin package runs them in its tests):

- the **memory contract** (:mod:`memgym.testing.memory_contract`): built from an evaluation's
  options, formed and answered through its benchmark's env and agent, deterministic, isolated
  between episodes, restorable from its state, a clear error on options it cannot read;
- the **scorer contract** (:mod:`memgym.testing.scorer_contract`): metrics with a reward in
  [0, 1], JSON-ready, a function of its inputs, gold answers rewarded above wrong ones;
- the **env contract** (:mod:`memgym.testing.env_contract`): Gymnasium's ``check_env`` plus the
  two phases (formation then use, the info keys, determinism by seed).

Each comes as a function (``check_memory("keyword_notes")``, in the spirit of Stable-Baselines3's
parametrised checks) and as a class to mix into a test class (in the spirit of dm_env's
``EnvironmentTestMixin``)::

    from memgym.testing import MemoryContract

    class TestKeywordNotes(MemoryContract):
        memory_name = "keyword_notes"

A memory is played by the harness of the benchmark whose evaluation takes it
(:mod:`memgym.testing.harness`): DialogMem's for memories reading no audio, VoxMem's for
:class:`~memgym.memory.voxmem.base.VoxMemMemory` subclasses, AMemOps's for core memories.
docs/plugins.md walks a memory and a scorer package through them.
"""

from memgym.testing.compare import difference
from memgym.testing.env_contract import EnvContract, check_two_phase_env
from memgym.testing.harness import Harness, add_harness, harness_for
from memgym.testing.memory_contract import MemoryChecks, MemoryContract, check_memory
from memgym.testing.scorer_contract import ScorerCase, ScorerContract, check_scorer

__all__ = [
    "EnvContract",
    "Harness",
    "MemoryChecks",
    "MemoryContract",
    "ScorerCase",
    "ScorerContract",
    "add_harness",
    "check_memory",
    "check_scorer",
    "check_two_phase_env",
    "difference",
    "harness_for",
]
