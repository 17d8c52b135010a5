"""VoxMem speech intelligibility: offline-ASR word error rate per cue and per voice (a measurement).

Statement turns as the template writer words them (one per topic family, values from each
family's list) are rendered the way a build renders user turns (:class:`TurnRenderer`: cue pair,
background sound mixed at the configured SNR, 16-bit FLAC), read back and transcribed by Whisper
tiny.en (faster-whisper, bundled model). Reports WER per condition (each cue, and neutral speech
with background sound) and per voice, and how often the stated value was recognised.

``python -m speed voxmem_intelligibility [--voices N] [--sentences K] [--snr DB]``
(defaults: the whole bank, 2 sentences per voice and condition, 15 dB as VoxMem builds; ``--voices N``
takes N voices spread evenly over the bank).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from memgym.backends.asr.faster_whisper import FasterWhisperBackend
from memgym.backends.tts.espeak import EspeakBackend
from memgym.datasets.sources import open_library
from memgym.datasets.speech.intelligibility import phrase_recognised, word_errors
from memgym.datasets.speech.voices import espeak_voice_bank
from memgym.datasets.voxmem.records import SessionFact
from memgym.datasets.voxmem.render import TurnRenderer, library_clip_source
from memgym.datasets.voxmem.topics import TOPIC_FAMILIES
from memgym.datasets.voxmem.writing import TemplateWriter

CONDITIONS = ("neutral", "hesitation", "surprise", "emphasis", "fast", "slow", "laughter", "sound")
SOUNDS = ("rain", "engine", "dog", "siren", "keyboard_typing", "wind")


def statements(count: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    """``count`` ``(statement text, stated value)`` pairs from the template writer."""
    out = []
    for i in range(count):
        family = TOPIC_FAMILIES[int(rng.integers(len(TOPIC_FAMILIES)))]
        fact = SessionFact(
            family=family.name,
            subject=family.subjects[int(rng.integers(len(family.subjects)))],
            value=family.values[int(rng.integers(len(family.values)))],
            update=bool(i % 3 == 2),
        )
        out.append((TemplateWriter().user_side(fact, 2, rng)[1], fact.value))
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed voxmem_intelligibility")
    parser.add_argument("--voices", type=int, default=100)
    parser.add_argument("--sentences", type=int, default=2)
    parser.add_argument("--snr", type=float, default=15.0)
    parser.add_argument("--transcripts", default="", help="write one JSON line per turn (words, heard) here")
    args = parser.parse_args(argv)
    import soundfile

    backend, asr = EspeakBackend(), FasterWhisperBackend()
    library = open_library("synthetic_env")
    full = espeak_voice_bank()
    bank = [full[i] for i in np.linspace(0, len(full) - 1, min(args.voices, len(full))).round().astype(int)]
    rng = np.random.default_rng(0)
    errors: dict[tuple[str, str], np.ndarray] = {}  # (voice, condition) -> [word errors, words, hits, turns]
    rows: list[dict[str, str]] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        renderer = TurnRenderer(Path(tmp), backend, library_clip_source(library), library.fingerprint(), args.snr)
        for voice in bank:
            for condition in CONDITIONS:
                for k, (text, value) in enumerate(statements(args.sentences, rng)):
                    cue = "neutral" if condition == "sound" else condition
                    sound = SOUNDS[k % len(SOUNDS)] if condition == "sound" else ""
                    turn = renderer.render(voice, text, cue, sound)
                    audio, rate = soundfile.read(str(Path(tmp) / turn.audio), dtype="float32")
                    heard = asr.transcribe(audio, rate)
                    wrong, total = word_errors(turn.text, heard)
                    hit = phrase_recognised(value, heard)
                    key = (voice.voice_id, condition)
                    errors[key] = errors.get(key, np.zeros(4, dtype=int)) + [wrong, total, int(hit), 1]
                    rows.append({"voice": voice.voice_id, "condition": condition, "words": turn.text, "heard": heard})
    seconds = time.perf_counter() - start
    if args.transcripts:
        Path(args.transcripts).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    def table(key_index: int, keys) -> list[str]:
        rows = []
        for key in keys:
            cells = np.array([v for k, v in errors.items() if k[key_index] == key]).sum(axis=0)
            rows.append(f"| {key} | {cells[0] / cells[1]:.1%} | {cells[2]}/{cells[3]} |")
        return rows

    lines = [f"== voxmem_intelligibility ({asr.identity()}, {args.snr:g} dB, {seconds:.0f} s) =="]
    lines += ["| condition | WER | value recognised |", "| --- | ---: | ---: |", *table(1, CONDITIONS)]
    lines += ["", "| voice | WER | value recognised |", "| --- | ---: | ---: |"]
    lines += table(0, [v.voice_id for v in bank])
    total = np.array(list(errors.values())).sum(axis=0)
    lines += ["", f"all: WER {total[0] / total[1]:.1%}, value recognised {total[2]}/{total[3]}"]
    print("\n".join(lines))
