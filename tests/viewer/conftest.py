"""Viewer fixtures: small datasets and runs of each benchmark, a served page, headless Chromium.

Chromium and its driver come from Debian (``scripts/system_deps.sh``); the browser is started
once per session. Browser tests are skipped, with the reason, only where ``chromium`` or
``chromedriver`` is not installed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from small_houses import SMALL_HOUSES

from memgym.core.benchmark import JobArgs

DIALOGMEM_SMALL = ("scenes=1", *SMALL_HOUSES, "traversal.max_goals=2")


@pytest.fixture(scope="session")
def dialogmem_dataset(tmp_path_factory) -> Path:
    """A one-episode DialogMem dataset (tiny camera)."""
    from memgym.pipelines.dialogmem.generation import generate

    out = tmp_path_factory.mktemp("view_dialogmem") / "episodes.jsonl"
    return generate(JobArgs(overrides=DIALOGMEM_SMALL, out=out, progress=False))


@pytest.fixture(scope="session")
def dialogmem_run(dialogmem_dataset, tmp_path_factory) -> Path:
    """An eval run of that dataset with the dialogue, oracle and 3dmem+controlled memories (structured
    reasoner), saving what each memory held."""
    from memgym.pipelines.dialogmem.evaluation import evaluate

    runs = tmp_path_factory.mktemp("view_dialogmem_runs")
    overrides = (
        f"dataset={dialogmem_dataset}",
        "camera.width=32",
        "camera.height=24",
        "memories=[dialogue,oracle,3dmem+controlled]",
    )
    overrides += ("name=small", "save_memory=true")
    return evaluate(JobArgs(overrides=overrides, runs_dir=runs, progress=False))


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium through Selenium and Debian's chromedriver (autoplay allowed), one per session."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.skip("chromium and chromedriver are not installed (scripts/system_deps.sh installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--mute-audio",
        "--autoplay-policy=no-user-gesture-required",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def voxmem_run(vox_dataset, truth_asr, tmp_path_factory) -> Path:
    """An eval run of the tiny VoxMem dataset: the structured model with the oracle-tags and transcript memories."""
    import memgym.pipelines.voxmem.evaluation as voxmem_eval

    runs = tmp_path_factory.mktemp("view_voxmem_runs")
    overrides = (f"dataset={vox_dataset}", "name=small", "models=[structured]", "memories=[oracle_tags,transcript]")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(voxmem_eval, "build_asr", lambda config, device="cpu": truth_asr)
        return voxmem_eval.evaluate(JobArgs(overrides=overrides, runs_dir=runs, progress=False))


AMEMOPS_STREAM = (
    "frames=256",
    "n_initial=2",
    "n_update=2",
    "n_interference=0",
    "n_absent=1",
    "distractors=[1]",
    "offset_seconds=[2,4]",
)


@pytest.fixture(scope="session")
def amemops_set(tmp_path_factory) -> Path:
    """A stream set of two short synthetic-sound streams (with features)."""
    from memgym.pipelines.amemops import AMemOpsBenchmark

    out = tmp_path_factory.mktemp("view_amemops") / "set"
    overrides = ("count=2", *(f"stream.{o}" for o in AMEMOPS_STREAM))
    return AMemOpsBenchmark().generate(JobArgs(overrides=overrides, out=out, progress=False))


@pytest.fixture(scope="session")
def amemops_run(tmp_path_factory) -> Path:
    """A tiny GDN2 trained for 2 steps on audio streams, evaluated on two held-out streams."""
    from memgym.pipelines.amemops_models import eval_job, train_job

    runs = tmp_path_factory.mktemp("view_amemops_runs")
    stream = tuple(f"data.stream.{o}" for o in AMEMOPS_STREAM)
    tiny = ("arch.width=16", "arch.heads=1", "arch.head_dim=8", "arch.mlp_hidden=16", "arch.layers=1")
    train = ("model=gdn2", "steps=2", "batch_size=2", "warmup_steps=1", "checkpoint_steps=[2]", "data.pool=2")
    train_job(JobArgs(overrides=(*train, *tiny, *stream), runs_dir=runs, progress=False))
    evaluation = ("models=[gdn2]", "seeds=[0]", "checkpoints=[2]", "streams=2", "name=small", "data.stream.split=eval")
    return eval_job(JobArgs(overrides=(*evaluation, *stream), runs_dir=runs, progress=False))
