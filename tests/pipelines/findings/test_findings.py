"""``memgym findings`` on constructed run folders: each verdict comes out of real files, the
report files are written, and bad paths give one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memgym.cli import main
from memgym.pipelines.findings.report import finding_rows
from memgym.pipelines.findings.runs import find_runs


def write_run(folder: Path, job: str, rows: list[dict], config: dict | None = None) -> Path:
    """A run folder as :class:`~memgym.core.results.RunStore` writes one."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"memgym_results": 1, "job": job, "config_hash": "x"}))
    (folder / "config.yaml").write_text("".join(f"{k}: {v}\n" for k, v in (config or {}).items()))
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def dialogmem_rows(rng: np.random.Generator, qa: float, nav: float, n: int = 60) -> list[dict]:
    """``n`` QA and ``n`` navigation items scored with success probabilities ``qa`` / ``nav``."""
    rows = []
    for i in range(n):
        common = {"episode_id": "e0", "content_type": "social", "verbalised": i % 2 == 0, "updated": i % 3 == 0}
        rows.append({"key": f"e0|qa{i}", "task": "qa", "token_f1": float(rng.random() < qa), **common})
        rows.append(
            {"key": f"e0|nav{i}", "task": "navigation", "geodesic_success": float(rng.random() < nav), **common}
        )
    return rows


@pytest.fixture(scope="module")
def dialogmem_runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs") / "eval-dialogmem" / "study"
    rng = np.random.default_rng(0)
    base = dialogmem_rows(rng, qa=0.3, nav=0.4)
    write_run(root / "3dmem", "eval-dialogmem", base, {"memory": "3dmem"})
    # appended dialogue: QA clearly up; navigation identical (a flat effect)
    lifted = [{**r, "token_f1": 1.0} if r["task"] == "qa" else r for r in base]
    write_run(root / "3dmem+dialogue", "eval-dialogmem", lifted, {"memory": "3dmem+dialogue"})
    # a probe clearly below its reference: reversed
    worse = [{**r, "geodesic_success": 0.0} if r["task"] == "navigation" else r for r in base]
    write_run(root / "sweep" / "3dmem+gt_metadata", "eval-dialogmem", worse, {"memory": "3dmem+gt_metadata"})
    # too few items to decide
    few = dialogmem_rows(rng, qa=0.3, nav=0.9, n=8)
    write_run(root / "frames", "eval-dialogmem", few, {"memory": "frames"})
    write_run(
        root / "frames+dialogue", "eval-dialogmem", dialogmem_rows(rng, 0.9, 0.9, 8), {"memory": "frames+dialogue"}
    )
    return root


def by_id(rows: list[dict]) -> dict[str, dict]:
    return {r["id"]: r for r in rows}


def test_each_verdict_from_constructed_runs(dialogmem_runs: Path) -> None:
    rows = by_id(finding_rows(find_runs([dialogmem_runs])))
    assert rows["dm-append-qa-3dmem"]["verdict"] == "reproduced"
    assert rows["dm-append-qa-3dmem"]["n"] == 60
    # identical scores: flat, but every instruction names its category and the runs used the
    # structured reasoner, so the verdict follows from its rules
    assert rows["dm-append-nav-3dmem"]["verdict"] == "by construction"
    assert "reads reproduced" in rows["dm-append-nav-3dmem"]["detail"]
    assert "names its target's category" in rows["dm-append-nav-3dmem"]["by_construction"]
    assert rows["dm-append-nav-3dmem"]["effect_pp"] == 0.0
    assert rows["dm-append-qa-3dmem"]["by_construction"] == ""
    assert rows["dm-probe-metadata"]["verdict"] == "reversed"
    assert rows["dm-append-qa-frames"]["verdict"] == "undecided"
    assert "below the minimum" in rows["dm-append-qa-frames"]["detail"]
    assert rows["dm-linker-vlm-qa"]["verdict"] == "not measured"
    assert "sweep=link_quality" in rows["dm-linker-vlm-qa"]["detail"]


