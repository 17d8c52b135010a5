"""The VoxMem paper's two analyses, computed from ``memgym eval voxmem`` rows and the dataset.

**Semantics minus audio-native gap per memory operation** (:func:`semantic_gap_table`). Per
(model, memory, operation) and per budget (plus ``all``: each item's mean over its budgets), the
accuracy on semantics items minus the accuracy on audio-native items (speaker, paralinguistic,
sound), in points, with a 95 % bootstrap interval. The two sides are different items, so items
are resampled within each side (:func:`~memgym.core.statistics.bootstrap_difference`, unpaired);
an item's budgets stay together under ``all``. IE has no semantics cell, so its gap is ``-``.

**Error taxonomy per evidence type** (:func:`error_category`, :func:`taxonomy_table`). Every
scored row falls in one category, decided in this order from the reply's verdict (``correct``,
``refused``, ``reply_class``, ``asserted``, ``answer_kind``) and the dataset's annotations of the
sessions *the model was handed* (the row's ``handed_sessions``, recorded from the memory's
:meth:`~memgym.memory.voxmem.base.VoxMemMemory.seen`: each session's role, fact and user turns'
speaker, cue and sound; rows without it, written before memories recorded what they saw, count
every session of the played history):

====================  =====================================================================
category              the reply
====================  =====================================================================
correct               is correct
over_context          was not produced: the history did not fit the model's context
unparseable           is empty, or names no answer of the question's answer space
refused_answerable    refuses an answerable item
answered_refusal      answers an answer-refusal (AR) item
wrong_computed        is a wrong count, yes/no, comparison or sequence (no one session holds it)
earlier_state         (TET) is the state of a handed evidence session before the asked one
other_user            is the state of a handed session on the question's subject spoken by another user
haystack              is the state of a handed haystack session (another subject, or the asker's own)
other_session         is the state of another handed session (evidence of another subject, a filler)
no_session            is a state no handed session holds
====================  =====================================================================

A session's *state* is what it would answer the question with: its stated value (semantics and
speaker questions, cue-to-fact questions), the cue words of its user turns (paralinguistic), the
sound labels of its user turns or "no background sound" (sound), or "you" / "someone else" by
who speaks its user turns (speaker-label answers). So a memory that never hands the model a
haystack (``cascaded_evidence_only``, ``evidence_only``) has no ``haystack`` errors.

**Chance level per category** (:func:`chance_categories`). The last six categories depend on the
question's answer kind and on what the model was handed as much as on the model: a wrong count is
``wrong_computed`` whatever caused it, and a history whose sessions state most of the answer
space leaves few ``no_session`` answers. For every row that answers wrongly (one of those six),
the chance level is the category a wrong answer drawn uniformly from the answer space (the
answer kind's labels other than the gold one; the other speaker label; for counts, yes/no,
comparisons and sequences always ``wrong_computed``) would get against the same handed sessions,
averaged over the draws; :func:`taxonomy_table` sums it per group as the ``<category> chance``
count, so a category far above its chance count is the model's own failure mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.figures import legend_outside, save_figure, system_styles
from memgym.core.statistics import bootstrap_difference
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.voxmem.oracle import sound_label
from memgym.datasets.voxmem.records import Query, Session, VoxMemEpisode
from memgym.datasets.voxmem.taxonomy import AUDIO_NATIVE, EVIDENCE_TYPES, OPERATIONS
from memgym.tasks.voxmem.answers import OTHER, YOU, same_answer
from memgym.tasks.voxmem.scoring import NO_SOUND, AnswerSpec, answer_spec
from memgym.tasks.voxmem.tables import scored

CATEGORIES: tuple[str, ...] = (
    "correct",
    "over_context",
    "unparseable",
    "refused_answerable",
    "answered_refusal",
    "wrong_computed",
    "earlier_state",
    "other_user",
    "haystack",
    "other_session",
    "no_session",
)
"""Error-taxonomy categories (module docstring), in the order they are decided."""
ERRORS: tuple[str, ...] = CATEGORIES[1:]
WRONG_ANSWERS: tuple[str, ...] = CATEGORIES[5:]
"""The categories of a wrong answer (the reply names an answer that is not the gold one)."""
CHANCE_COLUMNS: tuple[str, ...] = tuple(f"{c} chance" for c in WRONG_ANSWERS)


# ----- semantics minus audio-native gap -------------------------------------------------------------------
def _item_means(rows: Sequence[dict[str, Any]]) -> list[tuple[str, float]]:
    """``(evidence, mean correctness)`` per item of ``rows`` (an item's budgets averaged)."""
    items: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        items.setdefault(row["item_id"], []).append(row)
    return [(members[0]["evidence"], float(np.mean([r["correct"] for r in members]))) for members in items.values()]


def _gap_row(rows: Sequence[dict[str, Any]], rng: np.random.Generator, n_resamples: int) -> dict[str, Any]:
    means = _item_means(rows)
    semantics = [100.0 * v for e, v in means if e == "semantics"]
    audio = [100.0 * v for e, v in means if e in AUDIO_NATIVE]
    row: dict[str, Any] = {
        "semantics items": len(semantics),
        "semantics (%)": float(np.mean(semantics)) if semantics else None,
        "audio-native items": len(audio),
        "audio-native (%)": float(np.mean(audio)) if audio else None,
        "gap": None,
        "gap low": None,
        "gap high": None,
    }
    if semantics and audio:
        interval = bootstrap_difference(semantics, audio, rng=rng, paired=False, n_resamples=n_resamples)
        row.update({"gap": interval.estimate, "gap low": interval.low, "gap high": interval.high})
    return row


def semantic_gap_table(
    rows: Sequence[dict[str, Any]], rng: np.random.Generator, n_resamples: int = 2000
) -> list[dict[str, Any]]:
    """Per (model, memory, operation, budget or ``all``): semantics and audio-native accuracy
    (%, items) and their difference in points with a 95 % bootstrap interval (module docstring)."""
    table = []
    counted = scored(rows)
    for model, memory in dict.fromkeys((r["model"], r["memory"]) for r in counted):
        members = [r for r in counted if r["model"] == model and r["memory"] == memory]
        budgets = sorted({int(r["budget"]) for r in members})
        for operation in OPERATIONS:
            of_op = [r for r in members if r["operation"] == operation]
            for budget in [*budgets, None]:
                chosen = [r for r in of_op if budget is None or int(r["budget"]) == budget]
                label = "all" if budget is None else f"{budget // 1024}K"
                head = {"model": model, "memory": memory, "operation": operation, "budget": label}
                table.append({**head, **_gap_row(chosen, rng, n_resamples)})
    return table


def gap_markdown(table: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The gap table with the interval written as ``gap [low, high]`` (for Markdown)."""
    out = []
    for row in table:
        shown = {k: v for k, v in row.items() if k not in ("gap", "gap low", "gap high")}
        gap = row["gap"]
        shown["semantics - audio-native (points)"] = (
            "-" if gap is None else f"{gap:+.1f} [{row['gap low']:+.1f}, {row['gap high']:+.1f}]"
        )
        out.append(shown)
    return out


def plot_semantic_gap(table: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Bars of the gap per operation (one colour per budget, ``all`` last) with 95 % intervals,
    one panel per (model, memory); None when no gap could be computed."""
    rows = [r for r in table if r["gap"] is not None]
    if not rows:
        return None
    plt = _pyplot()
    panels = list(dict.fromkeys((r["model"], r["memory"]) for r in rows))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.4), squeeze=False)
    for axis, (model, memory) in zip(axes[0], panels):
        mine = [r for r in rows if r["model"] == model and r["memory"] == memory]
        budgets = list(dict.fromkeys(r["budget"] for r in mine))
        width = 0.8 / len(budgets)
        for k, budget in enumerate(budgets):
            points = [(OPERATIONS.index(r["operation"]), r) for r in mine if r["budget"] == budget]
            x = np.array([i for i, _ in points]) + (k - (len(budgets) - 1) / 2) * width
            gaps = np.array([r["gap"] for _, r in points])
            spread = np.array([[g - r["gap low"], r["gap high"] - g] for g, (_, r) in zip(gaps, points)]).T
            axis.bar(x, gaps, width, yerr=spread, capsize=2, label=budget)
        axis.axhline(0.0, color="black", linewidth=0.8)
        axis.set_xticks(range(len(OPERATIONS)), OPERATIONS)
        axis.set_ylabel("semantics - audio-native (points)")
        axis.set_title(f"{memory} / {model}", fontsize=9)
    fig.tight_layout()
    legend_outside(fig, list(axes[0]), title="budget", fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100, tight=True)


