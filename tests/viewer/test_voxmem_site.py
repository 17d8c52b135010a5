"""VoxMem viewer data: sessions in order, the dataset's audio as WAV, every (model, memory) reply."""

from __future__ import annotations

import io

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
    # the n-th user turn's player plays that turn's audio file, as it is
    user_turns = [t for s in episode.sessions for t in s.turns if t.role == "user"]
    shown = [t for s in data["sessions"] for t in s["turns"] if t["role"] == "user"]
    assert [t["text"] for t in shown] == [t.text for t in user_turns]
    assert shown[2]["audio"] == "media/0/audio_3.flac"
    assert site.media("0/audio_3.flac") == (vox_dataset / user_turns[2].audio).read_bytes()
    question, rate = soundfile.read(io.BytesIO(site.media("0/audio_0.flac")), dtype="float32")
    assert rate == 16000 and len(question) == len(soundfile.read(str(vox_dataset / episode.question_audio))[0])
    assert len(site.media_names(0)) == 1 + len({t.audio for t in user_turns})
    # a recording heard in several episodes is one media file, named after the first that plays it
    owner: dict[str, str] = {}
    for key, ep in enumerate(episodes):
        heard = [t for s in ep.sessions for t in s.turns if t.role == "user" and t.audio]
        refs = [t["audio"] for s in site.episode(key)["sessions"] for t in s["turns"] if "audio" in t]
        for turn, ref in zip(heard, refs):
            assert owner.setdefault(turn.audio, ref) == ref
    names = [name for key in range(len(episodes)) for name in site.media_names(key)]
    questions = {e.question_audio for e in episodes if e.question_audio}
    assert (
        len(names)
        == len(set(names))
        == len(set(owner) | questions)
        < sum(len(site.audio_paths(k)) for k in range(len(episodes)))
    )
