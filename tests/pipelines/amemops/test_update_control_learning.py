"""Slow: on the update control's streams, updates cost no-erase more than they cost KDA, pooled over
training seeds 0-2, with every process on a second CPU arithmetic path.

``preset=cpu-update-control`` (docs/amemops_models.md, "An update-isolating control") trains for
600 steps. Here KDA and no-erase train on its streams with a short schedule (``steps=250``,
``UPDATE_CONTROL_STEPS`` of tests/support/amemops_learning.py, whose cosine ends at step 250) for
seeds 0, 1 and 2, one after the other in one ``memgym eval amemops ... train=true`` process started
with ``ATEN_CPU_CAPABILITY=default`` (ATen's portable kernels instead of the AVX-512 ones the
development machine picks; read at process start, hence the subprocess), which then scores them at
step 250 on the preset's 192 held-out streams (529 initial and 463 post-update queries
a seed). Asserted, as means over the seeds:

* the update-specific interaction (KDA minus no-erase on post-update queries, minus the same on
  initial queries) is at least :data:`INTERACTION_PP`;
* KDA's post-update advantage over no-erase is at least :data:`POST_UPDATE_PP`: the second-path
  check of the post-update ordering that ``test_learning_paths.py`` (``cpu-tiny``, KDA and no-erase
  under ``MKL_CBWR=COMPATIBLE``) made before this test replaced it.

Both thresholds are about half the smallest seed mean measured on the development machine (this
path and the default one; docs/amemops_models.md, "A slow test of the update control").
"""

from __future__ import annotations

import pytest

from tests.support.amemops_learning import SEEDS, pooled_margin, update_control_scores

PATH = {"ATEN_CPU_CAPABILITY": "default"}
INTERACTION_PP = 6.0
POST_UPDATE_PP = 9.0


@pytest.mark.slow
def test_updates_cost_no_erase_more_than_kda_pooled_over_seeds_under_aten_default(tmp_path):
    scores = update_control_scores(tmp_path, env=PATH)
    assert all(len(scores[(m, s)]["post_update"]) >= 400 for m in ("kda", "no_erase") for s in SEEDS)
    post, post_per_seed = pooled_margin(scores, "kda", "post_update")
    initial, initial_per_seed = pooled_margin(scores, "kda", "initial")
    per_seed = [f"{p:+.1f} / {i:+.1f}" for p, i in zip(post_per_seed, initial_per_seed)]
    assert post >= POST_UPDATE_PP, f"kda - no_erase post-update / initial per seed {per_seed} pp under {PATH}"
    assert post - initial >= INTERACTION_PP, f"kda - no_erase post-update / initial per seed {per_seed} pp"