# ----- error taxonomy ----------------------------------------------------------------------------------------
def _answers_with_values(query: Query) -> bool:
    return query.evidence in ("semantics", "speaker") or query.subtype == "cue_to_fact"


def session_states(session: Session, query: Query, kind: str) -> set[str]:
    """The answers ``session`` holds for ``query`` read as ``kind`` (module docstring)."""
    users = [t for t in session.turns if t.role == "user"]
    if kind == "speaker":
        return {YOU if t.user == query.asker else OTHER for t in users}
    if _answers_with_values(query):
        return {session.fact.value} if session.fact is not None and session.fact.value else set()
    if query.evidence == "paralinguistic":
        return {CUE_WORDS[t.cue] for t in users}
    return {sound_label(t.sound) if t.sound else NO_SOUND for t in users}


def handed_sessions(row: Mapping[str, Any], episode: VoxMemEpisode) -> list[Session]:
    """The sessions of ``episode`` the model was handed for ``row`` (its ``handed_sessions``
    history indices; every session when the row does not record them)."""
    handed = row.get("handed_sessions")
    if handed is None:
        return list(episode.sessions)
    return [episode.sessions[i] for i in handed if 0 <= int(i) < len(episode.sessions)]


def _source(asserted: str, kind: str, episode: VoxMemEpisode, query: Query, handed: Sequence[Session]) -> str:
    """Where a wrong span / speaker answer comes from among the ``handed`` sessions (the last
    five categories)."""
    holding = [s for s in handed if any(same_answer(asserted, x, kind) for x in session_states(s, query, kind))]
    if not holding:
        return "no_session"
    held = {s.session_id for s in holding}
    if query.operation == "TET":
        wanted = set(episode.items[0].annotations.get("evidence_sessions", ()))
        ordered = [s.session_id for s in episode.sessions if s.session_id in wanted]
        asked = len(ordered) - 1 if query.subtype == "latest" else query.point
        if held & set(ordered[: max(asked, 0)]):
            return "earlier_state"
    if kind != "speaker" and any(
        s.fact is not None and s.fact.subject in query.subjects and s.fact.speaker != query.asker for s in holding
    ):
        return "other_user"
    if any(s.role == "haystack" for s in holding):
        return "haystack"
    return "other_session"