@pytest.mark.parametrize(
    ("config", "names_category", "verdict"),
    [
        ({}, True, "by construction"),  # structured reasoner (the default), category named everywhere
        ({}, False, "reproduced"),  # dialogue-only instructions: appending may move navigation
        ({"reasoner": "{backend: hf}"}, True, "reproduced"),  # a model reads the transcript its own way
    ],
)
def test_by_construction_needs_the_structured_reasoner_and_category_instructions(
    tmp_path: Path, config: dict, names_category: bool, verdict: str
) -> None:
    rows = [{**r, "names_category": names_category} for r in dialogmem_rows(np.random.default_rng(2), 0.5, 0.5)]
    for memory in ("3dmem", "3dmem+dialogue"):
        write_run(tmp_path / "a" / memory, "eval-dialogmem", rows, {"memory": memory, **config})
    found = by_id(finding_rows(find_runs([tmp_path])))["dm-append-nav-3dmem"]
    assert found["verdict"] == verdict
    assert bool(found["by_construction"]) is (verdict == "by construction")


def test_not_reproduced_when_the_effect_is_flat(tmp_path: Path) -> None:
    rows = dialogmem_rows(np.random.default_rng(1), qa=0.5, nav=0.5, n=200)
    write_run(tmp_path / "a" / "3dmem", "eval-dialogmem", rows, {"memory": "3dmem"})
    write_run(tmp_path / "a" / "3dmem+dialogue", "eval-dialogmem", rows, {"memory": "3dmem+dialogue"})
    found = by_id(finding_rows(find_runs([tmp_path])))
    assert found["dm-append-qa-3dmem"]["verdict"] == "not reproduced"  # claimed a lift, measured 0 +- 0


