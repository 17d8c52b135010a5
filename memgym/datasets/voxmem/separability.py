"""QC separability: can a text-only classifier tell evidence from haystack sessions by their words?

The paper's check (a text-only classifier near its shuffled-label baseline) only means something
when no test session has a near-copy of itself with the opposite label in training. VoxMem's
haystacks derive from evidence: a borrowed haystack repeats another item's evidence (re-voiced),
a written one varies its own item's evidence (another value or subject), and an AR item re-speaks
its source's sessions. :func:`derivation_families` joins such items (and items sharing a session
or a subject) into families, and :func:`separability` keeps each family in one cross-validation fold.
In a large build those joins chain every item into a handful of families (400 items: one), too
few to fold; :func:`fold_groups` then groups sessions by their topic family (cooking, travel,
...), which holds every same-subject variant, re-voiced copy and AR edit of a session.

The classifier is multinomial naive Bayes on word counts (Laplace smoothing), scored by balanced
accuracy over the out-of-fold predictions. The baseline refits it on ``permutations`` random
permutations of the labels (same folds); its 95 % interval is the 2.5 / 97.5 percentiles. The
real accuracy gets a bootstrap CI over families (resampling whole families, the unit that is
independent). Both are also given per evidence type (each session counted under the evidence type
of its item), from the same fits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.datasets.voxmem.records import Session

PERMUTATIONS = 200
"""Label permutations of the shuffled baseline."""
BOOTSTRAP = 1000
"""Family resamples of the accuracy's bootstrap CI."""
MIN_FAMILIES = 10
"""Fewest derivation families folded as they are; fewer: :func:`fold_groups` folds topic families."""
TOP_FEATURES = 8
"""Words listed per class in the report (the classifier's most class-indicative words)."""


class _Families:
    """Union-find over item ids."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def item_root(item_id: str) -> str:
    """The item an id names, without its redraw suffix (``"vox00003r1"`` -> ``"vox00003"``):
    haystacks are borrowed from the first draw of other items."""
    return re.sub(r"r\d+$", "", item_id)


def derivation_families(items: Sequence[tuple[str, str | None, Sequence[Session]]]) -> dict[str, str]:
    """session id -> family (an item id) for every evidence and haystack session of ``items``.

    Args:
        items: ``(item_id, source_item or None, sessions of its longest history)`` per item.
    Items are joined when one is an AR item of the other, when one's history holds a haystack
    borrowed from the other (``source`` ``"borrowed:<item>..."``), when both hold one session,
    or when sessions of both are on one subject (a written haystack moved to another subject of
    its topic family may land on another item's evidence subject: the same words with the
    opposite label). A written haystack is in its own item's history, so it shares the family of
    the evidence it varies.
    """
    families = _Families()
    holders: dict[str, str] = {}
    subjects: dict[tuple[str, str], str] = {}
    for item_id, source, sessions in items:
        root = families.find(item_root(item_id))
        if source:
            families.join(root, item_root(source))
        for session in sessions:
            if session.role == "filler":
                continue
            if session.source.startswith("borrowed:"):
                families.join(root, item_root(session.source.split(":")[1]))
            families.join(root, holders.setdefault(session.session_id, root))
            if session.fact is not None:
                families.join(root, subjects.setdefault((session.fact.family, session.fact.subject), root))
    return {sid: families.find(item) for sid, item in holders.items()}


def fold_groups(families: dict[str, str], sessions: Sequence[Session]) -> tuple[list[str], str]:
    """The cross-validation group of each of ``sessions`` and the grouping's name.

    ``"derivation"``: each session's derivation family (``families``, from
    :func:`derivation_families`) when there are at least :data:`MIN_FAMILIES` of them;
    ``"topic"``: otherwise each session's topic family (its fact's ``family``; a session without a
    fact keeps its derivation family). Same-subject sessions share a topic family, so no session
    has an opposite-labelled near-copy in another fold either way.
    """
    groups = [families[s.session_id] for s in sessions]
    if len(set(groups)) >= MIN_FAMILIES:
        return groups, "derivation"
    return [f"topic:{s.fact.family}" if s.fact is not None else g for s, g in zip(sessions, groups)], "topic"


def _word_counts(sessions: Sequence[Session]) -> tuple[np.ndarray, list[str]]:
    """``(counts (sessions, vocabulary), vocabulary)`` of the lower-cased words of every turn."""
    vocab: dict[str, int] = {}
    rows = [
        [vocab.setdefault(w, len(vocab)) for w in re.findall(r"[a-z']+", " ".join(t.text for t in s.turns).lower())]
        for s in sessions
    ]
    counts = np.zeros((len(sessions), len(vocab)))
    for i, row in enumerate(rows):
        np.add.at(counts[i], row, 1.0)
    return counts, list(vocab)


def _log_likelihood(counts: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(2, vocabulary)`` Laplace-smoothed log word probabilities of classes 0 and 1."""
    words = np.stack([counts[y == c].sum(axis=0) + 1.0 for c in (0, 1)])
    return np.log(words / words.sum(axis=1, keepdims=True))


