"""A fast diagnostic library of harmonic tones (no synthesis cost, trivially separable identities).

Identity ``toneNN`` is a three-partial harmonic tone at ``100 + 37 * NN`` Hz; its recordings
differ in partial phases, level and a little noise. Useful for unit tests, smoke runs and
debugging memories where source recognition should not be the bottleneck.
"""

from __future__ import annotations

import numpy as np

from memgym.datasets.sources.library import SAMPLE_RATE, RecordingInfo, SourceLibrary
from memgym.datasets.sources.synthesis import stable_seed


class ToneLibrary(SourceLibrary):
    """``identities`` tones x ``per_split`` recordings in each of train/eval.

    Args:
        identities: number of identities (``tone00`` ...).
        per_split: recordings per identity and split.
        seconds: recording length.
    """

    name = "tones"

    def __init__(self, identities: int = 60, per_split: int = 4, seconds: float = 2.0) -> None:
        self.seconds = seconds
        infos = [
            RecordingInfo(
                recording_id=f"tone{k:02d}-{split}-{r}",
                identity=f"tone{k:02d}",
                split=split,
                family=f"family{k % 5}",
                source_type="synthetic",
                excerpt_start="random",
            )
            for k in range(identities)
            for split in ("train", "eval")
            for r in range(per_split)
        ]
        super().__init__(infos)

    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        k = int(info.identity[4:])
        rng = np.random.default_rng(stable_seed("tone", info.recording_id))
        t = np.arange(int(self.seconds * SAMPLE_RATE)) / SAMPLE_RATE
        f0 = 100 + 37 * k
        tone = sum(np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 2 * np.pi)) / h for h in range(1, 4))
        return (rng.uniform(0.1, 1.0) * tone + 0.01 * rng.standard_normal(len(t))).astype(np.float32)

    def num_samples(self, recording_id: str) -> int:
        self.info(recording_id)
        return int(self.seconds * SAMPLE_RATE)

    def fingerprint(self) -> str:
        return f"{self.name}:{self.seconds}:{len(self.all_infos())}"
