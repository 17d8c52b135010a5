"""Which sources a stream's distractors are and where gap distractors go, for
:class:`~memgym.datasets.amemops.generator.StreamGenerator`.

Distractors are sources never queried, heard once each: ``StreamConfig.distractors`` of them at free
positions anywhere, and ``StreamConfig.gap_distractors`` inside every query's gap (after its source's
last event ends, before the query). Both take sources similar or dissimilar to a queried one when
``distractor_similarity`` asks. Every random draw is made in the order the generator always made it, so
saved streams stay the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.placement import Occupancy
from memgym.datasets.amemops.records import StreamEvent
from memgym.datasets.sources.similarity import SimilarityPools

NEW_SOURCE = "\x00a source not yet in the stream"
"""Stand-in identity of a gap distractor while its onset is chosen (it only has to differ from every
placed source)."""


def _related(pool: list[str], anchor: str, policy: str, pools: SimilarityPools) -> list[str]:
    """The members of ``pool`` in ``anchor``'s similar or dissimilar pool (``policy``), else ``pool``."""
    related = set(pools.similar(anchor) if policy == "similar" else pools.dissimilar(anchor))
    return [i for i in pool if i in related] or pool


def distractor_identities(
    rng: np.random.Generator,
    count: int,
    order: list[str],
    used: set[str],
    anchors: list[str],
    policy: str,
    pools: SimilarityPools | None,
) -> list[str]:
    """Up to ``count`` unused sources (marked used), each uniform among the unused ones, or among those
    similar/dissimilar (``policy``) to a uniformly drawn anchor (a queried source) when there are any."""
    chosen: list[str] = []
    for _ in range(count):
        pool = [i for i in order if i not in used]
        if policy != "any" and anchors and pools is not None:
            pool = _related(pool, anchors[int(rng.integers(len(anchors)))], policy, pools)
        if not pool:
            break
        identity = pool[int(rng.integers(len(pool)))]
        used.add(identity)
        chosen.append(identity)
    return chosen


def _gap_identity(
    queried: str, used: set[str], order: list[str], policy: str, pools: SimilarityPools | None
) -> str | None:
    """The first unused source in ``order`` (of ``queried``'s similar or dissimilar pool when ``policy``
    asks and one is left), marked used; None when none is left."""
    pool = [i for i in order if i not in used]
    if policy in ("similar", "dissimilar") and pools is not None and queried in pools.identities:
        pool = _related(pool, queried, policy, pools)
    if not pool:
        return None
    used.add(pool[0])
    return pool[0]


def gap_distractors(
    rng: np.random.Generator,
    config: StreamConfig,
    occupancy: Occupancy,
    placed: list[tuple[dict, list[int]]],
    sources: tuple[set[str], list[str], SimilarityPools | None],
    draw_length: Callable[[], int],
    new_event: Callable[[str, int, int], StreamEvent],
    dropped: dict[str, int],
) -> list[StreamEvent]:
    """``config.gap_distractors`` (with ``gap_distractor_draw="uniform"``: 0..that many, uniform per
    query) events of new sources inside every placed query's gap, from the end of its source's last
    event to the query onset, each at a uniform free onset there; a gap without room or sources keeps
    fewer (``dropped["gap_distractor"]``). ``sources``: (used, order, pools) of the stream; ``new_event``
    makes the event ``(identity, onset, length)``. Nothing is drawn at the default 0."""
    if config.gap_distractors == 0:
        return []
    used, order, pools = sources
    uniform = config.gap_distractor_draw == "uniform"
    dropped["gap_distractor"] = 0
    events = []
    for proposal, onsets in placed:
        history = proposal["history"]
        own = [(o, n) for (i, *_), o, n in zip(history, onsets, proposal["lengths"]) if i == proposal["identity"]]
        if not own:  # an absent-source query: no gap
            continue
        last_end = sum(own[-1])
        for query_onset in onsets[len(history) :]:
            count = int(rng.integers(config.gap_distractors + 1)) if uniform else config.gap_distractors
            for _ in range(count):
                length = draw_length()
                fits = [
                    o
                    for o in range(last_end, query_onset - length + 1)
                    if occupancy.free(o, length) and occupancy.admits([o], [NEW_SOURCE])
                ]
                similarity = config.distractor_similarity
                identity = _gap_identity(proposal["identity"], used, order, similarity, pools) if fits else None
                if identity is None:
                    dropped["gap_distractor"] += 1
                    continue
                onset = fits[int(rng.integers(len(fits)))]
                occupancy.take(onset, length)
                occupancy.record([onset], [identity])
                events.append(new_event(identity, onset, length))
    return events
