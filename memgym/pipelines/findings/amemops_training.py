"""AMemOps findings that depend on how each evaluated model was trained (Fig. 2a, 2b).

Eval rows name a model and seed but not its training; these measures read it from the eval run
itself: its ``config.yaml`` (``models``, ``seeds``, ``checkpoints``, ``train_dir``) points at the
train folders (``<runs>/amemops_train/<model>-seed<seed>/`` next to the eval folder's
``<runs>/amemops_eval/``), whose ``config.yaml`` holds the training instrument set and
``arch.conv_kernel``. Pitch differences are read from the eval folder's
:data:`~memgym.pipelines.amemops.reports.PITCH_DIFFERENCES` (written by
``breakdowns=[pitch_difference]``).

* :func:`am_familiarity`: the training-familiarity interaction ``I`` of GDN2 against RoPE
  attention on post-update queries (:func:`~memgym.tasks.amemops.breakdowns.familiarity_interaction`).
* :func:`am_conv_pitch`: GDN2 with its four-frame convolution minus GDN2 without it
  (``arch.conv_kernel=0``), trained on the same data, on queries whose recording is at least
  :data:`LARGE_PITCH` semitones from that of the answer-carrying event.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.core.config import load_config
from memgym.core.errors import MemgymError
from memgym.pipelines.findings import measures as m
from memgym.pipelines.findings.claim import Measured, Outcome
from memgym.pipelines.findings.verdicts import Effect

LARGE_PITCH = 12
"""Semitones (an octave) from which a pitch difference counts as large (the 12-23 and 24+ bins)."""
FAMILIARITY = ("gdn2", "attention_rope")
TRAIN_FAMILIARITY = (
    "train gdn2 and attention_rope on instrument sets 1 and 2 (name=<core>@set<k>-seed<s>), then "
    "memgym eval amemops models=[gdn2@set1,attention_rope@set1,gdn2@set2,attention_rope@set2] "
    "eval_sets=[1,2] familiarity=[gdn2,attention_rope] (docs/amemops_models.md)"
)
TRAIN_CONV = (
    "train gdn2 with and without arch.conv_kernel=0 on an instrument library, then memgym eval amemops "
    "models=[gdn2@A,gdn2@B] breakdowns=[pitch_difference] (docs/amemops_models.md)"
)


@functools.lru_cache(maxsize=64)
def _eval_run(run: str) -> tuple[Any, Path, dict[tuple[str, Any], Any]] | None:
    """``(eval config, runs dir, {(model, seed): train config})`` of an eval folder, or None
    when its config or a train folder it names cannot be read (e.g. copied without its runs)."""
    from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig
    from memgym.pipelines.amemops.train import checkpoint_jobs

    folder = Path(run)
    try:
        config = load_config(AMemOpsEvalConfig, path=folder / "config.yaml")
        runs_dir = folder.parent.parent
        trained = {
            (model, seed): load_config(AMemOpsTrainConfig, path=path.parent / "config.yaml")
            for model, seed, _, path in checkpoint_jobs(config, runs_dir)
        }
    except (MemgymError, OSError):
        return None
    return config, runs_dir, trained


def _by_run(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(str(row["run"]), []).append(row)
    return out


def am_familiarity(final: Sequence[dict[str, Any]]) -> Outcome:
    """Training familiarity (Fig. 2b): ``I = A(seen) - A(unseen)`` of GDN2 minus RoPE attention
    on post-update queries of ``final`` (each model's final-checkpoint rows), from the eval run
    with the most streams (then queries: seeds) that holds both cores trained on two or more sets and evaluated on them."""
    from memgym.pipelines.amemops.reports import familiar_rows
    from memgym.tasks.amemops.breakdowns import familiarity_interaction

    best: tuple[tuple[int, int], str, dict[str, Any]] | None = None
    for run, rows in _by_run(r for r in final if r.get("eval_set") is not None).items():
        found = _eval_run(run)
        if found is None:
            continue
        config, runs_dir, _ = found
        labelled = familiar_rows(rows, config, runs_dir)
        try:
            result = familiarity_interaction(
                labelled, *FAMILIARITY, rng=m.labelled_rng("am|familiarity"), n_resamples=m.N_RESAMPLES
            )
        except ValueError:  # not both cores, or a training set without seen or unseen queries
            continue
        size = (len({r["stream_key"] for r in labelled if r["query_type"] == "post_update"}), len(labelled))
        if best is None or size > best[0]:
            best = (size, run, result)
    if best is None:
        return f"needs {FAMILIARITY[0]} and {FAMILIARITY[1]} trained on two instrument sets: {TRAIN_FAMILIARITY}"
    (n, _), run, result = best
    interval = result["interaction"]
    text = (
        f"(gdn2 - attention_rope) on seen minus on unseen instruments, post-update "
        f"(seen {result['seen'].estimate:+.1f}, unseen {result['unseen'].estimate:+.1f}; "
        f"training sets, streams and seeds resampled)"
    )
    return Measured(Effect(interval.estimate, interval.low, interval.high, n), text, (run,))


def _pitch_labelled(run: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``rows`` with ``pitch_difference`` from the run's sidecar (None without one)."""
    from memgym.pipelines.amemops.reports import PITCH_DIFFERENCES

    path = Path(run) / PITCH_DIFFERENCES
    if not path.is_file():
        return None
    values = json.loads(path.read_text(encoding="utf-8"))
    return [{**r, "pitch_difference": values.get(f"{r['stream']}|{r['query']}")} for r in rows if "query" in r]


def conv_pair(trained: dict[tuple[str, Any], Any], models: set[str]) -> tuple[str, str] | None:
    """The first ``(with convolution, without)`` pair of GDN2 models of ``models`` trained on the
    same data (everything but ``arch.conv_kernel`` and the run name equal, seeds aside)."""
    from memgym.pipelines.amemops.configs import model_core

    def setting(config: Any) -> str:
        plain = {k: v for k, v in vars(config).items() if k not in ("arch", "name", "seed")}
        return repr(plain) + repr({k: v for k, v in vars(config.arch).items() if k != "conv_kernel"})

    kernels: dict[str, tuple[int, str]] = {}
    for (model, _), config in sorted(trained.items(), key=lambda kv: str(kv[0])):
        if model in models and model_core(model) == "gdn2":
            kernels.setdefault(model, (config.arch.conv_kernel, setting(config)))
    for conv, (k, data) in sorted(kernels.items()):
        for plain, (k0, data0) in sorted(kernels.items()):
            if k > 0 and k0 == 0 and data == data0:
                return conv, plain
    return None


def am_conv_pitch(final: Sequence[dict[str, Any]]) -> Outcome:
    """Convolution and pitch (Fig. 2a): GDN2 minus GDN2 without convolution on queries of
    ``final`` (final-checkpoint rows) at least :data:`LARGE_PITCH` semitones from the
    answer-carrying recording (streams paired, seeds resampled per model), from the eval run with
    the most such streams (then queries)."""
    from memgym.tasks.amemops.tables import averaged_contrast

    best: tuple[tuple[int, int], str, str, str, Any] | None = None
    for run, rows in _by_run(final).items():
        labelled = _pitch_labelled(run, rows)
        found = _eval_run(run) if labelled is not None else None
        pair = conv_pair(found[2], {r["model"] for r in rows}) if found is not None else None
        if labelled is None or pair is None:
            continue
        large = [
            {**r, "query_type": "large_pitch"}
            for r in labelled
            if r["model"] in pair and r["pitch_difference"] is not None and r["pitch_difference"] >= LARGE_PITCH
        ]
        interval = averaged_contrast(
            large, pair[:1], pair[1:], "large_pitch", rng=m.labelled_rng("am|conv"), n_resamples=m.N_RESAMPLES
        )
        size = (len({r["stream"] for r in large}), len(large))
        if interval is not None and (best is None or size > best[0]):
            best = (size, run, *pair, interval)
    if best is None:
        return f"needs gdn2 with and without its convolution evaluated by pitch difference: {TRAIN_CONV}"
    (n, _), run, conv, plain, interval = best
    text = f"{conv} - {plain} (no convolution) on queries >= {LARGE_PITCH} semitones from the answer's recording"
    return Measured(Effect(interval.estimate, interval.low, interval.high, n), text, (run,))
