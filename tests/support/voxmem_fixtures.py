"""A tiny VoxMem dataset (5 items at 4K, 4 sound classes) and a truth-reading ASR for evaluation tests."""

from __future__ import annotations

from memgym.backends.asr import ASRConfig
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig

SOUNDS = ("rain", "dog", "siren", "clock_tick")


def build_tiny_voxmem(out):
    """Build the dataset under ``out`` (no intelligibility gate: every item is kept); returns the folder."""
    config = VoxMemConfig(
        items=5,
        cells=("speaker/TET", "sound/IE", "paralinguistic/IE", "semantics/TET", "semantics/AR"),
        budgets=("4k",),
        sound_classes=SOUNDS,
        out=str(out),
        asr=ASRConfig(kind="none"),
    )
    return VoxMemBuilder(config).build()


class TruthASR:
    """A test recogniser that returns each turn's true words (looked up by audio content)."""

    def __init__(self, dataset_dir):
        import numpy as np
        import soundfile

        from memgym.core.episode import Dataset

        self.words = {}
        for episode in Dataset.load(dataset_dir / "manifest.jsonl"):
            for session in episode.sessions:
                for turn in session.turns:
                    if turn.role == "user":
                        audio, _ = soundfile.read(str(dataset_dir / turn.audio), dtype="float32")
                        self.words[np.ascontiguousarray(audio).tobytes()] = turn.text
        self.calls = 0

    def identity(self) -> str:
        return "truth-asr"

    def transcribe(self, audio, sample_rate):
        import numpy as np

        self.calls += 1
        return self.words[np.ascontiguousarray(audio, dtype=np.float32).tobytes()]