def test_voxmem_and_amemops_rows_are_measured(tmp_path: Path) -> None:
    vox = []
    for i in range(100):
        for budget, drop in ((8000, 0.0), (64000, 1.0)):
            evidence = ("semantics", "speaker", "paralinguistic", "sound")[i % 4]
            correct = 1.0 if evidence == "semantics" else float(i % 8 < 4) * (1.0 - drop * (i % 2))
            vox.append(
                {
                    "key": f"i{i}|{budget}",
                    "memory": "cascaded",
                    "model": "structured",
                    "item_id": f"i{i}",
                    "budget": budget,
                    "evidence": evidence,
                    "operation": ("MSR", "TET")[i % 2 // 1 % 2],
                    "correct": correct,
                    "status": "ok",
                }
            )
    write_run(tmp_path / "vox", "eval-voxmem", vox)
    queries = lambda good: [  # noqa: E731
        {"query_type": qt, "correct": int(good or qt == "initial"), "attribute": "gain"}
        for qt in ("initial", "post_update")
    ]
    am = [
        {
            "key": f"{m}|{s}|0|{k}",
            "model": m,
            "seed": s,
            "checkpoint": 100,
            "stream": f"s{k}",
            "queries": queries(m == "gdn2"),
        }
        for m in ("gdn2", "no_erase")
        for s in (0, 1, 2)
        for k in range(25)
    ]
    write_run(tmp_path / "am", "amemops_eval", am)
    found = by_id(finding_rows(find_runs([tmp_path / "vox", tmp_path / "am"])))
    assert found["vx-semantics-over-speaker"]["verdict"] == "reproduced"
    assert found["vx-length-decline"]["verdict"] == "reproduced"
    assert found["am-gdn2-over-no-erase"]["verdict"] == "reproduced"
    assert found["am-gdn2-over-no-erase"]["effect_pp"] == pytest.approx(100.0)
    assert found["am-update-specific"]["verdict"] == "reproduced"
    assert found["am-kda-over-no-erase"]["verdict"] == "not measured"
    two_seeds = [r for r in am if r["seed"] != 2]  # as clear, but one training seed short
    write_run(tmp_path / "am2", "amemops_eval", two_seeds)
    short = by_id(finding_rows(find_runs([tmp_path / "am2"])))["am-gdn2-over-no-erase"]
    assert short["verdict"] == "undecided" and short["detail"] == "2 training seed(s), below the minimum 3"


def test_cli_writes_the_report_files(dialogmem_runs: Path, tmp_path: Path, capsys) -> None:
    assert main(["findings", str(dialogmem_runs), "--out", str(tmp_path / "f")]) == 0
    for name in ("findings.md", "findings.csv", "findings.json", "findings.png"):
        assert (tmp_path / "f" / name).is_file()
    table = json.loads((tmp_path / "f" / "findings.json").read_text())["findings"]
    assert {r["verdict"] for r in table} >= {"reproduced", "reversed", "undecided", "not measured"}
    assert "memgym findings" in capsys.readouterr().out


@pytest.mark.parametrize("make", ["missing", "file", "empty"])
def test_bad_paths_are_one_error_line(tmp_path: Path, make: str, capsys) -> None:
    path = tmp_path / "x"
    if make == "file":
        path.write_text("{}")
    elif make == "empty":
        path.mkdir()
    assert main(["findings", str(path), "--out", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memgym: error:") and str(path) in err[0]


def test_the_quickstart_report_ends_with_the_findings_of_its_runs(dialogmem_runs: Path, tmp_path: Path) -> None:
    from memgym.pipelines.quickstart import findings_section

    section = findings_section(dialogmem_runs)
    assert section.title == "findings" and "at quickstart scale" in section.markdown
    assert "Appending the dialogue lifts 3D-Mem's QA" in section.markdown
    assert section.plots == ("findings/findings.png",)
    assert (dialogmem_runs / "findings" / "findings.json").is_file()
    empty = findings_section(tmp_path)  # no run yet: the report says why, the quickstart goes on
    assert empty.markdown.startswith("not written:") and "holds no evaluation run" in empty.markdown


def test_amemops_claims_take_one_preset_per_comparison(tmp_path: Path) -> None:
    """Preset-trained models (``gdn2@cpu-audio``, as ``preset=cpu-audio train=true`` names them)
    are measured; two presets in one folder are never merged into one comparison."""

    def rows(model: str, good: bool, streams: int) -> list[dict]:
        queries = [
            {"query_type": qt, "correct": int(good or qt == "initial"), "attribute": "gain"}
            for qt in ("initial", "post_update")
        ]
        return [
            {
                "key": f"{model}|{seed}|{k}",
                "model": model,
                "seed": seed,
                "checkpoint": 40,
                "stream": f"s{k}",
                "queries": queries,
            }
            for seed in (0, 1, 2)
            for k in range(streams)
        ]

    am = rows("gdn2@cpu-audio", True, 25) + rows("no_erase@cpu-audio", False, 25)
    am += rows("gdn2@cpu-small", False, 21) + rows("no_erase@cpu-small", False, 21)  # flat: would dilute a merge
    am += rows("kda@cpu-small", False, 21) + rows("gdn@cpu-tiny", True, 25)  # gdn: no no_erase@cpu-tiny
    write_run(tmp_path / "am", "amemops_eval", am)
    found = by_id(finding_rows(find_runs([tmp_path / "am"])))
    gdn2 = found["am-gdn2-over-no-erase"]
    assert gdn2["verdict"] == "reproduced" and gdn2["effect_pp"] == pytest.approx(100.0) and gdn2["n"] == 25
    assert "gdn2@cpu-audio, no_erase@cpu-audio" in gdn2["ours"] and "not merged with @cpu-small" in gdn2["ours"]
    assert found["am-update-specific"]["verdict"] == "reproduced"
    kda = found["am-kda-over-no-erase"]  # measured against the no_erase of its own preset only
    assert kda["effect_pp"] == pytest.approx(0.0) and "kda@cpu-small, no_erase@cpu-small" in kda["ours"]
    assert found["am-gdn-over-no-erase"]["verdict"] == "not measured"


def test_the_convolution_ablation_pairs_models_trained_alike() -> None:
    """am-conv-large-pitch compares GDN2 with and without convolution only when everything else
    about their training is the same."""
    from memgym.core.config import load_config
    from memgym.pipelines.amemops.configs import AMemOpsTrainConfig
    from memgym.pipelines.findings.amemops_training import conv_pair

    def trained(*keys: str) -> AMemOpsTrainConfig:
        return load_config(AMemOpsTrainConfig, overrides=("model=gdn2", *keys))

    runs = {
        ("gdn2@a", 0): trained("name=gdn2@a-seed0"),
        ("gdn2@b", 0): trained("arch.conv_kernel=0", "name=gdn2@b-seed0"),
        ("gdn2@c", 0): trained("arch.conv_kernel=0", "steps=7"),
        ("gdn2@d", 0): trained("arch.conv_kernel=0", "data.stream.library.instrument_set=2"),
    }
    assert conv_pair(runs, {"gdn2@a", "gdn2@b", "gdn2@c"}) == ("gdn2@a", "gdn2@b")
    assert conv_pair(runs, {"gdn2@a", "gdn2@c", "gdn2@d"}) is None  # trained longer / on another set


def test_the_gap_vs_complexity_claim_compares_matched_cells_against_semantics_ie(tmp_path: Path) -> None:
    """Semantics is always right; audio-native items are right on IE and wrong on MSR/TET: the gap
    widens by 100 points. An audio-native subtype without a semantics twin is left out (it would
    move the estimate), and without semantics IE the claim says which build measures it."""
    rows = []
    cells = [("IE", "context_to_cue"), ("IE", "cue_to_fact"), ("MSR", "counting"), ("TET", "latest")]
    for i in range(160):
        operation, subtype = cells[i % 4]
        evidence = "semantics" if i % 8 < 4 else "speaker"
        rows.append({"operation": operation, "subtype": subtype, "evidence": evidence,
                     "correct": float(evidence == "semantics" or operation == "IE")})  # fmt: skip
    rows += [{"operation": "MSR", "subtype": "matching", "evidence": "sound", "correct": 1.0} for _ in range(40)]
    for i, row in enumerate(rows):
        row.update(key=f"i{i}", memory="cascaded", model="structured", item_id=f"i{i}", budget=8192, status="ok")
    write_run(tmp_path / "vox", "eval-voxmem", rows)
    found = by_id(finding_rows(find_runs([tmp_path / "vox"])))["vx-gap-widens"]
    assert found["verdict"] == "reproduced" and found["effect_pp"] == pytest.approx(100.0)
    assert "4 matched subtypes" in found["ours"] and "lies above 0" in found["detail"]
    without_ie = [r for r in rows if not (r["operation"] == "IE" and r["evidence"] == "semantics")]
    write_run(tmp_path / "no_ie", "eval-voxmem", without_ie)
    missing = by_id(finding_rows(find_runs([tmp_path / "no_ie"])))["vx-gap-widens"]
    assert missing["verdict"] == "not measured" and "semantics/IE" in missing["detail"]


def test_findings_default_beside_the_runs_with_paths_relative_to_it(tmp_path, monkeypatch):
    """'memgym findings runs' writes runs/findings, naming each run relative to that folder, so the
    files mean the same from any working folder."""

    from memgym.core.results import RunStore

    runs = tmp_path / "runs"
    store = RunStore.open(runs, "eval-voxmem", {"v": 1}, name="x")
    for i, budget in enumerate((8192, 16384)):
        store.append(f"k{i}", {"memory": "cascaded", "model": "structured", "item_id": "i0", "budget": budget,
                               "evidence": "semantics", "operation": "TET", "correct": i})  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert main(["findings", "runs/eval-voxmem/x"]) == 0
    data = json.loads((runs / "findings" / "findings.json").read_text())
    assert data["runs"] == ["../eval-voxmem/x"]
    (runs / "findings" / "findings.json").unlink()
    assert main(["findings", "runs"]) == 0
    data = json.loads((runs / "findings" / "findings.json").read_text())
    assert data["runs"] == ["../eval-voxmem/x"]
    assert all(run == "../eval-voxmem/x" for row in data["findings"] for run in row["runs"].split(";") if run)