def error_category(row: Mapping[str, Any], episode: VoxMemEpisode, query: Query | None) -> str:
    """The :data:`CATEGORIES` entry of one scored row of ``episode`` (its plan's ``query``; for AR
    items the source question's). Without a query a wrong answer is ``other_session``."""
    if row.get("status") == "over_context":
        return "over_context"
    if row.get("correct"):
        return "correct"
    if row.get("reply_class") == "empty":
        return "unparseable"
    if row.get("refused"):
        return "refused_answerable"
    if row.get("operation") == "AR":
        return "answered_refusal"
    asserted, kind = row.get("asserted"), row.get("answer_kind", "span")
    if asserted is None:
        return "unparseable"
    if kind not in ("span", "speaker"):
        return "wrong_computed"
    if query is None:
        return "other_session"
    return _source(str(asserted), kind, episode, query, handed_sessions(row, episode))


def chance_categories(
    row: Mapping[str, Any], episode: VoxMemEpisode, query: Query | None, spec: AnswerSpec
) -> dict[str, float]:
    """Category -> probability that a uniformly drawn wrong answer to ``row``'s question (answer
    space ``spec``) falls in it, against the sessions the row's model was handed (module
    docstring); empty when the answer space holds no wrong answer to draw (no query)."""
    kind = spec.kind
    if kind not in ("span", "speaker"):
        return {"wrong_computed": 1.0}
    if query is None:
        return {}
    wrong = [YOU, OTHER] if kind == "speaker" else list(spec.labels)
    wrong = [w for w in wrong if not same_answer(w, spec.gold, kind)]
    if not wrong:
        return {}
    handed = handed_sessions(row, episode)
    shares: dict[str, float] = {}
    for answer in wrong:
        category = _source(answer, kind, episode, query, handed)
        shares[category] = shares.get(category, 0.0) + 1.0 / len(wrong)
    return shares


