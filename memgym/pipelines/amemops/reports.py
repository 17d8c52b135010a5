"""The tables and reports of ``memgym eval amemops`` from its stored rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.config import load_config
from memgym.core.results import RunStore
from memgym.datasets.amemops.query_conditions import AudioMatches, intervening_writes, pitch_differences
from memgym.pipelines.amemops.configs import EXCLUSION_TEXT, AMemOpsEvalConfig, AMemOpsTrainConfig, model_core
from memgym.pipelines.amemops.streams import StreamSetTensors, StreamTensors
from memgym.pipelines.amemops.train import checkpoint_jobs
from memgym.tasks.amemops.breakdowns import (
    contrast_report,
    familiarity_report,
    pitch_difference_report,
)
from memgym.tasks.amemops.history import is_history
from memgym.tasks.amemops.history_report import write_history_report
from memgym.tasks.amemops.interaction import intervening_markdown, update_interaction_report
from memgym.tasks.amemops.tables import (
    QUERY_TYPES,
    accuracy_table,
    averaged_contrast,
    difference_markdown,
    plot_accuracy,
    seed_table,
    table_markdown,
)


def familiar_rows(rows: list[dict[str, Any]], config: AMemOpsEvalConfig, runs_dir: Path) -> list[dict[str, Any]]:
    """``rows`` with the labels of :func:`~memgym.tasks.amemops.breakdowns.familiarity_interaction`:
    each model's training set read from its run's ``config.yaml`` (library kind and instrument
    set), ``seen`` when the evaluated set is that one, and a stream key unique across sets."""
    trained: dict[tuple[str, Any], tuple[str, int]] = {}
    for model_name, seed, _, path in checkpoint_jobs(config, runs_dir):
        if (model_name, seed) not in trained:
            library = load_config(AMemOpsTrainConfig, path=path.parent / "config.yaml").data.stream.library
            trained[model_name, seed] = (library.kind, library.instrument_set)
    kind = config.data.stream.library.kind
    out = []
    for r in rows:
        train_kind, train_set = trained[r["model"], r["seed"]]
        out.append(
            r
            | {
                "core": model_core(r["model"]),
                "train_set": f"{train_kind}-set{train_set}",
                "seen": train_kind == kind and train_set == r["eval_set"],
                "stream_key": f"set{r['eval_set']}/{r['stream']}",
            }
        )
    return out


def core_familiarity_markdown(
    labelled: list[dict[str, Any]], cores: tuple[str, ...], *, n_resamples: int = 10_000
) -> str:
    """Per core, accuracy when the evaluated instruments were seen in training minus when they were
    not, in pp, on the same streams: on each evaluation set, the model trained on that set against
    the model(s) of the same core trained on another (``labelled``: :func:`familiar_rows`).
    Streams of both sets are pooled (weighted equally) and paired across the two; seeds are
    resampled per side (:func:`~memgym.tasks.amemops.tables.averaged_contrast`). With two training
    sets the reference's difference minus the baseline's is the interaction ``I`` with streams
    weighted equally instead of sets (the same when both sets hold as many streams of the type)."""
    types = ("initial", "post_update", "retained")
    lines = [
        "## Per model: seen minus unseen instruments (pp), 95% CI",
        "",
        "On each evaluation set, the model trained on it minus the same core trained on another set "
        "(streams of every set pooled and paired, seeds resampled per side).",
        "",
        "| core | checkpoint | attribute | " + " | ".join(t.replace("_", "-") for t in types) + " |",
        "| --- | ---: | --- |" + " ---: |" * len(types),
    ]
    rng = np.random.default_rng(2)
    for core in cores:
        for checkpoint in sorted({r["checkpoint"] for r in labelled}, key=str):
            for attribute in ("all", "gain", "pan"):
                sides = [
                    {**r, "model": "seen" if r["seen"] else "unseen", "stream": r["stream_key"]}
                    for r in labelled
                    if r["core"] == core and r["checkpoint"] == checkpoint and attribute in ("all", r["attribute"])
                ]
                cells = [
                    averaged_contrast(sides, ("seen",), ("unseen",), t, rng=rng, n_resamples=n_resamples) for t in types
                ]
                shown = ["-" if c is None else c.format(1) for c in cells]
                lines.append(f"| {core} | {checkpoint} | {attribute} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def write_familiarity(folder: Path, rows: list[dict[str, Any]], config: AMemOpsEvalConfig, runs_dir: Path) -> str:
    """``familiarity.md`` and ``familiarity.png`` (Fig. 2b) of ``config.familiarity``: the
    interaction (:func:`~memgym.tasks.amemops.breakdowns.familiarity_report`), then each core's
    seen-minus-unseen difference (:func:`core_familiarity_markdown`); returns the markdown."""
    labelled = familiar_rows(rows, config, runs_dir)
    reference, baseline = config.familiarity
    text = familiarity_report(labelled, reference, baseline, folder, n_resamples=config.bootstrap_resamples)
    text += "\n" + core_familiarity_markdown(labelled, config.familiarity, n_resamples=config.bootstrap_resamples)
    (folder / "familiarity.md").write_text(text, encoding="utf-8")
    return text


def annotate_conditions(
    rows: list[dict[str, Any]], tensors: StreamTensors | StreamSetTensors, n_streams: int, config: AMemOpsEvalConfig
) -> list[dict[str, Any]]:
    """Per-query conditions the breakdowns and exclusions need, from the (regenerated) streams:
    ``pitch_difference``, ``intervening`` (other sources' events since the queried source's last
    one), ``training_match`` (the query's or an earlier same-source recording
    matches training audio) and ``duplicate_notes`` (its stream holds two recordings of the same
    audio); see :mod:`memgym.datasets.amemops.query_conditions`."""
    streams = {s.episode_id: s for s in (tensors.stream(i) for i in range(n_streams))}
    matches = AudioMatches(tensors.library)
    conditions: dict[str, dict[str, dict[str, Any]]] = {}
    for episode_id in sorted({str(r["stream"]) for r in rows}):
        stream = streams[episode_id]
        per_query: dict[str, dict[str, Any]] = {q.query_id: {} for q in stream.queries()}
        if "pitch_difference" in config.breakdowns:
            for query, value in pitch_differences(stream, tensors.library).items():
                per_query[query]["pitch_difference"] = value
        if "intervening" in config.breakdowns:
            for query, value in intervening_writes(stream).items():
                per_query[query]["intervening"] = value
        if "training_audio" in config.exclude:
            for query, value in matches.training_matches(stream).items():
                per_query[query]["training_match"] = value
        if "duplicate_notes" in config.exclude:
            duplicate = matches.has_duplicate_notes(stream)
            for values in per_query.values():
                values["duplicate_notes"] = duplicate
        # items of a joint query share its query event (named by the first item's id)
        conditions[episode_id] = {
            item.item_id: per_query[item.annotations.get("query_event", item.item_id)] for item in stream.items
        }
    return [r | conditions[str(r["stream"])][r["query"]] for r in rows]


def excluded(row: dict[str, Any], exclude: tuple[str, ...]) -> bool:
    """Whether ``exclude`` drops this annotated query row."""
    return ("training_audio" in exclude and row["training_match"]) or (
        "duplicate_notes" in exclude and row["duplicate_notes"]
    )


def query_rows(stream_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flatten per-stream result rows into per-query rows for the tables."""
    return [{k: r[k] for k in ("model", "seed", "checkpoint", "stream")} | q for r in stream_rows for q in r["queries"]]


