"""``memgym view``: which benchmark and kind a path holds, and one clear error for anything else."""

from __future__ import annotations

import json
import shutil

import pytest

from memgym.cli import main
from memgym.core.errors import MemgymError
from memgym.viewer.detect import Target, detect
from memgym.viewer.sites import open_site


def test_dialogmem_dataset_and_run_folders(dialogmem_dataset, dialogmem_run):
    assert (detect(dialogmem_dataset).benchmark, detect(dialogmem_dataset).kind) == ("dialogmem", "dataset")
    for path in (dialogmem_run, dialogmem_run / "oracle", dialogmem_run / "oracle" / "results.jsonl"):
        target = detect(path)
        assert (target.benchmark, target.kind, target.path) == ("dialogmem", "run", dialogmem_run)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda p: p / "missing", "does not exist", id="missing"),
        pytest.param(lambda p: p, "nothing to view", id="empty-folder"),
        pytest.param(lambda p: (p / "notes.txt").write_text("hello\n") and p / "notes.txt", "first line", id="text"),
        pytest.param(
            lambda p: (
                (p / "x.jsonl").write_text(json.dumps({"schema": 1, "kind": "task_item", "data": {}}) + "\n")
                and p / "x.jsonl"
            ),
            "first line",
            id="other-records",
        ),
        pytest.param(
            lambda p: (p / "manifest.json").write_text(json.dumps({"memgym_results": 1, "job": "amemops_train"})) and p,
            "job 'amemops_train'",
            id="other-run",
        ),
    ],
)
def test_bad_paths_are_one_line_errors(tmp_path, capsys, make, message):
    path = make(tmp_path)
    with pytest.raises(MemgymError, match=message):
        detect(path)
    assert main(["view", str(path), "--out", str(tmp_path / "page")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error:") and message in err[0]
    assert not (tmp_path / "page").exists()


def test_a_run_whose_dataset_moved_needs_dataset(dialogmem_dataset, dialogmem_run, tmp_path, monkeypatch):
    run = tmp_path / "run"
    shutil.copytree(dialogmem_run, run)
    for config in run.glob("*/config.yaml"):
        config.write_text(config.read_text().replace(str(dialogmem_dataset), "gone/episodes.jsonl"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MemgymError, match="pass --dataset"):
        open_site(run)
    site = open_site(run, dataset=dialogmem_dataset)
    assert site.index()["episodes"][0]["id"] == "dialogmem-000-0"


def test_voxmem_dataset_and_run_folders(vox_dataset, voxmem_run):
    for path in (vox_dataset, vox_dataset / "manifest.jsonl"):
        assert detect(path) == Target("voxmem", "dataset", vox_dataset)
    assert detect(voxmem_run) == Target("voxmem", "run", voxmem_run)


def test_amemops_set_and_run_folders(amemops_set, amemops_run):
    for path in (amemops_set, amemops_set / "manifest.jsonl"):
        assert detect(path) == Target("amemops", "dataset", amemops_set)
    assert detect(amemops_run) == Target("amemops", "run", amemops_run)


def test_dataset_is_only_for_runs(dialogmem_dataset, amemops_run):
    with pytest.raises(MemgymError, match="not a run"):
        open_site(dialogmem_dataset, dataset=dialogmem_dataset)
    with pytest.raises(MemgymError, match="no stream set"):
        open_site(amemops_run, dataset=dialogmem_dataset)