def _predict(counts: np.ndarray, y: np.ndarray, fold_of: np.ndarray) -> np.ndarray:
    """Out-of-fold naive Bayes predictions (0/1 per session)."""
    out = np.zeros_like(y)
    for k in np.unique(fold_of):
        train, test = fold_of != k, fold_of == k
        prior = np.log(np.array([np.mean(y[train] == c) for c in (0, 1)]) + 1e-9)
        out[test] = np.argmax(counts[test] @ _log_likelihood(counts[train], y[train]).T + prior, axis=1)
    return out


def balanced_accuracy(y: np.ndarray, predicted: np.ndarray) -> float:
    """Mean of the per-class recalls; NaN when a class is absent."""
    if y.min() == y.max():
        return float("nan")
    return float(np.mean([np.mean(predicted[y == c] == c) for c in (0, 1)]))


def _family_bootstrap(y, predicted, family_index, rng) -> list[float]:
    """95 % percentile CI of the balanced accuracy, resampling families."""
    members = [np.flatnonzero(family_index == f) for f in np.unique(family_index)]
    stats = []
    for _ in range(BOOTSTRAP):
        pick = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
        stats.append(balanced_accuracy(y[pick], predicted[pick]))
    low, high = np.nanquantile(np.array(stats), [0.025, 0.975])
    return [float(low), float(high)]


def _summary(y, predicted, shuffled, family_index, rng) -> dict[str, Any]:
    """Accuracy, its family-bootstrap CI, and the shuffled baseline's mean and 95 % interval."""
    accuracy = balanced_accuracy(y, predicted)
    if np.isnan(accuracy):
        return {"accuracy": accuracy, "sessions": int(y.size)}
    base = np.array([balanced_accuracy(yp, p) for yp, p in shuffled])
    return {
        "accuracy": accuracy,
        "ci": _family_bootstrap(y, predicted, family_index, rng),
        "shuffled_accuracy": float(np.nanmean(base)),
        "shuffled_interval": [float(x) for x in np.nanquantile(base, [0.025, 0.975])],
        "sessions": int(y.size),
    }


def separability(
    sessions: Sequence[Session],
    families: Sequence[str],
    evidence_types: Sequence[str] | None = None,
    *,
    seed: int = 0,
    folds: int = 5,
    permutations: int = PERMUTATIONS,
) -> dict[str, Any]:
    """How well a text-only classifier tells evidence (label 1) from haystack (0) sessions.

    Args:
        sessions: evidence and haystack sessions, each once.
        families: one family per session (:func:`derivation_families`); a family's sessions
            share a fold. Give each session its own family only to show the leak it removes.
        evidence_types: the evidence type of each session's item (per-type rows), or ``None``.
        seed: draws the folds, permutations and bootstrap resamples.
        folds: cross-validation folds (fewer when there are fewer families).
        permutations: label permutations of the shuffled baseline.

    Returns:
        ``{"accuracy", "ci", "shuffled_accuracy", "shuffled_interval", "permutations", "sessions",
        "families", "folds", "by_evidence": {type: same keys}, "top_features": {"evidence",
        "haystack"}}``; accuracies are balanced (0.5 = chance), ``accuracy`` NaN when a class
        is missing or there are fewer than two families.
    """
    if len(families) != len(sessions) or (evidence_types is not None and len(evidence_types) != len(sessions)):
        raise ValueError(f"separability: {len(families)} families / evidence types for {len(sessions)} sessions")
    y = np.array([s.role == "evidence" for s in sessions], dtype=int)
    family_ids = {f: i for i, f in enumerate(dict.fromkeys(families))}
    family_index = np.array([family_ids[f] for f in families], dtype=int)
    folds = min(folds, len(family_ids))
    if folds < 2 or y.size == 0 or y.min() == y.max():
        return {"accuracy": float("nan"), "sessions": int(y.size), "families": len(family_ids)}
    rng = np.random.default_rng(seed)
    fold_of = (rng.permutation(len(family_ids)) % folds)[family_index]
    counts, vocab = _word_counts(sessions)
    predicted = _predict(counts, y, fold_of)
    shuffled = []
    for _ in range(permutations):
        yp = rng.permutation(y)
        shuffled.append((yp, _predict(counts, yp, fold_of)))
    result = _summary(y, predicted, shuffled, family_index, rng)
    result.update(permutations=permutations, families=len(family_ids), folds=folds)
    if evidence_types is not None:
        types = np.array(evidence_types)
        result["by_evidence"] = {
            t: _summary(y[m], predicted[m], [(yp[m], p[m]) for yp, p in shuffled], family_index[m], rng)
            for t in sorted(set(evidence_types))
            for m in [types == t]
        }
    result["top_features"] = top_features(counts, y, vocab)
    return result


def top_features(counts: np.ndarray, y: np.ndarray, vocab: Sequence[str], n: int = TOP_FEATURES) -> dict[str, list]:
    """The words with the largest log-probability ratio for each class, fitted on every session.

    Returns:
        ``{"evidence": [[word, log ratio, sessions with it], ...], "haystack": [...]}``; only
        words in at least 3 sessions are listed.
    """
    haystack, evidence = _log_likelihood(counts, y)
    ratio = evidence - haystack
    present = (counts > 0).sum(axis=0)
    order = [int(i) for i in np.argsort(-ratio, kind="stable") if present[i] >= 3]
    rows = [[vocab[i], round(float(ratio[i]), 3), int(present[i])] for i in order]
    return {"evidence": rows[:n], "haystack": rows[::-1][:n]}