def _accuracy_markdown(
    rows: list[dict[str, Any]], config: AMemOpsEvalConfig, types: tuple[str, ...]
) -> tuple[str, list[dict[str, Any]]]:
    """Accuracy by query type and by query type × attribute, and the paired differences against
    the first model; returns the markdown and the by-type table."""
    label = "Query-weighted" if config.weighting == "query" else "Mean per-stream"
    by_type = accuracy_table(rows, weighting=config.weighting, model_order=config.models, query_types=types)
    by_attribute = accuracy_table(
        rows, weighting=config.weighting, by_attribute=True, model_order=config.models, query_types=types
    )
    n_streams = len({r["stream"] for r in rows})
    text = (
        table_markdown(by_type, title=f"{label} accuracy (%) on {n_streams} streams, mean over seeds")
        + "\n"
        + table_markdown(by_attribute, title=f"{label} accuracy (%) by query type and attribute")
    )
    models_present = [m for m in config.models if any(r["model"] == m for r in rows)]
    if len(models_present) >= 2 and config.bootstrap_resamples > 0:
        text += "\n" + difference_markdown(
            rows,
            models_present,
            rng=np.random.default_rng(0),
            query_types=types,
            n_resamples=config.bootstrap_resamples,
        )
    return text, by_type


def _write_exclusions(store: RunStore, rows: list[dict[str, Any]], config: AMemOpsEvalConfig, types) -> str:
    """``table_excluded.md`` and ``accuracy_excluded.png``: the tables on the rows ``exclude`` keeps."""
    kept = [r for r in rows if not excluded(r, config.exclude)]
    first = rows[0]["model"], rows[0]["seed"], rows[0]["checkpoint"]  # counts of one model/seed/checkpoint
    one = [r for r in rows if (r["model"], r["seed"], r["checkpoint"]) == first]
    kept_one = [r for r in one if not excluded(r, config.exclude)]
    updates = sum(r["query_type"] == "post_update" for r in kept_one)
    text = (
        f"# Tables without {' and '.join(EXCLUSION_TEXT[e] for e in config.exclude)}\n\n"
        f"Kept {len(kept_one)} of {len(one)} queries per model, seed and checkpoint ({updates} post-update) "
        f"in {len({r['stream'] for r in kept_one})} of {len({r['stream'] for r in one})} streams.\n\n"
    )
    if not kept:
        store.write_text("table_excluded.md", text + "Nothing is left to tabulate.\n")
        return text
    body, by_type = _accuracy_markdown(kept, config, types)
    store.write_text("table_excluded.md", text + body)
    plot_accuracy(by_type, store.folder / "accuracy_excluded.png", query_types=types)
    return text


