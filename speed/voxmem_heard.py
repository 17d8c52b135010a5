"""What the cascade's perception gets right on a built VoxMem dataset (a measurement).

Word error of a faster-whisper model over the dataset's user turns of one condition (``clean``:
neutral delivery without sound, as :func:`memgym.datasets.voxmem.qc.turn_condition` says), and
the cascade's sound tagger (trained as ``memgym eval voxmem`` trains it) over every user turn:
recall (the turn's sound named) and false tags (a sound named on a turn without one).

``python -m speed voxmem_heard DATASET [--condition clean] [--beam 1] [--model FOLDER] [--no-tagger]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import soundfile

from memgym.backends.asr.faster_whisper import FasterWhisperBackend
from memgym.core.episode import Dataset
from memgym.datasets.speech.intelligibility import word_errors
from memgym.datasets.voxmem.qc import turn_condition


def user_turns(folder: Path) -> dict:
    """Dataset-relative audio path -> (turn, voice id) of every distinct user turn."""
    turns = {}
    for episode in Dataset.load(folder / "manifest.jsonl"):
        for session in episode.sessions:
            for turn in session.turns:
                if turn.role == "user":
                    turns.setdefault(turn.audio, (turn, episode.annotations["voices"].get(turn.user, turn.user)))
    return turns


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m speed voxmem_heard")
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--condition", default="clean", help="clean, cued, sound, cued+sound, all or none (no ASR)")
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--model", default="", help="faster-whisper model folder (empty: bundled tiny.en)")
    parser.add_argument("--no-tagger", action="store_true")
    args = parser.parse_args(argv)
    turns = user_turns(args.dataset)
    if args.condition != "none":
        word_error_rate(args, turns)
    if not args.no_tagger:
        tagger_rates(args.dataset, turns)


def word_error_rate(args: argparse.Namespace, turns: dict) -> None:
    """Print the WER of the turns of ``args.condition``, overall and per voice."""
    asr = FasterWhisperBackend(args.model, beam_size=args.beam)
    errors = words = 0
    per_voice: dict[str, list[int]] = {}
    start, cpu, audio_s = time.perf_counter(), time.process_time(), 0.0
    for audio_path, (turn, voice) in turns.items():
        if args.condition != "all" and turn_condition(turn) != args.condition:
            continue
        audio, rate = soundfile.read(str(args.dataset / audio_path), dtype="float32")
        audio_s += len(audio) / rate
        wrong, total = word_errors(turn.text, asr.transcribe(audio, rate))
        errors, words = errors + wrong, words + total
        per_voice.setdefault(voice, [0, 0])
        per_voice[voice][0] += wrong
        per_voice[voice][1] += total
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"== voxmem_heard {args.dataset} ({asr.identity()}) ==")
    print(
        f"{args.condition} turns: WER {errors / max(words, 1):.1%} over {words} words "
        f"({audio_s / seconds:.1f} audio s per wall s, {audio_s / cpu:.1f} per CPU s)"
    )
    print("per voice: " + ", ".join(f"{v} {e / max(w, 1):.0%}" for v, (e, w) in sorted(per_voice.items())))


def tagger_rates(folder: Path, turns: dict) -> None:
    """Print the sound tagger's recall and false tags over ``turns``, and per sound class how
    often a sound was detected at all and named right."""
    from memgym.pipelines.voxmem.evaluation import train_sound_tagger

    cpu = time.process_time()
    tagger = train_sound_tagger(folder)
    train_cpu, cpu, audio_s = time.process_time() - cpu, time.process_time(), 0.0
    hit = with_sound = false = without = 0
    per_class: dict[str, list[int]] = {}  # class -> [turns, detected, named]
    for audio_path, (turn, _) in turns.items():
        audio, rate = soundfile.read(str(folder / audio_path), dtype="float32")
        tag = tagger.tag_audio(audio)
        audio_s += len(audio) / rate
        if turn.sound:
            with_sound, hit = with_sound + 1, hit + (tag == turn.sound)
            counts = per_class.setdefault(turn.sound, [0, 0, 0])
            counts[0], counts[1], counts[2] = counts[0] + 1, counts[1] + bool(tag), counts[2] + (tag == turn.sound)
        else:
            without, false = without + 1, false + bool(tag)
    tag_cpu = time.process_time() - cpu
    detected = sum(c[1] for c in per_class.values())
    print(f"sound detected on {detected}/{with_sound} turns with a sound")
    print(
        "per class (turns, detected, named): "
        + ", ".join(f"{k} {c[0]}/{c[1]}/{c[2]}" for k, c in sorted(per_class.items()))
    )
    print(f"sound tagger ({tagger.identity()}): recall {hit}/{with_sound} = {hit / max(with_sound, 1):.1%}, "
          f"false tags {false}/{without} = {false / max(without, 1):.1%}")  # fmt: skip
    print(f"tagger CPU: training {train_cpu:.1f} s; tagging {tag_cpu:.2f} s for {len(turns)} turns "
          f"({audio_s:.0f} audio s, reading the files included)")  # fmt: skip
