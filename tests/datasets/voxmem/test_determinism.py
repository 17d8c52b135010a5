"""Same config and seed give the same VoxMem audio in fresh processes started at different times."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = """
import sys
from memgym.backends.asr import ASRConfig
from memgym.backends.tts.base import Voice
from memgym.datasets.voxmem import build, config

# eSpeak's breath-noise variants (in the bank before issue 38): the engine's noise generator is seeded from the clock
breathy = [Voice(voice_id=f"breathy-{v}", backend="espeak", name=f"en-us+{v}", pitch=60) for v in ("f2", "f3", "f5")]
config.espeak_voice_bank = lambda: breathy
settings = config.VoxMemConfig(items=1, budgets=("4k",), out=sys.argv[1], asr=ASRConfig(kind="none"))
build.VoxMemBuilder(settings).build()
"""


def _build(out: Path) -> dict[str, bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[3]), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run([sys.executable, "-c", BUILD, str(out)], check=True, env=env, timeout=300)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.suffix in (".flac", ".jsonl")}


@pytest.mark.slow  # two builds in fresh processes; in 'make test'
def test_two_builds_in_fresh_processes_are_byte_identical(tmp_path):
    first = _build(tmp_path / "a")
    second = _build(tmp_path / "b")  # a later process: the engines initialise in another clock second
    audio = [name for name in first if name.endswith(".flac")]
    assert len(audio) > 10 and sorted(first) == sorted(second)
    different = [name for name in first if first[name] != second[name]]
    assert different == []
