"""Acoustic tags of the turns of one history: speaker labels and paralinguistic cues.

**Speakers.** Every user turn (and the question, spoken by the asker) has a voice vector
(MFCC statistics, :func:`~memgym.datasets.speech.turn_features.measure_turn`). The vectors of
one history are standardised and clustered agglomeratively (average linkage, Euclidean); the
number of speakers is the one from 2 to :data:`MAX_SPEAKERS` with the best silhouette score.
Speaker labels are ``A``, ``B``, ... in order of first appearance.

**Cues.** Each turn is compared with its own speaker's typical turn (the median over that
speaker's turns), so a naturally fast talker is not tagged "fast". Scores (positive = present):

=============  ======================================================
cue word       score
=============  ======================================================
fast           (rate ratio - 1.25) / 0.15, rate = words per active second
slow           (0.8 - rate ratio) / 0.1
surprised      (pitch ratio - 1.2) / 0.1
hesitant       (pause share - speaker's - 0.08) / 0.05, +1 when the words hold um/uh/er
emphatic       (prominence - speaker's - 2 dB) / 1 dB
laughing       (tail pitch ratio - 1.25) / 0.1, only when the last second is modulated (> 0.3)
=============  ======================================================

The highest positive score names the cue; none positive gives ``"calm and neutral"``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.speech.turn_features import cue_scores

MAX_SPEAKERS = 6
NEUTRAL = CUE_WORDS["neutral"]


def silhouette(distances: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of a clustering from its ``(n, n)`` distance matrix (singletons score 0)."""
    scores = []
    for i, label in enumerate(labels):
        same = labels == label
        if same.sum() <= 1:
            scores.append(0.0)
            continue
        inside = distances[i, same].sum() / (same.sum() - 1)
        outside = min(distances[i, labels == other].mean() for other in set(labels.tolist()) - {label})
        scores.append((outside - inside) / max(inside, outside, 1e-12))
    return float(np.mean(scores))


def speaker_labels(voices: Sequence[Sequence[float]]) -> list[str]:
    """``A``, ``B``, ... per voice vector (see the module docstring); one vector gives ``["A"]``."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist, squareform

    x = np.asarray(voices, dtype=np.float64)
    if len(x) < 3:
        return ["A", "B"][: len(x)] if len(x) == 2 and np.linalg.norm(x[0] - x[1]) > 0 else ["A"] * len(x)
    x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-9)
    condensed = pdist(x)
    tree = linkage(condensed, method="average")
    distances = squareform(condensed)
    best, best_score = np.zeros(len(x), int), -1.0
    for k in range(2, min(MAX_SPEAKERS, len(x) - 1) + 1):
        labels = fcluster(tree, k, criterion="maxclust")
        if len(set(labels.tolist())) < 2:
            continue
        score = silhouette(distances, labels)
        if score > best_score + 1e-9:
            best, best_score = labels, score
    names: dict[int, str] = {}
    for label in best:
        names.setdefault(int(label), chr(ord("A") + len(names)))
    return [names[int(label)] for label in best]


def cue_tags(measures: Sequence[dict], speakers: Sequence[str], words: Sequence[str]) -> list[str]:
    """The cue word of each turn (``measures`` from ``measure_turn`` plus ``"rate"``)."""
    keys = ("rate", "f0_hz", "pause", "prominence_db")
    typical: dict[str, dict] = {}
    for speaker in set(speakers):
        mine = [m for m, s in zip(measures, speakers) if s == speaker]
        typical[speaker] = {k: float(np.nanmedian([m[k] for m in mine])) if mine else float("nan") for k in keys}
    tags = []
    for measure, speaker, text in zip(measures, speakers, words):
        scores = cue_scores(measure, typical[speaker], text)
        cue, score = max(scores.items(), key=lambda item: (item[1], item[0]))
        tags.append(cue if score > 0 else NEUTRAL)
    return tags