def taxonomy_table(
    rows: Sequence[dict[str, Any]],
    episodes: Mapping[str, VoxMemEpisode],
    queries: Mapping[str, Query],
    sound_classes: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Per (model, memory, evidence type): items scored, the count of each category and, for the
    wrong-answer categories, the ``<category> chance`` count (:func:`chance_categories` summed
    over the group's wrong answers; ``sound_classes`` complete sound questions' answer space).
    Rows whose episode is not in ``episodes`` are left out."""
    counts: dict[tuple[str, str, str], dict[str, float]] = {}
    for row in scored(rows):
        episode = episodes.get(row["episode_id"])
        if episode is None:
            continue
        query = queries.get(row["item_id"])
        category = error_category(row, episode, query)
        key = (row["model"], row["memory"], row["evidence"])
        group = counts.setdefault(key, {**dict.fromkeys(CATEGORIES, 0), **dict.fromkeys(CHANCE_COLUMNS, 0.0)})
        group[category] += 1
        if category in WRONG_ANSWERS:
            spec = answer_spec(episode.items[0], query, sound_classes)
            for name, share in chance_categories(row, episode, query, spec).items():
                group[f"{name} chance"] += share
    order = {e: i for i, e in enumerate(EVIDENCE_TYPES)}
    keys = sorted(counts, key=lambda k: (k[0], k[1], order.get(k[2], len(order))))
    return [
        {"model": m, "memory": mem, "evidence": e, "n": sum(counts[(m, mem, e)][c] for c in CATEGORIES),
         **counts[(m, mem, e)]}
        for m, mem, e in keys
    ]  # fmt: skip


def taxonomy_percent(table: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The taxonomy table with each category and chance count as a share of the group's items (%)."""
    columns = (*CATEGORIES, *CHANCE_COLUMNS)
    return [{**{k: r[k] for k in ("model", "memory", "evidence", "n")}, **{c: 100.0 * r[c] / r["n"] for c in columns}}
            for r in table]  # fmt: skip


def plot_taxonomy(table: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Stacked bars of the error categories (% of items) per evidence type, one panel per
    (model, memory) that made errors (the others are named in a note below the panels); None
    without rows or errors. Categories no system fell into are left out of bars and legend."""
    if not table:
        return None
    shares = taxonomy_percent(table)
    present = [c for c in ERRORS if any(r[c] for r in shares)]
    panels, flawless = _error_panels(shares, present)
    if not panels:
        return None
    plt = _pyplot()
    styles = system_styles(ERRORS)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.8), squeeze=False)
    for axis, (model, memory) in zip(axes[0], panels):
        mine = [r for r in shares if r["model"] == model and r["memory"] == memory]
        _stack_errors(axis, mine, present, styles)
        axis.set_title(f"errors: {memory} / {model}", fontsize=9)
    fig.tight_layout()
    legend_outside(fig, axes[0][0] if len(panels) == 1 else list(axes[0]), title="error", fontsize=8)
    if flawless:
        names = ", ".join(f"{memory} / {model}" for model, memory in flawless)
        fig.text(0.01, -0.02, f"no errors: {names}", fontsize=8, va="top")
    fig.tight_layout()
    return save_figure(fig, path, dpi=100, tight=True)


def _error_panels(
    shares: Sequence[dict[str, Any]], categories: Sequence[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(panels, flawless)``: the (model, memory) pairs with errors in ``categories``, and those without."""
    pairs = list(dict.fromkeys((r["model"], r["memory"]) for r in shares))
    erring = {(r["model"], r["memory"]) for r in shares if any(r[c] for c in categories)}
    return [p for p in pairs if p in erring], [p for p in pairs if p not in erring]


def _stack_errors(axis: Any, rows: Sequence[dict[str, Any]], categories: Sequence[str], styles: dict) -> None:
    """One panel's stacked bars: per evidence row, the share (%) of items in each error category."""
    bottom = np.zeros(len(rows))
    for category in categories:
        values = np.array([r[category] for r in rows])
        axis.bar(range(len(rows)), values, 0.7, bottom=bottom, color=styles[category]["color"], label=category)
        bottom += values
    axis.set_xticks(range(len(rows)), [f"{r['evidence']}\n(n={r['n']})" for r in rows], fontsize=7)
    axis.set_ylim(0, 100)
    axis.set_ylabel("share of items (%)")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
