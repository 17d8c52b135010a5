"""The intelligibility gate in a build: kept items are heard, unheard ones are redrawn (in their cell) and
dropped only after ``max_revisions`` redraws; the QC report gives per-cell drop and redraw rates."""

from __future__ import annotations

import json

import pytest

from memgym.backends.asr import ASRConfig
from memgym.backends.asr.base import ASRBackend
from memgym.core.episode import Dataset
from memgym.datasets.voxmem import qc
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig

CONFIG = dict(  # 4K histories are tight: without lead silence every failed draw is the gate's
    items=2, cells=("paralinguistic/IE", "sound/IE"), budgets=("4k",), asr=ASRConfig(kind="none"), lead_silence_s=0.0
)


class Deaf(ASRBackend):
    """A recogniser that hears nothing."""

    kind = "deaf"

    def _decode(self, audio, sample_rate):
        return ""


def test_items_whose_values_are_not_heard_are_redrawn_then_dropped(tmp_path):
    builder = VoxMemBuilder(VoxMemConfig(**CONFIG, max_revisions=1, out=str(tmp_path)))
    builder.gate = qc.IntelligibilityGate(tmp_path, Deaf())
    builder.build()
    report = json.loads((tmp_path / "qc_report.json").read_text())
    assert report["items_kept"] == 0 and report["revised"] == 4  # every failing draw counts
    assert all("session_intelligible" in d["failed"] for d in report["discarded"]) and len(report["discarded"]) == 2
    assert report["check_failures"]["session_intelligible"] >= 2  # every rendered draw (a draw can fail earlier)
    cells = report["per_cell"]
    assert {c: (r["planned"], r["kept"], r["dropped"], r["drop_rate"]) for c, r in cells.items()} == {
        "paralinguistic/IE": (1, 0, 1, 1.0), "sound/IE": (1, 0, 1, 1.0)
    }  # fmt: skip
    assert sum(r["redraws"] for r in cells.values()) == 4 and "| drop rate |" in (tmp_path / "qc_report.md").read_text()


class DeafAtFirst(qc.IntelligibilityGate):
    """A gate that fails the first ``misses`` draws it checks (with ``edited_only``, the first draws holding
    an AR edit: a refusal's session), then passes every draw."""

    def __init__(self, root, misses, edited_only=False):
        super().__init__(root, Deaf())
        self.misses, self.edited_only = misses, edited_only

    def failures(self, sessions):
        checked = [s.session_id for s in sessions if not self.edited_only or "+" in s.source]
        if checked and self.misses > 0:
            self.misses -= 1
            return {checked[0]: ["intelligible"]}
        return {}


def test_unheard_items_are_redrawn_in_their_cell_not_dropped(tmp_path):
    """The default redraw cap keeps an item that fails the gate three times: every cell keeps its
    planned items, and the report gives each cell's draws, redraws and gate failures."""
    builder = VoxMemBuilder(VoxMemConfig(**CONFIG, out=str(tmp_path)))
    builder.gate = DeafAtFirst(tmp_path, misses=3)
    builder.build()
    report = json.loads((tmp_path / "qc_report.json").read_text())
    assert report["items_kept"] == 2 and report["discarded"] == []
    first = report["per_cell"]["paralinguistic/IE"]
    assert (first["planned"], first["kept"], first["dropped"], first["draws"], first["redraws"]) == (1, 1, 0, 4, 3)
    assert first["gate_failed_draws"] == 3 and first["gate_fail_rate"] == 0.75
    assert report["per_cell"]["sound/IE"]["redraws"] == 0


def test_an_ar_item_whose_only_source_fails_is_redrawn_from_a_stand_in_not_dropped(tmp_path):
    """One sound item, one sound AR item: the refusal derived from the item fails the gate, so the AR
    item is redrawn from stand-in sources drawn from its own sub-seed until one passes."""
    config = {**CONFIG, "cells": ("sound/IE", "sound/AR")}
    builder = VoxMemBuilder(VoxMemConfig(**config, out=str(tmp_path)))
    builder.gate = DeafAtFirst(tmp_path, misses=2, edited_only=True)
    builder.build()
    report = json.loads((tmp_path / "qc_report.json").read_text())
    assert report["items_kept"] == 2 and report["discarded"] == []
    ar = report["per_cell"]["sound/AR"]
    assert (ar["planned"], ar["kept"], ar["dropped"], ar["gate_failed_draws"]) == (1, 1, 0, 2)
    assert ar["redraws"] >= 2  # a stand-in may also fail another check (4K histories are tight)
    episodes = list(Dataset.load(tmp_path / "manifest.jsonl"))
    refusal = next(e.items[0] for e in episodes if e.items[0].annotations["operation"] == "AR")
    assert refusal.item_id == f"vox00001r{ar['redraws']}" == refusal.annotations["source_item"]
    assert refusal.annotations["subtype"].startswith("from_") and refusal.answer == episodes[-1].items[0].answer


