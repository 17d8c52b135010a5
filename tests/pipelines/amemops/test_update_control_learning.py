"""Slow: on the update control's streams, updates cost no-erase more than they cost KDA, pooled over
training seeds 0-2, with every process on a second CPU arithmetic path.

``preset=cpu-update-control`` (docs/amemops_models.md, "An update-isolating control") trains for
600 steps. Here KDA and no-erase train on its streams with a short schedule (``steps=250``,
``UPDATE_CONTROL_STEPS`` of tests/support/amemops_learning.py, whose cosine ends at step 250) for
seeds 0, 1 and 2, one after the other in one ``memgym eval amemops ... train=true`` process started
on a second arithmetic path, :func:`second_path` (ATen's AVX2 kernels on a machine whose own are
AVX-512, ATen's portable ones elsewhere; read at process start, hence the subprocess), which then
scores them at step 250 on the preset's 192 held-out streams (529 initial and 463 post-update
queries a seed). Asserted, as means over the seeds:

* the update-specific interaction (KDA minus no-erase on post-update queries, minus the same on
  initial queries) is at least :data:`INTERACTION_PP`;
* KDA's post-update advantage over no-erase is at least :data:`POST_UPDATE_PP`: the second-path
  check of the post-update ordering that ``test_learning_paths.py`` (``cpu-tiny``, KDA and no-erase
  under ``MKL_CBWR=COMPATIBLE``) made before this test replaced it.

The same KDA checkpoints then answer the state-intervention check (paper Fig. 4b,c; until session 22
``test_interventions_learning.py``, which trained GDN2 for one seed): on 24 of the held-out streams
(this process's own path), editing out a source's key subspace costs that source's queries clearly
more than norm-matched random edits do (:data:`TARGET_OVER_RANDOM_PP`, mean over seeds), and costs
the other sources' queries less than the random edits do.

Both thresholds are about half the smallest seed mean measured on the development machine (an
AVX-512 AMD EPYC: its default path, ``ATEN_CPU_CAPABILITY=avx2``, ``ATEN_CPU_CAPABILITY=default``
and ``MKL_CBWR=COMPATIBLE``; docs/amemops_models.md, "A slow test of the update control"). The AVX2
path costs what the default one does there (287 against 285 CPU s); the portable one 40 % more.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from memgym.core.benchmark import JobArgs
from memgym.pipelines.amemops.interventions import intervention_job
from memgym.pipelines.amemops.presets import UPDATE_CONTROL_STREAM
from memgym.tasks.amemops.interventions import loss_table
from tests.support.amemops_learning import SEEDS, UPDATE_CONTROL_STEPS, pooled_margin, update_control_scores

INTERACTION_PP = 6.0
POST_UPDATE_PP = 9.0
TARGET_OVER_RANDOM_PP = 15.0
MODEL = "kda@cpu-update-control"


def second_path() -> dict[str, str]:
    """The environment that starts a process on ATen kernels other than this one's: AVX2 where this
    process runs AVX-512 ones, else the portable ones (``ATEN_CPU_CAPABILITY=default``; on a machine
    whose kernels are already the portable ones, e.g. without AVX2, that is the same path)."""
    own = torch.backends.cpu.get_cpu_capability()
    return {"ATEN_CPU_CAPABILITY": "avx2" if own == "AVX512" else "default"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``(runs folder, scores)`` of :func:`update_control_scores` on :func:`second_path`."""
    runs = tmp_path_factory.mktemp("update-control")
    return runs, update_control_scores(runs, env=second_path())


@pytest.mark.slow
def test_updates_cost_no_erase_more_than_kda_pooled_over_seeds_on_a_second_path(trained):
    path = second_path()
    _, scores = trained
    assert all(len(scores[(m, s)]["post_update"]) >= 400 for m in ("kda", "no_erase") for s in SEEDS)
    post, post_per_seed = pooled_margin(scores, "kda", "post_update")
    initial, initial_per_seed = pooled_margin(scores, "kda", "initial")
    per_seed = [f"{p:+.1f} / {i:+.1f}" for p, i in zip(post_per_seed, initial_per_seed)]
    assert post >= POST_UPDATE_PP, f"kda - no_erase post-update / initial per seed {per_seed} pp under {path}"
    assert post - initial >= INTERACTION_PP, f"kda - no_erase post-update / initial per seed {per_seed} pp"


@pytest.mark.slow
def test_kda_source_key_edits_are_selective_pooled_over_seeds(trained):
    runs, _ = trained
    overrides = (
        "intervention=true",
        f"models=[{MODEL}]",
        f"seeds=[{','.join(map(str, SEEDS))}]",
        f"checkpoints=[{UPDATE_CONTROL_STEPS}]",
        "streams=24",
        "threads=1",
        *UPDATE_CONTROL_STREAM,
    )
    folder = intervention_job(JobArgs(overrides=overrides, runs_dir=runs, progress=False))
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    target_over_random, other_over_random = [], []
    for seed in SEEDS:
        table = loss_table([r for r in rows if r["seed"] == seed], rng=np.random.default_rng(0), n_resamples=200)
        loss = {(edit, on): table[(MODEL, UPDATE_CONTROL_STEPS, edit, on)].loss.estimate
                for edit in ("target", "random") for on in ("target", "other")}  # fmt: skip
        target_over_random.append(loss[("target", "target")] - loss[("random", "target")])
        other_over_random.append(loss[("target", "other")] - loss[("random", "other")])
    per_seed = [f"{t:+.1f} / {o:+.1f}" for t, o in zip(target_over_random, other_over_random)]
    assert np.mean(target_over_random) >= TARGET_OVER_RANDOM_PP, f"target - random edit loss, target / other {per_seed}"
    assert np.mean(other_over_random) < 0, f"target - random edit loss, target / other sources {per_seed}"
