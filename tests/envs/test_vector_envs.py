"""Async vector envs in a process that has already run torch (fork after OpenMP threads started).

Each case runs in a fresh Python process so that the parent really has used torch's thread pool
before forking, and so that a hang shows as a subprocess timeout instead of stalling the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

USE_THEN_VECTORISE = textwrap.dedent(
    """
    import os, sys
    import gymnasium, torch
    import memgym

    torch.set_num_threads(2)
    env = gymnasium.make("memgym/AMemOps-v0", library="tones")
    env.reset(seed=0)
    for _ in range(2):
        env.step(env.action_space.sample())
    env.close()
    vec = gymnasium.make_vec("memgym/AMemOps-v0", num_envs=2, vectorization_mode="async", library="tones")
    obs, info = vec.reset(seed=0)
    for _ in range(3):
        obs, reward, terminated, truncated, info = vec.step(vec.action_space.sample())
    print("workers", " ".join(str(p.pid) for p in vec.processes), flush=True)
    print("shape", tuple(obs["features"].shape), flush=True)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), 9)  # the parent dies without closing the vector env
    vec.close()
    print("closed yes", flush=True)
    """
)


def _run(mode: str) -> subprocess.CompletedProcess:
    """Run the script in its own process group; on a hang, kill the group (workers included)."""
    process = subprocess.Popen(
        [sys.executable, "-c", USE_THEN_VECTORISE, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the async vector env hung (workers stuck after fork)")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is gone for our purposes
        return handle.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.slow  # async worker processes start; in 'make test'
@pytest.mark.timeout(150)
def test_async_vector_env_works_after_the_parent_ran_the_env():
    result = _run("close")
    assert result.returncode == 0, result.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["shape"] == "(2, 32, 131)" and lines["closed"] == "yes"


@pytest.mark.slow  # async worker processes start; in 'make test'
@pytest.mark.timeout(150)
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to inspect processes")
def test_async_workers_do_not_outlive_a_killed_parent():
    result = _run("kill")
    assert result.returncode == -signal.SIGKILL
    pids = [int(p) for p in dict(line.split(" ", 1) for line in result.stdout.splitlines())["workers"].split()]
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(p) for p in pids)
