"""Quality control: deterministic session checks and item checks over assembled histories.

Session level (QC-1), per rendered user turn:
  * ``duration`` -- 0.3 s <= duration <= 30 s;
  * ``clipping`` -- at most 0.1 % of samples at full scale;
  * ``snr`` -- achieved SNR within 0.5 dB of the target where a sound is mixed;
  * ``cue`` -- the cue-removed pair really differs in the cue's acoustic feature
    (:data:`~memgym.datasets.speech.cues.CUE_MIN_DELTA`).

Item level (QC-2), per episode (item x budget):
  * ``unique_answer`` -- the oracle over every topical session of the assembled history (evidence,
    haystacks, borrowed sessions) gives the gold answer: no added session supplies another;
  * ``transcript_only`` -- for audio-native items, a text-only answerer that knows every word and
    the session order but no voice, tone or sound still has a wrong answer it cannot exclude, and
    no turn names a voice, tone or sound (no leakage);
  * ``filler_clean`` -- no filler mentions a subject the question names;
  * ``budget`` -- the history fits its budget;
  * ``nesting`` -- each longer history contains the shorter one's sessions in the same order.

Dataset level: ``reuse`` -- no session appears in more items' histories than the limit;
``separability`` -- a text-only classifier (multinomial naive Bayes on word counts, 5-fold
cross-validation, balanced accuracy) should not tell evidence from haystack sessions by their
words much better than the same classifier trained on shuffled labels.

Optional model check (``qc_reasoner``): a text-only reasoner reads the transcript of the
smallest history (words and timestamps, no audio) and answers each audio-native question; how
many it solves is reported next to the chance level of the item's answer format (yes/no items are
solved half the time by guessing), so a cell that a transcript answers far above chance shows up.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.datasets.speech.cues import CUE_MIN_DELTA
from memgym.datasets.voxmem.oracle import answer_query, sound_label, transcript_candidates
from memgym.datasets.voxmem.records import Plan, Session, Turn, VoxMemEpisode
from memgym.datasets.voxmem.writing import leaks

MIN_TURN_S = 0.3
MAX_TURN_S = 30.0
MAX_CLIPPED = 1e-3
SNR_TOLERANCE_DB = 0.5


def turn_failures(turn: Turn, snr_target: float) -> list[str]:
    """Names of the session-level checks ``turn`` fails (empty when it passes)."""
    if turn.role != "user":
        return []
    failed = []
    if not MIN_TURN_S <= turn.duration_s <= MAX_TURN_S:
        failed.append("duration")
    if turn.clipped > MAX_CLIPPED:
        failed.append("clipping")
    if turn.sound and (turn.snr_db is None or abs(turn.snr_db - snr_target) > SNR_TOLERANCE_DB):
        failed.append("snr")
    if turn.cue != "neutral" and (turn.cue_delta is None or turn.cue_delta < CUE_MIN_DELTA[turn.cue]):
        failed.append("cue")
    return failed


def session_failures(sessions: Sequence[Session], snr_target: float) -> dict[str, list[str]]:
    """session id -> failed session-level checks (only sessions with failures)."""
    out = {}
    for session in sessions:
        failed = sorted({name for turn in session.turns for name in turn_failures(turn, snr_target)})
        if failed:
            out[session.session_id] = failed
    return out


def item_failures(
    plan: Plan, histories: dict[int, Sequence[Session]], token_counts: dict[int, int], sound_classes: Sequence[str]
) -> list[str]:
    """Names of the item-level checks an item fails across its budgets."""
    failed: list[str] = []
    labels = [sound_label(s) for s in sound_classes]
    budgets = sorted(histories)
    for budget in budgets:
        sessions = histories[budget]
        facts = [s.fact for s in sessions if s.fact is not None]
        if answer_query(plan.query, facts) != plan.answer:
            failed.append(f"unique_answer@{budget}")
        if plan.audio_native:
            candidates = transcript_candidates(plan.query, facts)
            if not (candidates - {plan.answer}):
                failed.append(f"transcript_only@{budget}")
        if any(leaks(t.text, labels) for s in sessions if s.role != "filler" for t in s.turns):
            failed.append(f"transcript_only@{budget}")
        subjects = [x.lower() for x in plan.query.subjects]
        if any(x in t.text.lower() for s in sessions if s.role == "filler" for t in s.turns for x in subjects):
            failed.append(f"filler_clean@{budget}")
        if token_counts[budget] > budget:
            failed.append(f"budget@{budget}")
    for short, long in zip(budgets, budgets[1:]):
        ids_long = [s.session_id for s in histories[long]]
        positions = {sid: i for i, sid in enumerate(ids_long)}
        ids_short = [s.session_id for s in histories[short]]
        if any(sid not in positions for sid in ids_short) or [positions[s] for s in ids_short] != sorted(
            positions[s] for s in ids_short
        ):
            failed.append(f"nesting@{short}<{long}")
    return sorted(set(failed))


TRANSCRIPT_SYSTEM = (
    "You read transcripts of past conversations between users and an assistant. Who spoke, their tone "
    "of voice and any background sounds are not in the transcript. Answer the question with a short "
    "phrase only, or 'unanswerable' if the transcript does not tell."
)


def transcript_text(episode: VoxMemEpisode) -> str:
    """The history as text only: session headers with timestamps, then ``User:``/``Assistant:`` lines."""
    lines = []
    for index, session in enumerate(episode.sessions, start=1):
        lines.append(f"Session {index} - {session.timestamp}")
        lines += [f"{'User' if t.role == 'user' else 'Assistant'}: {t.text}" for t in session.turns]
    return "\n".join(lines)


def transcript_llm_solves(reasoner: Reasoner, episode: VoxMemEpisode) -> bool:
    """Whether a text-only reasoner answers the episode's question correctly from the transcript."""
    from memgym.tasks.text_match import normalize_answer

    item = episode.items[0]
    prompt = f"{transcript_text(episode)}\n\nQuestion: {item.prompt}\nAnswer:"
    reply = reasoner.generate(
        [Message.text("system", TRANSCRIPT_SYSTEM), Message.text("user", prompt)], max_new_tokens=32
    )
    gold, said = normalize_answer(str(item.answer)), normalize_answer(reply)
    return bool(gold) and (said == gold or f" {gold} " in f" {said} ")


