"""Small ESC-50 and NSynth folders in the real layouts, written by the tests."""

from __future__ import annotations

import csv
import json
import types
from pathlib import Path

import numpy as np
import pytest
import soundfile

ESC_COLUMNS = ["filename", "fold", "target", "category", "esc10", "src_file", "take"]


def write_esc50(
    root: Path,
    *,
    classes=(("dog", 0), ("rain", 10), ("siren", 42)),
    clips_per_fold=1,
    rate=44_100,
    seconds=2.0,
    columns=ESC_COLUMNS,
) -> Path:
    """ESC-50 layout: ``meta/esc50.csv`` + ``audio/{fold}-{src}-{take}-{target}.wav``."""
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rows = []
    for category, target in classes:
        for fold in range(1, 6):
            for clip in range(clips_per_fold):
                src = f"{target:03d}{clip:02d}"
                name = f"{fold}-{src}-A-{target}.wav"
                t = np.arange(int(seconds * rate)) / rate
                audio = 0.1 * np.sin(2 * np.pi * (200 + 40 * target) * t) + 0.01 * rng.standard_normal(len(t))
                soundfile.write(root / "audio" / name, audio.astype(np.float32), rate)
                row = {
                    "filename": name,
                    "fold": fold,
                    "target": target,
                    "category": category,
                    "esc10": "False",
                    "src_file": src,
                    "take": "A",
                }
                rows.append({c: row.get(c, "") for c in columns})
    with (root / "meta" / "esc50.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return root


def _note(instrument: str, family: str, source: str, pitch: int, velocity: int, rate: int = 16_000) -> dict:
    return {
        "note": abs(hash((instrument, pitch, velocity))) % 10**6,
        "note_str": f"{instrument}-{pitch:03d}-{velocity:03d}",
        "instrument": 0,
        "instrument_str": instrument,
        "pitch": pitch,
        "velocity": velocity,
        "sample_rate": rate,
        "qualities": [0] * 10,
        "qualities_str": [],
        "instrument_family": 0,
        "instrument_family_str": family,
        "instrument_source": 0,
        "instrument_source_str": source,
    }


def write_nsynth_split(
    root: Path, split: str, notes: list[dict], *, seconds: float = 1.5, wav_rate: int = 16_000
) -> None:
    folder = root / f"nsynth-{split}"
    (folder / "audio").mkdir(parents=True, exist_ok=True)
    for note in notes:
        t = np.arange(int(seconds * wav_rate)) / wav_rate
        audio = (
            0.2 * note["velocity"] / 127 * np.sin(2 * np.pi * 440 * 2 ** ((note["pitch"] - 69) / 12) * t) * np.exp(-t)
        )
        soundfile.write(folder / "audio" / f"{note['note_str']}.wav", audio.astype(np.float32), wav_rate)
    (folder / "examples.json").write_text(json.dumps({n["note_str"]: n for n in notes}))


def write_nsynth(root: Path) -> Path:
    """Two shared valid/test instruments (keyboard, string) and six train candidates."""
    pitches = (30, 36, 43, 51, 60, 72, 84, 90)  # 30 and 90 are out of range
    valid, test, train = [], [], []
    for inst, fam in (("keyboard_acoustic_001", "keyboard"), ("string_acoustic_002", "string")):
        valid += [_note(inst, fam, "acoustic", p, 75) for p in pitches]
        test += [_note(inst, fam, "acoustic", p, 100) for p in pitches]
        test.append(_note(inst, fam, "acoustic", 60, 75))  # same note id as a valid note -> dropped
    for k, (fam, source) in enumerate(
        [
            ("keyboard", "acoustic"),
            ("keyboard", "electronic"),
            ("keyboard", "acoustic"),
            ("string", "acoustic"),
            ("string", "acoustic"),
            ("string", "synthetic"),
        ]
    ):
        inst = f"{fam}_{source}_1{k:02d}"
        train += [_note(inst, fam, source, p, v) for p in range(36, 85, 3) for v in (50, 100)]
    write_nsynth_split(root, "valid", valid)
    write_nsynth_split(root, "test", test)
    write_nsynth_split(root, "train", train, seconds=1.3)
    return root


@pytest.fixture
def layouts():
    """The folder writers, for tests: ``layouts.write_esc50(root)``, ``layouts.write_nsynth(root)``."""
    return types.SimpleNamespace(
        write_esc50=write_esc50,
        write_nsynth=write_nsynth,
        write_nsynth_split=write_nsynth_split,
        ESC_COLUMNS=ESC_COLUMNS,
    )
