"""The executors: items come back in their order from any number of Ray workers; a worker that
dies is restarted and its item sent again; a missing Ray is one clear error."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from memgym.core.errors import ConfigError, MemgymError
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


def test_threads_deliver_in_item_order_with_a_worker_per_thread():
    """executor=local, threads=4: items overlap (even ones sleep, so they finish out of order),
    each thread builds one worker, and the results come back in item order."""
    lock, built, active = threading.Lock(), [], {"now": 0, "most": 0}

    def setup():
        built.append(threading.get_ident())

        def worker(x: int) -> tuple[int, int]:
            with lock:
                active["now"] += 1
                active["most"] = max(active["most"], active["now"])
            time.sleep(0.02 if x % 2 == 0 else 0.0)
            with lock:
                active["now"] -= 1
            return x * x, threading.get_ident()

        return worker

    out = list(run_ordered(Options(), setup, [(f"k{x}", x) for x in range(12)], threads=4))
    assert [(key, value) for key, (value, _) in out] == [(f"k{x}", x * x) for x in range(12)]
    assert active["most"] > 1 and 1 < len(built) <= 4 and len(set(built)) == len(built)
    assert {thread for _, (_, thread) in out} <= set(built)


def test_threads_raise_an_items_error_in_its_turn():
    def setup():
        def worker(x: int) -> int:
            if x == 3:
                raise MemgymError("item 3 failed")
            return x

        return worker

    got = []
    with pytest.raises(MemgymError, match="item 3 failed"):
        for _, value in run_ordered(Options(), setup, [(str(x), x) for x in range(20)], threads=2):
            got.append(value)
    assert got == [0, 1, 2]
