"""The QC-1 model pass (qc_model): offline listener checks, redraw-then-drop, unchanged config hashes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memgym.backends.asr import ASRConfig
from memgym.core.episode import Dataset
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.seeding import config_hash
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.datasets.voxmem.qc_model import ModelQC


def test_off_by_default_and_config_hashes_unchanged():
    assert VoxMemConfig().qc_model == ""
    assert config_hash(VoxMemConfig()) == "e0f904fb708fea2a"  # qc_model off leaves the default's hash alone
    assert config_hash(VoxMemConfig(qc_model="offline")) != config_hash(VoxMemConfig())


def _truth(folder):
    """A transcriber that returns each turn's script (looked up by audio path)."""
    words = {
        t.audio: t.text
        for e in Dataset.load(folder / "manifest.jsonl")
        for s in e.sessions
        for t in s.turns
        if t.role == "user"
    }
    return words.__getitem__


def _evidence_turn(sessions, keep):
    for i, session in enumerate(sessions):
        if session.role != "evidence":
            continue
        for j, turn in enumerate(session.turns):
            if turn.role == "user" and keep(turn):
                return i, j
    raise AssertionError("no such evidence turn")


def _with_turn(sessions, i, j, **changes):
    session = sessions[i]
    turns = list(session.turns)
    turns[j] = dataclasses.replace(turns[j], **changes)
    return [*sessions[:i], dataclasses.replace(session, turns=tuple(turns)), *sessions[i + 1 :]]


def test_offline_checks_pass_rendered_evidence_and_catch_what_was_not_rendered(small_build):
    _, folder, _ = small_build
    listener = ModelQC(folder, transcribe=_truth(folder))
    cells = ("semantics/TET", "sound/IE", "speaker/IE")
    episodes = [
        e
        for e in Dataset.load(folder / "manifest.jsonl")
        if e.budget == 8192 and e.items[0].annotations["cell"] in cells
    ]
    findings = [f for e in episodes for f in listener.findings(e.sessions)]
    assert not [f for f in findings if f.check == "model_transcript"]  # the script itself: WER 0
    checked = sum(1 for e in episodes for s in e.sessions if s.role == "evidence" for t in s.turns if t.role == "user")
    assert len(findings) <= checked // 4  # what a build renders is mostly heard as intended
    # a mixed-in sound the turn does not have, and a voice that is not the turn's user
    sessions = next(e.sessions for e in episodes if e.items[0].annotations["cell"] == "semantics/TET")
    i, j = _evidence_turn(sessions, lambda t: not t.sound)
    assert "model_sound" in {f.check for f in listener.findings(_with_turn(sessions, i, j, sound="rain"))}
    users = {t.user for s in sessions for t in s.turns if t.role == "user"}
    i, j = _evidence_turn(sessions, lambda t: True)
    wrong = sorted(users - {sessions[i].turns[j].user})[0]
    swapped = listener.findings(_with_turn(sessions, i, j, user=wrong))
    assert any(f.check == "model_speaker" and f.audio == sessions[i].turns[j].audio for f in swapped)


class NoListener(Reasoner):
    """An audio LM that hears nothing: empty transcripts, "no" to every question."""

    def generate(self, messages, *, max_new_tokens=256):
        return "" if "Transcribe" in messages[-1].text_only() else "No."


def test_failing_sessions_are_redrawn_then_dropped_and_reported(tmp_path):
    config = VoxMemConfig(
        items=1, cells=("sound/IE",), budgets=("4k",), max_revisions=1, asr=ASRConfig(kind="none"),
        qc_model="openai:listener@http://127.0.0.1:1/v1", out=str(tmp_path),
    )  # fmt: skip
    VoxMemBuilder(config, qc_model=NoListener()).build()
    report = json.loads((tmp_path / "qc_report.json").read_text())
    assert report["items_kept"] == 0 and report["revised"] == 2
    assert "session_model_transcript" in report["discarded"][0]["failed"]
    findings = report["model_qc"]["findings"]
    assert {f["attempt"] for f in findings} == {0, 1}  # the redraw is plan vox00000r1
    assert {f["item"][:8] for f in findings} == {"vox00000"}
    assert report["model_qc"]["failed_turns_per_check"]["model_sound"] >= 1
    assert "QC-1 model pass" in (tmp_path / "qc_report.md").read_text()


def test_a_model_pass_without_its_listener_is_a_config_error(tmp_path):
    none = ASRConfig(kind="none")
    with pytest.raises(ConfigError, match="recogniser"):
        VoxMemBuilder(VoxMemConfig(qc_model="offline", asr=none, out=str(tmp_path)))
    with pytest.raises(ConfigError, match="audio LM"):
        VoxMemBuilder(VoxMemConfig(qc_model="hf_audio:/models/none", asr=none, out=str(tmp_path)))
