"""Loader for a local NSynth folder: ``nsynth-{train,valid,test}/examples.json`` + ``audio/*.wav``.

Instrument sets (AMemOps section 3):

* **Set 1** — the instruments present in both the official ``valid`` and ``test`` splits, notes
  at MIDI pitches 36-84. ``train`` = their valid notes, ``eval`` = their test notes, with
  disjoint note ids (a test note whose id also occurs in valid is dropped).
* **Sets 2 and 3** — two disjoint sets of unseen instruments from ``nsynth-train``, one per
  Set-1 instrument, matched by family and source type and, among those, by the Jaccard overlap
  of their (pitch, velocity) coverage with the Set-1 instrument (greedy in Set-1 order: Set 2
  takes the best match, Set 3 the next best). Their notes at pitches ≡ 3 (mod 8) are
  ``calibration`` recordings (disjoint pitches; they define similarity pools); the others are
  split ``eval`` / ``train`` by a hash of the note id (``eval_fraction``, default 2632/9086).

Only the splits a set needs are read (``nsynth-train/examples.json`` only for Sets 2/3).
``exclude_duplicates=True`` also drops evaluation notes that are exact waveform duplicates of a
training note.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.paths import require_folder
from memgym.core.textfiles import read_text
from memgym.datasets.sources.audio_io import read_wav, wav_num_samples
from memgym.datasets.sources.library import RecordingInfo, SourceLibrary
from memgym.datasets.sources.synthesis import stable_seed

NSYNTH_RATE = 16_000
REQUIRED_FIELDS = (
    "note_str",
    "instrument_str",
    "pitch",
    "velocity",
    "sample_rate",
    "instrument_family_str",
    "instrument_source_str",
)
PITCH_RANGE = (36, 84)


def read_examples(root: Path, split: str) -> dict[str, dict[str, Any]]:
    """``note_str -> metadata`` of ``root/nsynth-{split}/examples.json``, validated.

    Raises:
        MemgymError: missing file, invalid JSON, a note without a required field, a sample
            rate other than 16 kHz, or a listed wav that does not exist.
    """
    folder = root / f"nsynth-{split}"
    path = folder / "examples.json"
    if not path.is_file():
        raise MemgymError(f"NSynth folder {root} has no nsynth-{split}/examples.json")
    try:
        examples = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise MemgymError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(examples, dict):
        raise MemgymError(f"{path}: expected an object mapping note ids to metadata")
    for key, meta in examples.items():
        if not isinstance(meta, dict):
            raise MemgymError(f"{path}: note '{key}' is {type(meta).__name__} {meta!r}, expected an object of fields")
        missing = [f for f in REQUIRED_FIELDS if f not in meta]
        if missing:
            raise MemgymError(f"{path}: note '{key}' lacks field(s) {missing}; expected {list(REQUIRED_FIELDS)}")
        if meta["sample_rate"] != NSYNTH_RATE:
            raise MemgymError(f"{path}: note '{key}' has sample_rate {meta['sample_rate']}, expected {NSYNTH_RATE}")
        if not (folder / "audio" / f"{meta['note_str']}.wav").is_file():
            raise MemgymError(f"{path}: audio file {folder / 'audio' / (meta['note_str'] + '.wav')} does not exist")
    return examples


def _in_range(meta: dict[str, Any]) -> bool:
    return PITCH_RANGE[0] <= int(meta["pitch"]) <= PITCH_RANGE[1]


def _by_instrument(examples: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for meta in examples.values():
        if _in_range(meta):
            out.setdefault(meta["instrument_str"], []).append(meta)
    return out


def _coverage(notes: list[dict[str, Any]]) -> set[tuple[int, int]]:
    return {(int(n["pitch"]), int(n["velocity"])) for n in notes}


def match_unseen_sets(
    set1: dict[str, list[dict[str, Any]]], candidates: dict[str, list[dict[str, Any]]]
) -> tuple[list[str], list[str]]:
    """Pick Sets 2 and 3 from ``candidates``: per Set-1 instrument, the two best unused matches.

    Returns:
        (set 2 instruments, set 3 instruments), aligned with sorted Set-1 instruments.
    Raises:
        MemgymError: some Set-1 instrument has fewer than two unused candidates of its family.
    """
    used: set[str] = set()
    sets: tuple[list[str], list[str]] = ([], [])
    for target in sorted(set1):
        ref = set1[target][0]
        cover = _coverage(set1[target])
        for chosen in sets:
            pool = [
                c
                for c in sorted(candidates)
                if c not in used and candidates[c][0]["instrument_family_str"] == ref["instrument_family_str"]
            ]
            if not pool:
                raise MemgymError(
                    f"NSynth: no unused nsynth-train instrument of family '{ref['instrument_family_str']}' "
                    f"left to match Set-1 instrument '{target}'"
                )

            def score(c: str, ref: dict = ref, cover: set = cover) -> tuple[int, float, str]:
                same_source = candidates[c][0]["instrument_source_str"] == ref["instrument_source_str"]
                other = _coverage(candidates[c])
                return (int(same_source), len(cover & other) / max(len(cover | other), 1), c)

            best = max(pool, key=score)
            used.add(best)
            chosen.append(best)
    return sets


class NSynthLibrary(SourceLibrary):
    """One NSynth instrument set from a local folder (see the module docstring).

    Args:
        root: folder holding ``nsynth-valid``, ``nsynth-test`` (and ``nsynth-train`` for Sets 2/3).
        instrument_set: 1, 2 or 3.
        eval_fraction: Sets 2/3 only: fraction of non-calibration notes that go to ``eval``.
        exclude_duplicates: drop evaluation/calibration notes whose waveform exactly equals a
            training note's (paper section 3; reads every wav of the set once).
        cache_size: notes kept in memory.
    """

    name = "nsynth"

    def __init__(
        self,
        root: str | Path,
        *,
        instrument_set: int = 1,
        eval_fraction: float = 2632 / 9086,
        exclude_duplicates: bool = False,
        cache_size: int = 2048,
    ) -> None:
        self.root = Path(root)
        self.instrument_set = instrument_set
        if instrument_set not in (1, 2, 3):
            raise MemgymError(f"NSynth instrument_set must be 1, 2 or 3, got {instrument_set}")
        require_folder(self.root, "NSynth folder", "the NSynth folder (with nsynth-valid/, nsynth-test/)")
        valid, test = read_examples(self.root, "valid"), read_examples(self.root, "test")
        by_valid, by_test = _by_instrument(valid), _by_instrument(test)
        set1 = {i: by_valid[i] + by_test[i] for i in sorted(set(by_valid) & set(by_test))}
        if not set1:
            raise MemgymError(f"NSynth folder {self.root}: no instrument occurs in both nsynth-valid and nsynth-test")
        self._files: dict[str, Path] = {}
        infos: list[RecordingInfo] = []
        if instrument_set == 1:
            for split_name, split, examples in (("valid", "train", valid), ("test", "eval", test)):
                for meta in examples.values():
                    if meta["instrument_str"] not in set1 or not _in_range(meta):
                        continue
                    if split == "eval" and meta["note_str"] in valid:
                        continue  # disjoint note ids
                    infos.append(self._info(meta, split, split_name))
        else:
            train = read_examples(self.root, "train")
            set2, set3 = match_unseen_sets(set1, _by_instrument(train))
            chosen = set(set2 if instrument_set == 2 else set3)
            for meta in train.values():
                if meta["instrument_str"] not in chosen or not _in_range(meta):
                    continue
                if int(meta["pitch"]) % 8 == 3:
                    split = "calibration"
                else:
                    u = stable_seed("nsynth-split", meta["note_str"]) / 2**63
                    split = "eval" if u < eval_fraction else "train"
                infos.append(self._info(meta, split, "train"))
        if exclude_duplicates:
            infos = self._without_duplicates(infos)
        super().__init__(infos, cache_size=cache_size)

    def _without_duplicates(self, infos: list[RecordingInfo]) -> list[RecordingInfo]:
        """Drop eval/calibration notes whose waveform exactly equals a train note's (reads every wav)."""
        import soundfile

        def digest(info: RecordingInfo) -> str:
            data, _ = soundfile.read(str(self._files[info.recording_id]), dtype="int16")
            return hashlib.sha1(data.tobytes()).hexdigest()

        train = {digest(i) for i in infos if i.split == "train"}
        return [i for i in infos if i.split == "train" or digest(i) not in train]

    def _info(self, meta: dict[str, Any], split: str, source_split: str) -> RecordingInfo:
        self._files[meta["note_str"]] = self.root / f"nsynth-{source_split}" / "audio" / f"{meta['note_str']}.wav"
        return RecordingInfo(
            recording_id=meta["note_str"],
            identity=meta["instrument_str"],
            split=split,
            family=meta["instrument_family_str"],
            source_type=meta["instrument_source_str"],
            pitch=int(meta["pitch"]),
            velocity=int(meta["velocity"]),
            excerpt_start="zero",
        )

    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        return read_wav(self._files[info.recording_id], NSYNTH_RATE)

    def num_samples(self, recording_id: str) -> int:
        return wav_num_samples(self._files[self.info(recording_id).recording_id])

    def fingerprint(self) -> str:
        return f"{self.name}:{self.root.resolve()}:set{self.instrument_set}:{len(self.all_infos())}"
