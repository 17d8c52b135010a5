"""VoxMem viewer data: sessions in order, the dataset's audio as WAV, every (model, memory) reply."""

from __future__ import annotations

import io

import numpy as np
import soundfile

from memgym.core.episode import Dataset
from memgym.viewer.sites import open_site


def test_sessions_audio_and_replies(vox_dataset, voxmem_run):
    site = open_site(voxmem_run)
    episodes = Dataset.load(vox_dataset / "manifest.jsonl")
    assert [e["id"] for e in site.episodes()] == [e.episode_id for e in episodes]
    data = site.episode(0)
    episode = episodes[0]
    assert [s["role"] for s in data["sessions"]] == [s.role for s in episode.sessions]
    assert data["question"] == episode.items[0].prompt and data["answer"] == episode.items[0].answer
    assert {(r["model"], r["memory"]) for r in data["results"]} == {
        ("structured", "oracle_tags"),
        ("structured", "transcript"),
    }
    # the n-th user turn's player plays that turn's audio, unchanged but for 16-bit rounding
    user_turns = [t for s in episode.sessions for t in s.turns if t.role == "user"]
    shown = [t for s in data["sessions"] for t in s["turns"] if t["role"] == "user"]
    assert [t["text"] for t in shown] == [t.text for t in user_turns]
    assert shown[2]["audio"] == "media/0/audio_3.wav"
    played, rate = soundfile.read(io.BytesIO(site.media("0/audio_3.wav")), dtype="float32")
    original, _ = soundfile.read(str(vox_dataset / user_turns[2].audio), dtype="float32")
    assert rate == 16000 and played.shape == original.shape and np.abs(played - original).max() < 1e-4
    question, _ = soundfile.read(io.BytesIO(site.media("0/audio_0.wav")), dtype="float32")
    assert len(question) == len(soundfile.read(str(vox_dataset / episode.question_audio))[0])
    assert len(site.media_names(0)) == 1 + len(user_turns)
