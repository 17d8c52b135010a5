"""A dataset of another benchmark (or no dataset) is refused before any run folder is made."""

from __future__ import annotations

import json

import pytest

from memgym.cli import main
from memgym.core.dataset_kinds import require_dataset
from memgym.core.errors import ConfigError


def _records(path, kind):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": 1, "kind": kind, "data": {}}) + "\n")
    return path


@pytest.mark.parametrize(
    "bench, key, given, found",
    [
        ("dialogmem", "dataset", "vox/manifest.jsonl", "a VoxMem dataset (voxmem.episode records)"),
        ("dialogmem", "dataset", "vox", "a VoxMem dataset (voxmem.episode records)"),
        ("voxmem", "dataset", "dm.jsonl", "a DialogMem dataset (dialogmem.episode records)"),
        ("voxmem", "dataset", "streams", "an AMemOps stream set (amemops.stream records)"),
        ("amemops", "stream_set", "vox", "a VoxMem dataset (voxmem.episode records)"),
        ("dialogmem", "dataset", "scene.jsonl", "scene.spec records"),
    ],
)
def test_eval_refuses_a_dataset_of_another_kind_before_making_a_run_folder(tmp_path, capsys, bench, key, given, found):
    _records(tmp_path / "vox" / "manifest.jsonl", "voxmem.episode")
    _records(tmp_path / "streams" / "manifest.jsonl", "amemops.stream")
    _records(tmp_path / "dm.jsonl", "dialogmem.episode")
    _records(tmp_path / "scene.jsonl", "scene.spec")
    runs = tmp_path / "runs"
    assert main(["eval", bench, f"{key}={tmp_path / given}", "--runs-dir", str(runs), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"memgym: error: dataset {tmp_path / given} holds {found}; ")
    assert f"'memgym eval {bench}' expects" in err[0]
    assert not runs.exists()


def test_the_right_kind_and_missing_paths_pass(tmp_path):
    require_dataset(_records(tmp_path / "dm.jsonl", "dialogmem.episode"), "dialogmem")
    require_dataset(_records(tmp_path / "vox" / "manifest.jsonl", "voxmem.episode").parent, "voxmem")
    require_dataset(tmp_path / "missing.jsonl", "dialogmem")  # the job's own check names it
    require_dataset("", "voxmem")
    (tmp_path / "notes.jsonl").write_text('{"a": 1}\n')  # no records at all: the job's own checks say why
    require_dataset(tmp_path / "notes.jsonl", "dialogmem")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text('{"job": "eval-voxmem"}')
    with pytest.raises(ConfigError, match="holds a run folder of job 'eval-voxmem'; 'memgym eval voxmem' expects"):
        require_dataset(tmp_path / "run", "voxmem")
