"""The executors: items come back in their order from any number of Ray workers; a worker that
dies is restarted and its item sent again; a missing Ray is one clear error."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from memgym.core.errors import ConfigError
from memgym.core.executors import run_ordered


@dataclasses.dataclass(frozen=True)
class Options:
    executor: str = "local"
    ray_address: str = ""
    workers: int = 0


def slow_square(item: tuple[int, str]) -> tuple[int, int]:
    """``(x * x, pid)``; items with even ``x`` take longer, so workers finish out of order.

    With a marker path, the first call for ``x == 3`` kills its own process (a dead worker).
    """
    import time

    x, marker = item
    if marker and x == 3 and not Path(marker).exists():
        Path(marker).write_text("died once")
        os._exit(1)
    time.sleep(0.05 if x % 2 == 0 else 0.0)
    return x * x, os.getpid()


def square_worker():
    return slow_square


def _pickle_this_module_by_value():
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/


def test_local_runs_in_order_in_this_process():
    out = list(run_ordered(Options(), square_worker, [(str(x), (x, "")) for x in range(5)]))
    assert out == [(str(x), (x * x, os.getpid())) for x in range(5)]
    assert list(run_ordered(Options(), square_worker, [])) == []


@pytest.mark.slow  # a Ray cluster and its workers start; in 'make test'
@pytest.mark.parametrize("workers", [1, 2])
def test_ray_delivers_in_item_order(ray_cluster, workers):
    _pickle_this_module_by_value()
    items = [(f"k{x}", (x, "")) for x in range(12)]
    out = list(run_ordered(Options(executor="ray", workers=workers), square_worker, items))
    assert [key for key, _ in out] == [key for key, _ in items]
    assert [value for _, (value, _) in out] == [x * x for x in range(12)]
    assert len({pid for _, (_, pid) in out} - {os.getpid()}) == workers


@pytest.mark.slow  # a Ray cluster and its workers start; in 'make test'
def test_a_dead_worker_is_restarted_and_its_item_sent_again(ray_cluster, tmp_path):
    _pickle_this_module_by_value()
    marker = tmp_path / "died"
    items = [(f"k{x}", (x, str(marker))) for x in range(6)]
    out = list(run_ordered(Options(executor="ray", workers=2), square_worker, items))
    assert marker.read_text() == "died once"
    assert [key for key, _ in out] == [key for key, _ in items]  # each once, in order
    assert [value for _, (value, _) in out] == [x * x for x in range(6)]


def test_missing_ray_and_unknown_executor_are_config_errors(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(ConfigError, match=r"memgym\[ray\]"):
        list(run_ordered(Options(executor="ray"), square_worker, [("a", (1, ""))]))
    with pytest.raises(ConfigError, match="executor must be one of"):
        run_ordered(Options(executor="dask"), square_worker, [])
