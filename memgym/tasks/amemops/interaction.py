"""AMemOps erasure analysis: per-operation accuracy and the update-specific interaction, with the
paired two-level bootstrap of the matched-history statistics.

An erasing core can beat no-erase on post-update queries for two reasons: it overwrites
superseded values (the paper's account of erasure), or it is simply better at binding a source's
attributes, which also shows on *initial* queries (no earlier value to erase). The
update-specific part of a contrast ``A:B`` (A minus B, a side of several models joined by ``+``
is their mean, as in ``contrasts``) is the interaction

    I = [acc_A(post-update) - acc_B(post-update)] - [acc_A(initial) - acc_B(initial)]

in percentage points. Every number here is a linear combination of cell scores, a cell being
one (model, checkpoint, query type), so the bootstrap of
:func:`memgym.tasks.amemops.history.bootstrap_cells` gives them all at once: each resample draws
the streams once for every model and query type (paired) and each model's seeds independently
(shared by that model's query types). Within a seed a cell's queries are averaged per stream,
then streams and seeds weigh equally.

Pairing needs every cell on the same streams, so a contrast uses the streams that hold at least
one post-update and one initial query (of the attribute in question); the per-operation
accuracies use, per query type, the streams that hold that type.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.tasks.amemops.breakdowns import parse_contrast
from memgym.tasks.amemops.history import (
    LEVEL,
    Cell,
    Contrast,
    ContrastResult,
    bootstrap_cells,
    cell_scores,
    evaluate_contrasts,
)
from memgym.tasks.amemops.tables import QUERY_TYPES, previous_share

ATTRIBUTES = ("all", "gain", "pan")


def _cell_rows(rows: Sequence[dict[str, Any]], query_types: Sequence[str], attribute: str) -> list[dict[str, Any]]:
    """``rows`` of ``query_types`` (and ``attribute``) as cell rows: the stream is the pairing unit
    (the history ``template``) and the query type the ``operation``."""
    return [
        {
            "model": r["model"],
            "checkpoint": r["checkpoint"],
            "seed": r["seed"],
            "correct": r["correct"],
            "template": str(r["stream"]),
            "operation": r["query_type"],
            "recordings": "-",
            "earlier": "-",
            "delay_s": 0.0,
            "load": "-",
        }
        for r in rows
        if r["query_type"] in query_types and attribute in ("all", r["attribute"])
    ]


def _cell(model: str, checkpoint: Any, query_type: str) -> Cell:
    return Cell(model, checkpoint, "-", "-", query_type, 0.0, "-")


def _run(
    rows: list[dict[str, Any]], contrasts: list[Contrast], rng: np.random.Generator, n_resamples: int, level: float
) -> tuple[list[ContrastResult], int]:
    """The results of the contrasts whose cells all have queries on common streams (none when no
    stream holds every cell), and the number of paired streams."""
    try:
        scores = cell_scores(rows)
    except ValueError:  # no stream is common to every cell
        return [], 0
    present = [c for c in contrasts if all(cell in scores.scores for cell in c.weights)]
    estimates, replicates = bootstrap_cells(scores, rng=rng, n_resamples=n_resamples)
    return evaluate_contrasts(present, scores.cells, estimates, replicates, level=level), len(scores.templates)


def operation_accuracy(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    *,
    rng: np.random.Generator,
    n_resamples: int,
    level: float = LEVEL,
) -> list[ContrastResult]:
    """Accuracy (%) of every model, checkpoint, query type and attribute with its ``level`` interval;
    labels ``model, checkpoint, query_type, attribute, streams``."""
    out = []
    for query_type in QUERY_TYPES:
        for attribute in ATTRIBUTES:
            chosen = [r for r in _cell_rows(rows, (query_type,), attribute) if r["model"] in models]
            if not chosen:
                continue
            keys = sorted(
                {(r["model"], r["checkpoint"]) for r in chosen}, key=lambda k: (models.index(k[0]), str(k[1]))
            )
            labels = [{"model": m, "checkpoint": c, "query_type": query_type, "attribute": attribute} for m, c in keys]
            contrasts = [Contrast(lab, {_cell(m, c, query_type): 1.0}) for lab, (m, c) in zip(labels, keys)]
            results, n_streams = _run(chosen, contrasts, rng, n_resamples, level)
            out += [ContrastResult(r.labels | {"streams": n_streams}, r.estimate, r.interval) for r in results]
    return out


def _side(models: Sequence[str], checkpoint: Any, query_type: str, sign: float) -> dict[Cell, float]:
    return {_cell(m, checkpoint, query_type): sign / len(models) for m in models}


def update_interactions(
    rows: Sequence[dict[str, Any]],
    contrasts: Sequence[str],
    *,
    rng: np.random.Generator,
    n_resamples: int,
    level: float = LEVEL,
) -> list[ContrastResult]:
    """Per contrast ``A:B``, checkpoint and attribute: ``A - B`` on post-update queries, on initial
    queries, and the interaction (their difference), in pp with ``level`` intervals; labels
    ``contrast, checkpoint, attribute, term, streams`` (term ``post_update``, ``initial`` or ``interaction``)."""
    out = []
    for text in contrasts:
        plus, minus = parse_contrast(text)
        for attribute in ATTRIBUTES:
            chosen = [r for r in _cell_rows(rows, ("post_update", "initial"), attribute) if r["model"] in plus + minus]
            if not chosen:
                continue
            terms = []
            for checkpoint in sorted({r["checkpoint"] for r in chosen}, key=str):
                labels = {"contrast": text, "checkpoint": checkpoint, "attribute": attribute}
                by_type = {
                    q: _side(plus, checkpoint, q, 1.0) | _side(minus, checkpoint, q, -1.0)
                    for q in ("post_update", "initial")
                }
                interaction = dict(by_type["post_update"])
                for cell, weight in by_type["initial"].items():
                    interaction[cell] = -weight
                terms += [Contrast(labels | {"term": q}, w) for q, w in by_type.items()]
                terms.append(Contrast(labels | {"term": "interaction"}, interaction))
            results, n_streams = _run(chosen, terms, rng, n_resamples, level)
            out += [ContrastResult(r.labels | {"streams": n_streams}, r.estimate, r.interval) for r in results]
    return out


def _fmt(result: ContrastResult) -> str:
    return f"{result.estimate:.1f}" if result.interval is None else result.interval.format(1)


def interaction_markdown(
    accuracy: Sequence[ContrastResult],
    interactions: Sequence[ContrastResult],
    level: float = LEVEL,
    title: str = "# Erasure: per-operation accuracy and the update-specific interaction",
) -> str:
    """``update_interaction.md``: the per-operation accuracy table and the interaction table, under
    the markdown heading ``title`` (its sections one level below)."""
    sub = "#" * (len(title) - len(title.lstrip("#")) + 1)
    lines = [
        title,
        "",
        f"{100 * level:g}% bootstrap intervals: streams paired across models and query types, seeds resampled per model.",
        "",
        f"{sub} Accuracy (%) by query type",
        "",
        "| model | checkpoint | attribute | " + " | ".join(q.replace("_", "-") for q in QUERY_TYPES) + " |",
        "| --- | ---: | --- |" + " ---: |" * len(QUERY_TYPES),
    ]
    cells = {
        (r.labels["model"], r.labels["checkpoint"], r.labels["attribute"], r.labels["query_type"]): r for r in accuracy
    }
    for model, checkpoint, attribute in dict.fromkeys(k[:3] for k in cells):
        shown = [_fmt(cells[k]) if (k := (model, checkpoint, attribute, q)) in cells else "-" for q in QUERY_TYPES]
        lines.append(f"| {model} | {checkpoint} | {attribute} | " + " | ".join(shown) + " |")
    lines += [
        "",
        f"{sub} Update-specific interaction (pp)",
        "",
        "`A - B` on post-update and on initial queries, and interaction = post-update minus initial difference,",
        "on the streams holding both query types.",
        "",
        "| contrast | checkpoint | attribute | streams | post-update | initial | interaction |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    grouped: dict[tuple, dict[str, ContrastResult]] = {}
    for r in interactions:
        key = (r.labels["contrast"], r.labels["checkpoint"], r.labels["attribute"], r.labels["streams"])
        grouped.setdefault(key, {})[r.labels["term"]] = r
    for (contrast, checkpoint, attribute, streams), terms in grouped.items():
        shown = [_fmt(terms[t]) if t in terms else "-" for t in ("post_update", "initial", "interaction")]
        lines.append(f"| {contrast} | {checkpoint} | {attribute} | {streams} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def update_interaction_report(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    contrasts: Sequence[str],
    folder: Path,
    *,
    n_resamples: int = 10_000,
) -> str:
    """Write ``update_interaction.md`` (seeded: identical output on a re-run); returns it."""
    text = seeded_tables(rows, models, contrasts, n_resamples)
    (Path(folder) / "update_interaction.md").write_text(text, encoding="utf-8")
    return text


def seeded_tables(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    contrasts: Sequence[str],
    n_resamples: int,
    level: float = LEVEL,
    **title: str,
) -> str:
    """:func:`interaction_markdown` of ``rows`` with the reports' fixed bootstrap seeds (the same
    resamples at every ``level``)."""
    rng = np.random.default_rng(0)
    accuracy = operation_accuracy(rows, list(models), rng=rng, n_resamples=n_resamples, level=level)
    rng = np.random.default_rng(1)
    interactions = update_interactions(rows, contrasts, rng=rng, n_resamples=n_resamples, level=level)
    return interaction_markdown(accuracy, interactions, level, **title)


INTERVENING_SPLIT = 2
"""Queries with at least this many other sources' writes since their answer was last heard form the
upper stratum of :func:`intervening_markdown`."""


def _previous_shares(rows: Sequence[dict[str, Any]], models: Sequence[str]) -> list[str]:
    """Markdown rows: per model, checkpoint and attribute, the wrong post-update answers and the
    percent of them that gave the superseded value."""
    out = []
    for model in models:
        mine = [r for r in rows if r["model"] == model and r["query_type"] == "post_update" and not r["correct"]]
        for checkpoint in sorted({r["checkpoint"] for r in mine}, key=str):
            for attribute in ATTRIBUTES:
                wrong = [r for r in mine if r["checkpoint"] == checkpoint and attribute in ("all", r["attribute"])]
                share = previous_share(wrong)
                shown = "-" if share is None else f"{share:.1f}"
                out.append(f"| {model} | {checkpoint} | {attribute} | {len(wrong)} | {shown} |")
    return out


def intervening_markdown(
    rows: Sequence[dict[str, Any]],
    models: Sequence[str],
    contrasts: Sequence[str],
    *,
    n_resamples: int = 10_000,
    level: float = LEVEL,
) -> str:
    """``intervening.md``'s text: per stratum of ``intervening`` (other sources' writes between the
    queried source's last event and the query: fewer than :data:`INTERVENING_SPLIT`, or at least
    that many), the tables of ``update_interaction.md`` at ``level`` and the previous-share of wrong
    post-update answers. Rows need the ``intervening`` annotation (absent-source queries, ``None``,
    are left out); seeded, so the same rows give the same text."""
    strata = {
        f"fewer than {INTERVENING_SPLIT}": lambda n: n < INTERVENING_SPLIT,
        f"{INTERVENING_SPLIT} or more": lambda n: n >= INTERVENING_SPLIT,
    }
    parts = [
        "# Erasure by intervening writes",
        "",
        "Queries split by how many other sources' events lie between the queried source's last event and the",
        "query: what an additive memory has to see past (an update's new value and an initial value alike).",
    ]
    for label, keep in strata.items():
        chosen = [r for r in rows if r.get("intervening") is not None and keep(r["intervening"])]
        tables = seeded_tables(chosen, models, contrasts, n_resamples, level, title=f"## {label} intervening writes")
        parts += [
            "",
            tables.rstrip("\n"),
            "",
            "### Wrong post-update answers that gave the superseded value",
            "",
            "| model | checkpoint | attribute | wrong | previous-share (%) |",
            "| --- | ---: | --- | ---: | ---: |",
            *_previous_shares(chosen, models),
        ]
    return "\n".join(parts) + "\n"