PITCH_DIFFERENCES = "pitch_differences.json"
"""Per query of the main tables, its pitch difference (for ``memgym findings``, which reads rows, not streams)."""


def write_pitch_differences(store: RunStore, rows: list[dict[str, Any]]) -> None:
    """Write :data:`PITCH_DIFFERENCES`: ``{"<stream>|<query>": semitones or null}`` of the
    annotated ``rows`` (a query's pitch difference depends on its stream alone, not the model)."""
    values = {f"{r['stream']}|{r['query']}": r["pitch_difference"] for r in rows}
    store.write_text(PITCH_DIFFERENCES, json.dumps(dict(sorted(values.items())), indent=0) + "\n")


def write_tables(store: RunStore, rows: list[dict[str, Any]], config: AMemOpsEvalConfig) -> str:
    """Write ``table.md`` (by query type, and by query type × attribute) and ``accuracy.png``,
    plus the reports of ``breakdowns`` and ``exclude`` (rows annotated by :func:`annotate_conditions`)."""
    types = (*QUERY_TYPES, "no_update") if any(r["query_type"] == "no_update" for r in rows) else QUERY_TYPES
    text, by_type = _accuracy_markdown(rows, config, types)
    if is_history(rows):
        write_history_report(
            store,
            rows,
            model_order=config.models,
            primary_models=config.history_contrasts,
            n_resamples=config.bootstrap_resamples,
        )
        text += "\nMatched histories: update gaps and primary contrasts in `history_contrasts.md`.\n"
    if "pitch_difference" in config.breakdowns:
        pitch_difference_report(rows, config.models, store.folder, n_resamples=config.bootstrap_resamples)
        write_pitch_differences(store, rows)
        text += "\nAccuracy by pitch difference (Fig. 2a): `pitch_difference.md`, `pitch_difference.png`.\n"
    if config.contrasts:
        contrast_report(rows, config.contrasts, store.folder, n_resamples=config.bootstrap_resamples)
        text += "\nModel contrasts (e.g. the width control, Fig. 4a): `contrasts.md`, `contrasts.png`.\n"
    if config.update_interactions:
        update_interaction_report(
            rows, config.models, config.update_interactions, store.folder, n_resamples=config.bootstrap_resamples
        )
        text += "\nPer-operation accuracy and the update-specific interaction: `update_interaction.md`.\n"
    if "intervening" in config.breakdowns:
        text_by_writes = intervening_markdown(
            rows, config.models, config.update_interactions, n_resamples=config.bootstrap_resamples
        )
        store.write_text("intervening.md", text_by_writes)
        text += "\nAccuracy, interaction and previous-share by intervening writes: `intervening.md`.\n"
    if config.exclude:
        counts = _write_exclusions(store, rows, config, types).strip().splitlines()[-1]
        text += f"\nExclusions: `table_excluded.md`, `accuracy_excluded.png`. {counts}\n"
    if len({r["seed"] for r in rows}) > 1:
        title = "Query-weighted accuracy (%) per seed; previous-share: % of wrong post-update answers that gave the superseded value"
        store.write_text(
            "seeds.md", table_markdown(seed_table(rows, query_types=types, model_order=config.models), title=title)
        )
        text += "\nAccuracy per seed (the spread behind the means): `seeds.md`.\n"
    store.write_text("table.md", text)
    plot_accuracy(by_type, store.folder / "accuracy.png", query_types=types)
    return text
