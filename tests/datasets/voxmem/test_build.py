"""A small end-to-end build: files, QC report, nesting, AR reuse, caching and determinism."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memgym.core.episode import Dataset
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig


def test_build_writes_manifest_audio_and_qc(small_build):
    config, folder, prompts = small_build
    episodes = Dataset.load(folder / "manifest.jsonl")
    assert len(episodes) == 18 and (folder / "qc_report.md").is_file()
    assert [e.items[0].item_id[:8] for e in episodes] == [f"vox{i:05d}" for i in range(6) for _ in range(3)]
    qc = json.loads((folder / "qc_report.json").read_text())
    assert qc["items_kept"] == 6 and qc["max_session_reuse"] <= config.max_session_reuse
    sources = {ar: source.split("r")[0] for ar, source in qc["ar_sources"].items()}  # a source may be a redraw
    assert sources == {"vox00001": "vox00000", "vox00003": "vox00002", "vox00005": "vox00004"}
    haystacks = [qc["sessions_per_budget"][str(b)]["haystack"] for b in (4096, 6144, 8192)]
    assert haystacks[0] < haystacks[1] < haystacks[2]
    native = [e for e in episodes if e.budget == 4096 and e.items[0].annotations["audio_native"]]
    llm = qc["transcript_llm"]
    assert llm["asked"] == len(native) == len(prompts)
    assert llm["solved"] == sum(e.items[0].answer == "yes" for e in native)
    assert all(".flac" not in p and "Session 1 - " in p for p in prompts)
    by_item = {}
    for e in episodes:
        assert e.tokens <= e.budget and all(s.timestamp for s in e.sessions)
        assert all((folder / t.audio).is_file() for s in e.sessions for t in s.turns if t.role == "user")
        by_item.setdefault(e.items[0].item_id, {})[e.budget] = e
    for budgets in by_item.values():
        for short, long in zip(sorted(budgets), sorted(budgets)[1:]):
            ids = [s.session_id for s in budgets[long].sessions]
            positions = [ids.index(s.session_id) for s in budgets[short].sessions]
            assert positions == sorted(positions)
            stamps = {s.session_id: s.timestamp for s in budgets[long].sessions}
            assert all(stamps[s.session_id] == s.timestamp for s in budgets[short].sessions)


def test_rebuild_reuses_audio_and_is_identical(small_build):
    config, folder, _ = small_build
    before = (folder / "manifest.jsonl").read_text()
    builder = VoxMemBuilder(config)
    builder.build()
    assert builder.renderer.rendered == 0 and builder.renderer.reused > 0
    assert (folder / "manifest.jsonl").read_text() == before


@pytest.mark.slow  # two more builds; in 'make test'
def test_same_config_and_seed_give_identical_datasets_in_fresh_folders(tmp_path, small_build):
    config, folder, _ = small_build
    other = tmp_path / "again"
    VoxMemBuilder(dataclasses.replace(config, out=str(other))).build()
    assert (other / "manifest.jsonl").read_text() == (folder / "manifest.jsonl").read_text()
    assert (other / "plans.jsonl").read_text() == (folder / "plans.jsonl").read_text()
    first = sorted(p.relative_to(folder) for p in (folder / "audio").rglob("*.flac"))
    assert first == sorted(p.relative_to(other) for p in (other / "audio").rglob("*.flac"))
    sample = first[0]
    assert (folder / sample).read_bytes() == (other / sample).read_bytes()


def test_unknown_cells_and_budgets_are_config_errors(tmp_path):
    from memgym.core.errors import ConfigError

    with pytest.raises(ConfigError, match="not VoxMem cells"):
        VoxMemBuilder(VoxMemConfig(cells=("semantics/XYZ",), out=str(tmp_path)))
    assert VoxMemBuilder(VoxMemConfig(cells=("semantics/IE",), out=str(tmp_path))).cells == [("semantics", "IE")]
    with pytest.raises(ConfigError, match="not a token count"):
        VoxMemBuilder(VoxMemConfig(budgets=("lots",), out=str(tmp_path)))


def test_bad_dataset_folders_are_one_error_line(small_build, tmp_path, capsys):
    """A folder missing audio files and a truncated manifest line: one ``memgym: error:`` line each, exit 2."""
    import shutil

    from memgym.cli import main

    _, folder, _ = small_build
    lines = (folder / "manifest.jsonl").read_text().splitlines(keepends=True)
    no_audio = tmp_path / "no_audio"
    no_audio.mkdir()
    shutil.copy(folder / "manifest.jsonl", no_audio / "manifest.jsonl")
    truncated = tmp_path / "truncated"
    shutil.copytree(folder, truncated)
    (truncated / "manifest.jsonl").write_text(lines[0] + lines[1][: len(lines[1]) // 2])
    for bad, expected in [(no_audio, f"dataset {no_audio}: "), (truncated, f"{truncated / 'manifest.jsonl'}:2: ")]:
        args = ["eval", "voxmem", f"dataset={bad}", "memories=[oracle_tags]", "models=[structured]"]
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"memgym: error: {expected}"), err