@pytest.mark.slow  # Whisper tiny.en on every evidence turn of two items
def test_kept_items_have_every_stated_value_heard_and_the_report_breaks_wer_down(tmp_path):
    config = VoxMemConfig(**{**CONFIG, "asr": ASRConfig()}, out=str(tmp_path))
    VoxMemBuilder(config).build()
    report = json.loads((tmp_path / "qc_report.json").read_text())["intelligibility"]
    episodes = list(Dataset.load(tmp_path / "manifest.jsonl"))
    assert report["answer_turns"]["recognised"] == report["answer_turns"]["said"] > 0 or not episodes
    voices = {v for e in episodes for v in e.annotations["voices"].values()}
    assert set(report["wer_by_voice"]) <= voices and set(report["wer_by_background"]) <= {"none", "sound"}
    assert sum(row["turns"] for row in report["wer_by_cue"].values()) == report["turns"]
    assert 0.0 <= report["wer"]["wer"] < 1.0 and "| voice | WER |" in (tmp_path / "qc_report.md").read_text()


class HearsOnlyCleanTurns(ASRBackend):
    """Returns a turn's true words when it is clean (neutral, no sound), nothing otherwise; batched."""

    kind = "clean-only"

    def __init__(self, folder):
        import numpy as np
        import soundfile

        super().__init__()
        self.words, self.batches = {}, []
        for episode in Dataset.load(folder / "manifest.jsonl"):
            for session in episode.sessions:
                for turn in session.turns:
                    if turn.role == "user":
                        audio, _ = soundfile.read(str(folder / turn.audio), dtype="float32")
                        clean = qc.turn_condition(turn) == "clean"
                        self.words[np.ascontiguousarray(audio).tobytes()] = turn.text if clean else ""

    def _decode(self, audio, sample_rate):
        import numpy as np

        return self.words[np.ascontiguousarray(audio, dtype=np.float32).tobytes()]

    def transcribe_batch(self, clips, sample_rate):
        self.batches.append(len(clips))
        return [self.transcribe(c, sample_rate) for c in clips]


def test_the_report_hears_every_turn_by_condition_and_role(vox_dataset, tmp_path):
    """WER over every distinct user turn (evidence, haystack and filler; clean, cued, with sound),
    heard in batches: a recogniser that hears only clean turns scores 0 % on them and 100 % on the rest."""
    import shutil

    folder = tmp_path / "d"
    shutil.copytree(vox_dataset, folder)  # the gate writes its transcripts beside the audio
    asr = HearsOnlyCleanTurns(folder)
    gate = qc.IntelligibilityGate(folder, asr)
    episodes = list(Dataset.load(folder / "manifest.jsonl"))
    report = gate.report(episodes)
    user_turns = {t.audio for e in episodes for s in e.sessions for t in s.turns if t.role == "user"}
    assert report["turns"] == len(user_turns) and sum(asr.batches) == len(user_turns) and len(asr.batches) >= 1
    conditions = report["wer_by_condition"]
    assert conditions["clean"]["wer"] == 0.0 and conditions["clean"]["turns"] > 0
    assert {c: r["wer"] for c, r in conditions.items() if c != "clean"} == dict.fromkeys(
        set(conditions) - {"clean"}, 1.0
    )
    assert {"sound", "cued"} <= set(conditions)
    assert set(report["wer_by_role"]) == {"evidence", "haystack", "filler"}
    assert sum(r["turns"] for r in report["wer_by_role"].values()) == report["turns"]
    assert report["evidence_wer"] == report["wer_by_role"]["evidence"]
    qc.write_report(folder, {"items_kept": 1, "items_planned": 1, "discarded": [], "revised": 0,
                             "max_session_reuse": 1, "reuse_limit": 4, "audio_hours": 0.1, "user_turns": 1,
                             "check_failures": {}, "items_per_cell": {}, "intelligibility": report})  # fmt: skip
    text = (folder / "qc_report.md").read_text()
    assert "| condition | WER |" in text and "| clean | 0.0% |" in text and "| role | WER |" in text
