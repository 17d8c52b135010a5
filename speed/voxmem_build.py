"""VoxMem build speed: real-time factor of synthesis + mixing, and one 64K history vs its audio.

Baseline (same run): synthesis alone (eSpeak NG, no cue pair, no mixing, no files).
"""

from __future__ import annotations

import tempfile
import time

from memgym.backends.tts.espeak import EspeakBackend
from memgym.datasets.sources import open_library
from memgym.datasets.speech.voices import espeak_voice_bank
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.datasets.voxmem.render import TurnRenderer, library_clip_source
from speed.harness import report, time_best

TEXTS = [
    f"Turn {i}: I've decided the budget for the kitchen renovation should be five thousand dollars." for i in range(12)
]


def main(argv: list[str]) -> None:
    backend = EspeakBackend()
    voice = espeak_voice_bank()[0]
    audio_s = sum(backend.synthesize(t, voice).size for t in TEXTS) / backend.sample_rate
    library = open_library("synthetic_env")
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**6))

        def full() -> None:  # cue pair + 10 dB mixing + FLAC files, fresh keys each time
            renderer = TurnRenderer(f"{tmp}/r{next(counter)}", backend, library_clip_source(library), "lib", 10.0)
            for i, text in enumerate(TEXTS):
                renderer.render(voice, text, cue="surprise" if i % 2 else "neutral", sound="rain")

        def synth_only() -> None:
            for text in TEXTS:
                backend.synthesize(text, voice)

        candidate = time_best("synthesis + cue pair + mixing + FLAC", full, units=audio_s, unit_name="audio-s")
        baseline = time_best("synthesis alone", synth_only, units=audio_s, unit_name="audio-s")
        start = time.perf_counter()
        builder = VoxMemBuilder(VoxMemConfig(items=1, budgets=("64k",), out=f"{tmp}/ds"))
        builder.build()
        seconds = time.perf_counter() - start
        produced = builder.renderer.synthesized_s
        report(
            "voxmem_build: audio seconds produced per wall second",
            candidate,
            baseline,
            extra=[
                f"real-time factor (synthesis+mixing): {candidate.seconds / audio_s:.4f}",
                f"one 64K history: {seconds:.1f} s wall for {produced / 60:.1f} min of audio "
                f"({produced / max(seconds, 1e-9):.0f}x real time)",
            ],
        )