def separability(sessions: Sequence[Session], seed: int = 0, folds: int = 5) -> dict[str, float]:
    """How well a text-only classifier tells evidence from haystack sessions (see module docstring).

    Returns:
        ``{"accuracy", "shuffled_accuracy", "sessions"}``: balanced accuracies (0.5 = chance) of
        naive Bayes on the real and on permuted labels, and the number of sessions used.
    """
    import re

    import numpy as np

    texts = [" ".join(t.text for t in s.turns).lower() for s in sessions]
    labels = np.array([s.role == "evidence" for s in sessions], dtype=int)
    if len(texts) < 2 * folds or labels.min() == labels.max():
        return {"accuracy": float("nan"), "shuffled_accuracy": float("nan"), "sessions": len(texts)}
    vocab: dict[str, int] = {}
    rows = [[vocab.setdefault(w, len(vocab)) for w in re.findall(r"[a-z']+", t)] for t in texts]
    counts = np.zeros((len(texts), len(vocab)))
    for i, row in enumerate(rows):
        np.add.at(counts[i], row, 1.0)
    rng = np.random.default_rng(seed)
    fold_of = rng.permutation(len(texts)) % folds

    def cross_validated(y: np.ndarray) -> float:
        predictions = np.zeros_like(y)
        for k in range(folds):
            train, test = fold_of != k, fold_of == k
            log_prior = np.log(np.array([np.mean(y[train] == c) for c in (0, 1)]) + 1e-9)
            word_counts = np.stack([counts[train & (y == c)].sum(axis=0) + 1.0 for c in (0, 1)])
            log_likelihood = np.log(word_counts / word_counts.sum(axis=1, keepdims=True))
            predictions[test] = np.argmax(counts[test] @ log_likelihood.T + log_prior, axis=1)
        return float(np.mean([np.mean(predictions[y == c] == c) for c in (0, 1)]))

    return {
        "accuracy": cross_validated(labels),
        "shuffled_accuracy": cross_validated(rng.permutation(labels)),
        "sessions": len(texts),
    }


def reuse_counts(item_sessions: dict[str, set[str]]) -> collections.Counter:
    """session id -> number of items whose (longest) history contains it."""
    counts: collections.Counter = collections.Counter()
    for ids in item_sessions.values():
        counts.update(ids)
    return counts


def write_report(folder: Path, report: dict[str, Any]) -> Path:
    """Write ``qc_report.json`` and a readable ``qc_report.md`` into the dataset folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qc_report.json").write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    lines = ["# VoxMem quality-control report", ""]
    lines += [f"- items kept: {report['items_kept']} of {report['items_planned']} planned"]
    lines += [f"- discarded: {len(report['discarded'])}", f"- revised (redrawn): {report['revised']}"]
    lines += [f"- max session reuse: {report['max_session_reuse']} (limit {report['reuse_limit']})"]
    lines += [f"- audio: {report['audio_hours']:.3f} h in {report['user_turns']} user turns"]
    if report.get("separability"):
        sep = report["separability"]
        lines += [
            f"- evidence vs haystack, text-only classifier: balanced accuracy {sep['accuracy']:.2f} "
            f"(shuffled labels {sep['shuffled_accuracy']:.2f}, {sep['sessions']} sessions)"
        ]
    if report.get("transcript_llm"):
        llm = report["transcript_llm"]
        lines += [
            f"- text-only reasoner solved {llm['solved']} of {llm['asked']} audio-native items (chance ~{llm['chance']:.1f})"
        ]
    lines.append("")
    lines += ["| check | failures (before revision) |", "| --- | ---: |"]
    lines += [f"| {name} | {count} |" for name, count in sorted(report["check_failures"].items())]
    lines += ["", "| cell | items |", "| --- | ---: |"]
    lines += [f"| {cell} | {count} |" for cell, count in sorted(report["items_per_cell"].items())]
    path = folder / "qc_report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
