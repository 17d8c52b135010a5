"""A small end-to-end build: files, QC report, nesting, AR reuse, caching and determinism."""

from __future__ import annotations

import json

import pytest

from memgym.backends.asr import ASRConfig
from memgym.core.episode import Dataset
from memgym.core.protocols import Reasoner
from memgym.datasets.voxmem.build import VoxMemBuilder, VoxMemConfig


class AlwaysYes(Reasoner):
    """A text-only 'answerer' that says yes; records what it was shown."""

    prompts: list[str] = []

    def generate(self, messages, *, max_new_tokens=256):
        AlwaysYes.prompts.append(messages[-1].text_only())
        return "Yes."


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("vox")
    config = VoxMemConfig(  # no intelligibility gate here: it may drop items (tests/datasets/voxmem/test_gate.py)
        items=3,
        budgets=("4k", "8k"),
        out=str(out),
        filler_cue_rate=0.5,
        filler_sound_rate=0.5,
        asr=ASRConfig(kind="none"),
    )
    builder = VoxMemBuilder(config, qc_reasoner=AlwaysYes())
    return config, builder.build()


def test_build_writes_manifest_audio_and_qc(built):
    config, folder = built
    episodes = Dataset.load(folder / "manifest.jsonl")
    assert len(episodes) == 6 and (folder / "qc_report.md").is_file()
    qc = json.loads((folder / "qc_report.json").read_text())
    assert qc["items_kept"] == 3 and qc["max_session_reuse"] <= config.max_session_reuse
    native = [e for e in episodes if e.budget == 4096 and e.items[0].annotations["audio_native"]]
    llm = qc["transcript_llm"]
    assert llm["asked"] == len(native) == len(AlwaysYes.prompts)
    assert llm["solved"] == sum(e.items[0].answer == "yes" for e in native)
    assert all(".flac" not in p and "Session 1 - " in p for p in AlwaysYes.prompts)
    by_item = {}
    for e in episodes:
        assert e.tokens <= e.budget and all(s.timestamp for s in e.sessions)
        assert all((folder / t.audio).is_file() for s in e.sessions for t in s.turns if t.role == "user")
        by_item.setdefault(e.items[0].item_id, {})[e.budget] = e
    for budgets in by_item.values():
        short, long = budgets[4096], budgets[8192]
        ids = [s.session_id for s in long.sessions]
        assert [ids.index(s.session_id) for s in short.sessions] == sorted(
            ids.index(s.session_id) for s in short.sessions
        )
        stamps = {s.session_id: s.timestamp for s in long.sessions}
        assert all(stamps[s.session_id] == s.timestamp for s in short.sessions)
    ar = next(e for e in episodes if e.items[0].annotations["operation"] == "AR" and e.budget == 8192)
    assert ar.items[0].answer == "unanswerable"
    source = next(
        e for e in episodes if e.items[0].item_id == ar.items[0].annotations["source_item"] and e.budget == 8192
    )
    assert len(ar.sessions) == len(source.sessions) and ar.question_audio == source.question_audio
    assert [s.timestamp for s in ar.sessions] == [s.timestamp for s in source.sessions]
    changed = [(a, b) for a, b in zip(ar.sessions, source.sessions) if a.session_id != b.session_id]
    assert changed and all(a.role == b.role == "evidence" for a, b in changed)  # only the evidence differs


def test_rebuild_reuses_audio_and_is_identical(built):
    config, folder = built
    before = (folder / "manifest.jsonl").read_text()
    builder = VoxMemBuilder(config)
    builder.build()
    assert builder.renderer.rendered == 0 and builder.renderer.reused > 0
    assert (folder / "manifest.jsonl").read_text() == before


def test_same_config_and_seed_give_identical_datasets_in_fresh_folders(tmp_path, built):
    config, folder = built
    import dataclasses

    other = tmp_path / "again"
    VoxMemBuilder(dataclasses.replace(config, out=str(other))).build()
    assert (other / "manifest.jsonl").read_text() == (folder / "manifest.jsonl").read_text()
    first = sorted(p.relative_to(folder) for p in (folder / "audio").rglob("*.flac"))
    assert first == sorted(p.relative_to(other) for p in (other / "audio").rglob("*.flac"))
    sample = first[0]
    assert (folder / sample).read_bytes() == (other / sample).read_bytes()


def test_unknown_cells_and_budgets_are_config_errors(tmp_path):
    from memgym.core.errors import ConfigError

    with pytest.raises(ConfigError, match="not VoxMem cells"):
        VoxMemBuilder(VoxMemConfig(cells=("semantics/IE",), out=str(tmp_path)))
    with pytest.raises(ConfigError, match="not a token count"):
        VoxMemBuilder(VoxMemConfig(budgets=("lots",), out=str(tmp_path)))
