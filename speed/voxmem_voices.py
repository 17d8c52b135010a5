"""Which voices and speech settings the default recogniser hears: clean-turn WER per voice (a measurement).

The words of a built dataset's clean user turns (neutral delivery, no sound; distinct texts, in
manifest order) are spoken again by every voice of the eSpeak bank with neutral delivery, as a
build renders a clean turn, optionally with the speech settings under test, and transcribed by
the default recogniser. Each voice speaks the same texts, so voices compare on equal words.

``python -m speed voxmem_voices DATASET [--texts 12] [--rate 1.0] [--lead-s 0.0] [--accent ACCENT]
[--voices espeak-00,...] [--beam 1] [--window full] [--model FOLDER] [--transcripts FILE]``

``--rate`` scales every voice's words per minute, ``--lead-s`` puts that much silence before the
speech, ``--accent`` replaces every voice's eSpeak language (its variant, pitch and rate kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from memgym.backends.asr.faster_whisper import FasterWhisperBackend
from memgym.backends.tts.base import Voice
from memgym.backends.tts.espeak import EspeakBackend
from memgym.core.episode import Dataset
from memgym.datasets.speech.intelligibility import word_errors
from memgym.datasets.speech.voices import espeak_voice_bank
from memgym.datasets.voxmem.qc import turn_condition


def clean_texts(folder: Path, count: int) -> list[str]:
    """The first ``count`` distinct texts of the dataset's clean user turns."""
    texts: dict[str, None] = {}
    for episode in Dataset.load(folder / "manifest.jsonl"):
        for session in episode.sessions:
            for turn in session.turns:
                if turn.role == "user" and turn_condition(turn) == "clean":
                    texts.setdefault(turn.text, None)
    return list(texts)[:count]


def voice_spec(spec: str) -> Voice:
    """A voice from ``LANG+VARIANT@PITCH/RANGE/WPM`` (e.g. ``en-us+m3@50/50/160``)."""
    name, _, numbers = spec.partition("@")
    pitch, span, rate = (int(x) for x in numbers.split("/"))
    return Voice(voice_id=spec, backend="espeak", name=name, pitch=pitch, pitch_range=span, rate_wpm=rate)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed voxmem_voices")
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--texts", type=int, default=12)
    parser.add_argument("--rate", type=float, default=1.0, help="multiplier of every voice's words per minute")
    parser.add_argument("--lead-s", type=float, default=0.0, help="silence before the speech (seconds)")
    parser.add_argument("--accent", default="", help="eSpeak language for every voice (empty: the voice's own)")
    parser.add_argument(
        "--voices", default="", help="comma-separated voice ids or LANG+VARIANT@PITCH/RANGE/WPM specs (empty: the bank)"
    )
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--window", default="full", help="recogniser window: full (default) or fit (faster)")
    parser.add_argument("--model", default="", help="faster-whisper model folder (empty: bundled tiny.en)")
    parser.add_argument("--transcripts", default="", help="write one JSON line per clip (voice, words, heard) here")
    args = parser.parse_args(argv)
    texts = clean_texts(args.dataset, args.texts)
    bank = espeak_voice_bank()
    if args.voices:
        known = {v.voice_id: v for v in bank}
        bank = [known[name] if name in known else voice_spec(name) for name in args.voices.split(",")]
    tts, asr = EspeakBackend(), FasterWhisperBackend(args.model, beam_size=args.beam, window=args.window)
    lead = np.zeros(int(args.lead_s * tts.sample_rate), dtype=np.float32)
    per_voice: dict[str, list[int]] = {}
    rows = []
    start, cpu, audio_s = time.perf_counter(), time.process_time(), 0.0
    for voice in bank:
        spoken = dataclasses.replace(
            voice,
            rate_wpm=int(round(voice.rate_wpm * args.rate)),
            name=(args.accent + "+" + voice.name.split("+")[1]) if args.accent else voice.name,
        )
        for text in texts:
            audio = np.concatenate([lead, tts.synthesize(text, spoken)])
            audio_s += len(audio) / tts.sample_rate
            heard = asr.transcribe(audio, tts.sample_rate)
            wrong, total = word_errors(text, heard)
            per_voice.setdefault(voice.voice_id, [0, 0])
            per_voice[voice.voice_id][0] += wrong
            per_voice[voice.voice_id][1] += total
            rows.append({"voice": voice.voice_id, "words": text, "heard": heard, "errors": wrong})
    if args.transcripts:
        Path(args.transcripts).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    errors, words = np.array(list(per_voice.values())).sum(axis=0)
    print(
        f"== voxmem_voices {args.dataset} ({asr.identity()}; rate x{args.rate:g}, lead {args.lead_s:g} s, "
        f"accent {args.accent or 'own'}; {len(texts)} texts x {len(bank)} voices) =="
    )
    print(
        f"clean WER {errors / words:.1%} over {words} words; {audio_s / (time.process_time() - cpu):.1f} audio s "
        f"per CPU s, {time.perf_counter() - start:.0f} s wall"
    )
    ranked = sorted(per_voice.items(), key=lambda kv: kv[1][0] / kv[1][1])
    print("per voice: " + ", ".join(f"{v} {e / w:.0%}" for v, (e, w) in ranked))
