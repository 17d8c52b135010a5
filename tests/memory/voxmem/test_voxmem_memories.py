"""Spoken-history memories: the history every model sees, ASR caching, cascade tags, probes."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.agents.voxmem_agent import form_memory
from memgym.core.chat import AudioPart, TextPart
from memgym.core.episode import Dataset
from memgym.core.errors import MemgymError
from memgym.core.registry import MEMORIES
from memgym.datasets.voxmem.audio_files import read_turn_audio
from memgym.envs.voxmem_env import VoxMemEnv
from memgym.memory.voxmem.acoustic_tags import cue_tags, speaker_labels
from memgym.memory.voxmem.cache import TurnCache
from memgym.memory.voxmem.cascaded import CascadedMemory
from memgym.memory.voxmem.full_history import FullHistoryMemory
from memgym.memory.voxmem.history import VoxMemQuery
from memgym.memory.voxmem.probes import CascadedEvidenceOnlyMemory, EvidenceOnlyMemory, OracleTagsMemory
from memgym.memory.voxmem.retrieval import rank_sessions
from memgym.memory.voxmem.transcript import TranscriptMemory


def _episodes(folder):
    return list(Dataset.load(folder / "manifest.jsonl"))


def _fed(memory, episode, folder):
    form_memory(VoxMemEnv(dataset=folder), memory, episode)
    return memory


def _question(episode, folder):
    return VoxMemQuery(episode.items[0].prompt, read_turn_audio(folder / episode.question_audio))


def test_registered():
    names = ("full_history", "transcript", "cascaded", "evidence_only", "cascaded_evidence_only", "oracle_tags")
    for name in (*names, "no_history"):
        assert name in MEMORIES


def test_full_history_layout(vox_dataset):
    episode = _episodes(vox_dataset)[0]
    messages = _fed(FullHistoryMemory(), episode, vox_dataset).retrieve(_question(episode, vox_dataset))
    assert messages[0].role == "system"
    users = sum(t.role == "user" for s in episode.sessions for t in s.turns)
    audio_parts = [p for m in messages for p in m.content if isinstance(p, AudioPart)]
    assert len(audio_parts) == users + 1  # every user turn, then the question in the asker's voice
    headers = [p.text for m in messages for p in m.content if isinstance(p, TextPart) and p.text.startswith("Session")]
    assert headers == [f"Session {k} - {s.timestamp}\n" for k, s in enumerate(episode.sessions, start=1)]
    replies = [m.text_only().splitlines()[-1] for m in messages if m.role == "assistant"]
    assert replies == [t.text for s in episode.sessions for t in s.turns if t.role == "assistant"]
    assert messages[-1].text_only() == f"Question: {episode.items[0].prompt}"


def test_no_history_hands_only_the_system_prompt_and_the_question(vox_dataset):
    episode = _episodes(vox_dataset)[0]
    full = _fed(FullHistoryMemory(), episode, vox_dataset).retrieve(_question(episode, vox_dataset))
    memory = _fed(MEMORIES.get("no_history")(), episode, vox_dataset)
    messages = memory.retrieve(_question(episode, vox_dataset))
    assert [m.role for m in messages] == ["system", "user"] and messages[0] == full[0]
    assert messages[-1].content == (TextPart(f"Question: {episode.items[0].prompt}"),)  # no audio at all
    assert memory.seen() == {"formed_sessions": [], "handed_sessions": [], "handed_turns": 0}


def test_env_observations_give_the_same_history(vox_dataset):
    """A memory fed by VoxMemEnv sees exactly the history the dataset holds."""
    episode = _episodes(vox_dataset)[1]
    memory = _fed(FullHistoryMemory(), episode, vox_dataset)
    turns = [(k, s, t) for k, s in enumerate(episode.sessions) for t in s.turns]
    assert len(memory.turns) == len(turns)
    for heard, (k, session, turn) in zip(memory.turns, turns):
        text = "" if turn.role == "user" else turn.text
        assert (heard.session, heard.timestamp, heard.role, heard.text) == (k, session.timestamp, turn.role, text)
        if turn.role == "user":
            assert np.array_equal(heard.audio, read_turn_audio(vox_dataset / turn.audio))


def test_transcript_memory_transcribes_each_turn_once(vox_dataset, truth_asr, tmp_path):
    episode = _episodes(vox_dataset)[0]
    cache = TurnCache(tmp_path / "turns.jsonl")
    memory = _fed(TranscriptMemory(truth_asr, cache), episode, vox_dataset)
    before = truth_asr.calls
    messages = memory.retrieve(episode.items[0].prompt)
    body = messages[-1].text_only()
    first_user = next(t for s in episode.sessions for t in s.turns if t.role == "user")
    assert f"User: {first_user.text}" in body and body.endswith(f"Question: {episode.items[0].prompt}")
    calls = truth_asr.calls - before
    assert 0 < calls <= sum(t.role == "user" for s in episode.sessions for t in s.turns)
    memory.retrieve(episode.items[0].prompt)
    again = TranscriptMemory(truth_asr, TurnCache(tmp_path / "turns.jsonl"))  # reloaded from disk
    _fed(again, episode, vox_dataset).retrieve(episode.items[0].prompt)
    assert truth_asr.calls - before == calls


def test_cascade_tags_and_marks_the_asker(vox_dataset, truth_asr):
    episode = _episodes(vox_dataset)[0]
    memory = _fed(CascadedMemory(truth_asr, None, TurnCache(), top_sessions=0), episode, vox_dataset)
    messages = memory.retrieve(_question(episode, vox_dataset))
    lines = [line for line in messages[-1].text_only().splitlines() if line.startswith("User: [voice ")]
    assert len(lines) == sum(t.role == "user" for s in episode.sessions for t in s.turns)
    assert any("the person asking now" in line for line in lines)
    assert messages == memory.retrieve(_question(episode, vox_dataset))  # deterministic


def test_speaker_clusters_and_cue_scores():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 5, (3, 26))
    voices = [centres[k] + rng.normal(0, 0.1, 26) for k in (0, 1, 0, 2, 1, 2, 0)]
    labels = speaker_labels(voices)
    assert labels == ["A", "B", "A", "C", "B", "C", "A"]
    base = {
        "rate": 3.0,
        "f0_hz": 120.0,
        "pause": 0.1,
        "prominence_db": 6.0,
        "tail_f0_ratio": 1.0,
        "tail_modulation": 0.0,
    }
    fast = {**base, "rate": 5.0}
    surprised = {**base, "f0_hz": 170.0}
    hesitant = {**base, "pause": 0.3}
    tags = cue_tags([base, base, fast, surprised, hesitant], ["A"] * 5, ["", "", "", "", "um well"])
    assert tags == ["calm and neutral", "calm and neutral", "fast", "surprised", "hesitant"]


def test_rank_sessions_keeps_history_order():
    sessions = ["we fixed the fence", "the kitchen renovation budget", "weather", "kitchen renovation tiles"]
    assert rank_sessions("What budget for the kitchen renovation?", sessions, 2) == [1, 3]
    assert rank_sessions("anything", sessions, 0) == [0, 1, 2, 3]


def test_probes_read_ground_truth(vox_dataset):
    episode = next(e for e in _episodes(vox_dataset) if e.items[0].annotations["cell"] == "sound/IE")
    probe = _fed(EvidenceOnlyMemory(), episode, vox_dataset)
    with pytest.raises(MemgymError, match="bind_episode"):
        probe.retrieve("q")
    probe.bind_episode(episode)
    headers = [m for m in probe.retrieve("q") if m.text_only().startswith("Session")]
    evidence = [s for s in episode.sessions if s.session_id in episode.items[0].annotations["evidence_sessions"]]
    assert len(headers) == len(evidence) >= 1
    oracle = _fed(OracleTagsMemory(top_sessions=0), episode, vox_dataset)
    oracle.bind_episode(episode, asker="u0")
    text = oracle.retrieve(episode.items[0].prompt)[-1].text_only()
    sound = next(t.sound for s in evidence for t in s.turns if t.role == "user")
    assert f"background: {sound.replace('_', ' ')}]" in text and "the person asking now" in text


def test_the_evidence_only_cascade_hears_and_hands_over_only_the_evidence_sessions(vox_dataset, truth_asr):
    episode = next(
        e for e in _episodes(vox_dataset) if len(e.sessions) > len(e.items[0].annotations["evidence_sessions"])
    )
    with pytest.raises(MemgymError, match="bind_episode"):
        _fed(CascadedEvidenceOnlyMemory(truth_asr, None, TurnCache(), top_sessions=0), episode, vox_dataset)
    cache = TurnCache()
    probe = CascadedEvidenceOnlyMemory(truth_asr, None, cache, top_sessions=0)
    probe.bind_episode(episode)
    messages = _fed(probe, episode, vox_dataset).retrieve(_question(episode, vox_dataset))
    evidence = [s for s in episode.sessions if s.session_id in episode.items[0].annotations["evidence_sessions"]]
    users = [t for s in evidence for t in s.turns if t.role == "user"]
    lines = [line for line in messages[-1].text_only().splitlines() if line.startswith("User: [voice ")]
    assert len(lines) == len(users) >= 1 and {t.session for t in probe.turns} == {
        episode.sessions.index(s) for s in evidence
    }
    assert len(cache) == 2 * len({_key(t, vox_dataset) for t in users})  # words + measurements, evidence only
    indices = sorted(episode.sessions.index(s) for s in evidence)
    assert probe.seen() == {
        "formed_sessions": indices, "handed_sessions": indices, "handed_turns": sum(len(s.turns) for s in evidence)
    }  # fmt: skip
    narrow = CascadedMemory(truth_asr, None, cache, top_sessions=2)
    _fed(narrow, episode, vox_dataset).retrieve(_question(episode, vox_dataset))
    seen = narrow.seen()
    assert seen["formed_sessions"] == list(range(len(episode.sessions))) and len(seen["handed_sessions"]) == 2
    assert seen["handed_turns"] == sum(len(episode.sessions[i].turns) for i in seen["handed_sessions"])
    assert all(t.text.split()[0] in messages[-1].text_only() for t in users)


def test_memories_form_per_session_during_formation(vox_dataset, truth_asr):
    """Each finished session's turns are heard while formation goes on; the use phase adds only the
    last session's, and the recogniser hears every distinct turn once."""
    episode = _episodes(vox_dataset)[2]
    cache = TurnCache()
    memory = CascadedMemory(truth_asr, None, cache, top_sessions=0)
    env = VoxMemEnv(dataset=vox_dataset)
    observation, info = env.reset(options={"episode": episode})
    heard_before = []
    while info["phase"] == "formation":
        memory.observe(observation)
        if observation["session_start"]:  # the sessions before this one are formed
            heard_before.append(len(cache))
        observation, _, _, _, info = env.step("")
    keys = [
        [_key(t, vox_dataset) for t in s.turns if t.role == "user"] for s in episode.sessions
    ]  # per session, the user turns' cache keys
    distinct = [len(set().union(*map(set, keys[:k]))) for k in range(len(keys))]
    assert [n // 2 for n in heard_before] == distinct  # words + measurements of every earlier session
    memory.retrieve(observation)
    assert len(cache) == 2 * len(set().union(*map(set, keys)))


def _key(turn, folder):
    from memgym.memory.voxmem.history import VoxMemTurn

    return VoxMemTurn(0, "", "user", read_turn_audio(folder / turn.audio)).key


def test_memories_build_themselves_from_shared_options():
    """Each VoxMem memory takes what it uses from one VoxMemOptions; the recogniser is built once,
    on first use, and shared with the turn cache; probes read ground truth (``truth``)."""
    from memgym.core.registry import MEMORIES
    from memgym.memory.voxmem.options import VoxMemOptions

    class Words:
        def transcribe(self, audio, sample_rate):
            return "words"

    built = []
    options = VoxMemOptions(top_sessions=2, make_asr=lambda: built.append("asr") or Words())
    memories = {name: MEMORIES.get(name).from_options(options) for name in ("full_history", "evidence_only")}
    assert built == []  # the audio memories need no recogniser
    memories.update({n: MEMORIES.get(n).from_options(options) for n in ("transcript", "cascaded", "oracle_tags")})
    assert built == ["asr"] and memories["transcript"].asr is memories["cascaded"].asr
    assert memories["transcript"].cache is memories["cascaded"].cache is options.cache
    assert memories["cascaded"].top_sessions == memories["oracle_tags"].top_sessions == 2
    assert memories["cascaded"].sound_tagger is None  # no make_sound_tagger: no sound tags
    reads = {name: memory.reads for name, memory in memories.items()}
    assert reads["cascaded"] == reads["full_history"] == {"audio", "dialogue"}
    assert reads["oracle_tags"] == reads["evidence_only"] == {"audio", "dialogue", "truth"}
    with pytest.raises(MemgymError, match="make_asr"):
        MEMORIES.get("transcript").from_options(VoxMemOptions())
