"""One small VoxMem build shared by the build and construction-rule tests (rendering is slow)."""

from __future__ import annotations

import pytest

from memgym.backends.asr import ASRConfig
from memgym.core.protocols import Reasoner
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig

SMALL_CELLS = ("semantics/TET", "semantics/AR", "speaker/IE", "speaker/AR", "sound/IE", "sound/AR")
"""A source cell then its AR cell for three evidence types: drop_context, drop_cue and revoice edits."""


class AlwaysYes(Reasoner):
    """A text-only 'answerer' that says yes; records what it was shown."""

    prompts: list[str] = []

    def generate(self, messages, *, max_new_tokens=256):
        AlwaysYes.prompts.append(messages[-1].text_only())
        return "Yes."


@pytest.fixture(scope="session")
def small_build(tmp_path_factory):
    """``(config, folder, prompts)`` of a 6-item build at 4K, 6K and 8K tokens (three AR items on their sources);
    ``prompts`` are what the text-only QC reasoner was shown."""
    out = tmp_path_factory.mktemp("vox")
    config = VoxMemConfig(
        items=6,
        cells=SMALL_CELLS,
        budgets=("4k", "6k", "8k"),
        out=str(out),
        filler_cue_rate=0.5,
        filler_sound_rate=0.5,
        asr=ASRConfig(kind="none"),  # no intelligibility gate: it may drop items (test_gate.py tests it)
        lead_silence_s=0.0,  # 4K histories are tight: 0.5 s more per turn leaves no room for a level's haystacks
    )
    AlwaysYes.prompts.clear()
    folder = VoxMemBuilder(config, qc_reasoner=AlwaysYes()).build()
    return config, folder, list(AlwaysYes.prompts)
