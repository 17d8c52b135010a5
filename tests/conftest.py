"""Session fixtures shared across test folders."""

from __future__ import annotations

import os
import tempfile

import pytest

if worker := os.environ.get("PYTEST_XDIST_WORKER"):
    # librosa's numba functions cache their machine code beside librosa's files; two pytest-xdist
    # workers writing that cache at once corrupt it (librosa.yin then crashes). One folder a worker.
    os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"memgym-numba-{worker}"))


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_in_pytest_tmp(tmp_path_factory):
    """Stable-Baselines3's ``learn()`` makes a ``<tempdir>/SB3-<date-time>`` folder unless
    ``SB3_LOGDIR`` names one: its logs (none at ``verbose=0``) go to pytest's temp folder instead."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
        yield


@pytest.fixture(scope="session")
def vox_dataset(tmp_path_factory):
    """A tiny VoxMem dataset (5 items at 4K), built once per session."""
    from voxmem_fixtures import build_tiny_voxmem

    return build_tiny_voxmem(tmp_path_factory.mktemp("voxmem_eval"))


@pytest.fixture(scope="session")
def dialogmem_small(tmp_path_factory):
    """A one-scene DialogMem dataset of a small house (tests/support/small_houses.py), generated once
    per session and shared by the DialogMem job and sweep tests (read only)."""
    from small_houses import SMALL_HOUSES

    from memgym.core.benchmark import JobArgs
    from memgym.pipelines.dialogmem.generation import generate

    out = tmp_path_factory.mktemp("dialogmem_small") / "episodes.jsonl"
    return generate(JobArgs(overrides=("scenes=1", *SMALL_HOUSES), out=out, progress=False))


@pytest.fixture(scope="session")
def truth_asr(vox_dataset):
    """An ASR test double returning each turn's true words."""
    from voxmem_fixtures import TruthASR

    return TruthASR(vox_dataset)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray with 2 CPUs shared by the tests of a module (shut down after it, so later tests
    that fork do not inherit Ray's threads); yields its address, which ``ray_address=`` joins."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


# Test files by decreasing run time ('make test' on 2 idle cores, --durations), started first: each
# pytest-xdist worker (--dist loadfile) holds its running file and one more, so the last files
# handed out must be short for both workers to finish together. Files not listed (each under about
# 15 s) follow in collection order. The Makefile passes --no-loadscope-reorder: without it
# pytest-xdist (>= 3.5) hands files out by decreasing number of tests, which sent these one-test
# files last.
LONGEST_FIRST = (
    "tests/pipelines/amemops/test_update_control_learning.py",  # ~290 CPU s: 6 trainings in one process
    "tests/pipelines/voxmem/test_audio_lm.py",  # ~180 s: a SmolLM2 training run, one thread
    "tests/pipelines/test_ray_executor.py",  # ~55 s
    "tests/backends/test_smollm2.py",  # ~10 s; ~40 s when it de-quantises the GGUF first (cache)
    "tests/pipelines/dialogmem/test_evaluation.py",
    "tests/pipelines/dialogmem/test_link_sweep.py",
    "tests/datasets/voxmem/test_gate.py",
    "tests/agents/test_sb3_loop.py",
    "tests/testing/test_contracts.py",
    "tests/wrappers/test_sb3_training.py",
    "tests/memory/test_visual_memory.py",
    "tests/datasets/voxmem/test_determinism.py",
)


def pytest_collection_modifyitems(config, items):
    """Move the files of :data:`LONGEST_FIRST` to the front of the run, in that order."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
