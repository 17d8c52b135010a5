"""The AMemOps stream generator (paper section 2), deterministic by (config, seed, index).

Gain and pan are classes ``0..attribute_values-1`` (4: the physical gains and pans of
:mod:`.config`; the symbolic controls use 16 without physical values); an absent source's answer
is class ``attribute_values`` (none).

Per stream the generator *proposes* ``n_initial`` initial-value, ``n_update`` post-update,
``n_interference`` similar-source-interference and ``n_absent`` absent-source queries, each
with its own source identity, then places every proposal's chain of events on the 25 Hz frame
grid without overlap:

* initial: one event (random gain and pan, uniform over the classes), then the query.
* update: one event, then 1..``max_updates`` updates, then the query. Queries ask gain and pan
  in equal numbers. With probability 1/2 the query is *updated* (every update changes the
  queried attribute to one of the other classes; the other changes with probability 1/2),
  otherwise *retained* (every update changes only the other attribute, so the queried one never
  changed although the other did).
  With ``update_queries="both"`` each of ``n_update / 2`` update sources is instead asked gain
  and pan in two separate queries (each update changes gain, pan or both; the changed attribute
  is *updated*, an unchanged one *retained*). With ``update_queries="joint"`` the two are one
  *joint* query (the symbolic task's joint queries): a single query event asking both attributes,
  scored per attribute as two task items on the same frames (``annotations["joint"] = True``; the
  query event carries the first item's id, both items its ``query_event``).
* interference: an event of the target, then an event of a *similar* source (upper
  correlation quartile of mean spectra) whose queried attribute differs, then the query.
* absent: only a query, about a source that never occurs in the stream (answer: none).

With ``value_repeats`` = (a, b) the first event of every chain with a history (initial, update,
interference) is heard ``r`` times, ``r`` uniform in a..b per chain, before the chain's next event:
the same source, gain and pan, each repeat its own excerpt, ``offset_seconds`` between them. An
update's superseded value is then written ``r`` times and its new value once; initial chains get
the same distribution, so the number of writes does not reveal the query type. The default (1, 1)
draws nothing (the streams of earlier versions).

Onset offsets between consecutive events of a chain are log-uniform in ``offset_seconds``
(2-60 s), the last one (to the query) in ``query_offset_seconds`` when given; a chain's start is
uniform over the positions where it fits. With ``max_intervening`` = k >= 0 a position also has to
keep at most k other sources' events (queries not counted) between every placed query's source's
last event and that query, the new chain's own queries included: this bounds the cross-talk of
other writes equally for every query type (an interference partner is one such event). A proposal
that does not fit after ``placement_attempts`` tries is dropped and counted in ``annotations["dropped"]``.
With ``gap_distractors`` = k > 0, k one-off events of new, never-queried sources are then put inside
every query's gap (after its source's last event ends, before the query), each at a uniform free
onset there (``gap_distractor_draw="uniform"``: 0..k per query; from the queried source's similar or
dissimilar pool when ``distractor_similarity`` says so): every query type meets other sources' writes
since its answer was last heard equally often. Then ``distractors`` (one count drawn per stream) other sources appear once each at free
positions, drawn from the queried sources' similar or dissimilar pools when
``distractor_similarity`` asks (``mixed``: one policy drawn per stream). Excerpts last ``excerpt_frames`` (18-32) frames, queries ``query_frames`` (12) at -3 dB
and centre pan. The stream length is always ``frames``; settings that cannot fit raise
:class:`~memgym.core.errors.ConfigError`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from numpy.random import Generator

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.seeding import config_hash, episode_rng
from memgym.datasets.amemops.config import (
    FRAME_RATE,
    GAINS_DB,
    HOP,
    PANS,
    PHYSICAL_VALUES,
    StreamConfig,
)
from memgym.datasets.amemops.controls import apply_recording_control
from memgym.datasets.amemops.distractors import distractor_identities, gap_distractors
from memgym.datasets.amemops.placement import Occupancy
from memgym.datasets.amemops.query_items import query_item
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.datasets.sources.library import SourceLibrary
from memgym.datasets.sources.similarity import SimilarityPools


def pool_splits(library: SourceLibrary) -> tuple[str, ...]:
    """Splits that define similarity pools: calibration when present, else train + eval."""
    splits = library.splits()
    if "calibration" in splits:
        return ("calibration",)
    return tuple(s for s in ("train", "eval") if s in splits)


class StreamGenerator:
    """Builds :class:`AMemOpsStream` records from a :class:`StreamConfig` and a library.

    Args:
        config: generator settings.
        library: source library (its ``config.split`` recordings are used).
        pools: similarity pools; computed from the library when needed and not given.
    Raises:
        ConfigError: the split has too few identities for the proposals and distractors.
    """

    def __init__(self, config: StreamConfig, library: SourceLibrary, pools: SimilarityPools | None = None) -> None:
        self.config = config
        self.library = library
        self.identities = library.identities(config.split)
        if len(self.identities) < config.identities_needed():
            raise ConfigError(
                f"{library.name} split '{config.split}' has {len(self.identities)} identities, but the stream "
                f"settings need {config.identities_needed()} distinct ones (queries + interference partners + distractors)"
            )
        needs_pools = config.n_interference > 0 or config.distractor_similarity != "any"
        self.pools = (
            pools
            if pools is not None or not needs_pools
            else SimilarityPools.for_library(library, pool_splits(library), cache_dir=library.cache_dir)
        )
        plan_config = config.key()
        plan_config["recordings"] = "original"  # controls share the plan of the original stream
        self.digest = config_hash({"stream": plan_config, "library": library.fingerprint()})

    # ----- public ---------------------------------------------------------------------------
    def generate(self, seed: int, index: int) -> AMemOpsStream:
        """Stream ``index`` of the run with ``seed`` (identical for identical arguments)."""
        rng = episode_rng(self.digest, seed, index)
        stream = self._plan(rng, episode_id=f"amemops-{self.config.split}-s{seed}-{index:06d}")
        stream = apply_recording_control(stream, self.config.recordings, self.library)
        return stream

    # ----- planning ---------------------------------------------------------------------------
    # Over 60 lines on purpose: every random draw of a stream happens here in one fixed order
    # (saved datasets depend on it); splitting it would spread that order over helpers.
    def _plan(self, rng: np.random.Generator, episode_id: str) -> AMemOpsStream:
        cfg = self.config
        order = list(self.identities)
        rng.shuffle(order)
        used: set[str] = set()
        dropped = {"initial": 0, "update": 0, "interference": 0, "absent": 0, "distractor": 0}
        proposals: list[dict] = []

        def take_identity(candidates: list[str] | None = None) -> str | None:
            pool = [i for i in (order if candidates is None else candidates) if i not in used]
            if not pool:
                return None
            choice = pool[0] if candidates is None else pool[int(rng.integers(len(pool)))]
            used.add(choice)
            return choice

        for _ in range(cfg.n_interference):
            pair = self._interference_pair(rng, order, used)
            if pair is None:
                dropped["interference"] += 1
                continue
            used.update(pair)
            proposals.append(self._interference(rng, *pair))
        if cfg.update_queries != "one":
            for _ in range(cfg.n_update // 2):
                proposals.append(self._update_both(rng, take_identity(), joint=cfg.update_queries == "joint"))
        else:
            update_attrs = ["gain", "pan"] * (cfg.n_update // 2) + [str(rng.choice(["gain", "pan"]))] * (
                cfg.n_update % 2
            )
            rng.shuffle(update_attrs)
            for attribute in update_attrs:
                proposals.append(self._update(rng, take_identity(), attribute))
        for _ in range(cfg.n_initial):
            proposals.append(self._initial(rng, take_identity()))
        for _ in range(cfg.n_absent):
            proposals.append(self._absent(rng, take_identity()))

        occupancy = Occupancy(cfg.frames, cfg.max_intervening)
        placed: list[tuple[dict, list[int]]] = []
        for k in rng.permutation(len(proposals)):
            proposal = proposals[int(k)]
            sources = [h[0] for h in proposal["history"]]
            sources += [None] * (len(proposal["lengths"]) - len(sources))
            onsets = self._place_chain(rng, occupancy, proposal["lengths"], sources)
            if onsets is None:
                dropped[proposal["type"]] += len(proposal["queries"])
            else:
                placed.append((proposal, onsets))

        distractor_events = gap_distractors(
            rng,
            cfg,
            occupancy,
            placed,
            (used, order, self.pools),
            lambda: self._excerpt_length(rng),
            lambda identity, onset, length: self._event(
                rng, identity, "distractor", onset, length, *self._random_attributes(rng)
            ),
            dropped,
        )
        n_distractors = int(rng.choice(np.asarray(cfg.distractors)))
        policy = cfg.distractor_similarity
        if policy == "mixed":
            policy = str(rng.choice(["any", "similar", "dissimilar"]))
        anchors = [p["identity"] for p, _ in placed]
        for identity in distractor_identities(rng, n_distractors, order, used, anchors, policy, self.pools):
            length = self._excerpt_length(rng)
            onsets = self._place_chain(rng, occupancy, [length], [identity])
            if onsets is None:
                dropped["distractor"] += 1
                continue
            distractor_events.append(
                self._event(rng, identity, "distractor", onsets[0], length, *self._random_attributes(rng))
            )
        stream = self._assemble(rng, episode_id, placed, distractor_events, n_distractors, dropped)
        stream.annotations["distractor_similarity"] = policy
        return stream

    def _excerpt_length(self, rng: np.random.Generator) -> int:
        lo, hi = self.config.excerpt_frames
        return int(rng.integers(lo, hi + 1))

    def _random_attributes(self, rng: np.random.Generator) -> tuple[int, int]:
        """Uniform ``(gain, pan)`` classes in ``0..attribute_values-1``."""
        values = self.config.attribute_values
        return int(rng.integers(values)), int(rng.integers(values))

    def _other_value(self, rng: np.random.Generator, value: int) -> int:
        """A class other than ``value``, uniform over the ``attribute_values - 1`` others."""
        return int(rng.choice([v for v in range(self.config.attribute_values) if v != value]))

    def _chain(
        self,
        rng: Generator,
        kind: str,
        identity: str,
        queries: list[tuple[str, str]],
        history: list[tuple[str, str, int, int]],
        extra: dict | None = None,
    ) -> dict:
        """A proposal: ``history`` [(identity, role, gain_idx, pan_idx)] then ``queries`` [(attribute, operation)]."""
        query_events = 1 if (extra or {}).get("joint") else len(queries)
        lengths = [self._excerpt_length(rng) for _ in history] + [self.config.query_frames] * query_events
        return {
            "type": kind,
            "identity": identity,
            "queries": queries,
            "history": history,
            "lengths": lengths,
            **(extra or {}),
        }

    def _repeat_first(
        self, rng: Generator, history: list[tuple[str, str, int, int]]
    ) -> list[tuple[str, str, int, int]]:
        """``history`` with its first event heard ``value_repeats`` times (uniform count, the same
        identity, role, gain and pan); no draw at the default (1, 1), so earlier streams are unchanged."""
        low, high = self.config.value_repeats
        if high == 1:
            return history
        count = int(rng.integers(low, high + 1))
        return [history[0]] * count + history[1:]

    def _initial(self, rng: Generator, identity: str) -> dict:
        g, p = self._random_attributes(rng)
        attribute = str(rng.choice(["gain", "pan"]))
        history = self._repeat_first(rng, [(identity, "target", g, p)])
        return self._chain(rng, "initial", identity, [(attribute, "initial")], history)

    def _update(self, rng: Generator, identity: str, attribute: str) -> dict:
        g, p = self._random_attributes(rng)
        history = [(identity, "target", g, p)]
        operation = "updated" if rng.random() < 0.5 else "retained"
        for _ in range(int(rng.integers(1, self.config.max_updates + 1))):
            change_gain = (attribute == "gain") == (operation == "updated")
            if operation == "updated" and rng.random() < 0.5:  # the other attribute may change too
                g, p = self._other_value(rng, g), self._other_value(rng, p)
            elif change_gain:
                g = self._other_value(rng, g)
            else:
                p = self._other_value(rng, p)
            history.append((identity, "target", g, p))
        history = self._repeat_first(rng, history)
        return self._chain(rng, "update", identity, [(attribute, operation)], history)

    def _update_both(self, rng: Generator, identity: str, *, joint: bool = False) -> dict:
        """An update source asked gain and pan in two separate queries (``update_queries="both"``),
        or in one joint query (``joint``).

        Each update changes gain, pan or both (uniformly); an attribute that ever changed is
        *updated*, the other (never changed while this one did) *retained*.
        """
        g, p = self._random_attributes(rng)
        history = [(identity, "target", g, p)]
        changed = {"gain": False, "pan": False}
        for _ in range(int(rng.integers(1, self.config.max_updates + 1))):
            kind = str(rng.choice(["gain", "pan", "both"]))
            if kind in ("gain", "both"):
                g, changed["gain"] = self._other_value(rng, g), True
            if kind in ("pan", "both"):
                p, changed["pan"] = self._other_value(rng, p), True
            history.append((identity, "target", g, p))
        order = ["gain", "pan"] if rng.random() < 0.5 else ["pan", "gain"]
        queries = [(a, "updated" if changed[a] else "retained") for a in order]
        history = self._repeat_first(rng, history)
        return self._chain(rng, "update", identity, queries, history, {"joint": True} if joint else None)

    def _interference(self, rng: Generator, target: str, partner: str) -> dict:
        g, p = self._random_attributes(rng)
        attribute = str(rng.choice(["gain", "pan"]))
        gi, pi = self._random_attributes(rng)
        if attribute == "gain":
            gi = self._other_value(rng, g)
        else:
            pi = self._other_value(rng, p)
        history = self._repeat_first(rng, [(target, "target", g, p), (partner, "interferer", gi, pi)])
        return self._chain(rng, "interference", target, [(attribute, "interference")], history, {"partner": partner})

    def _absent(self, rng: Generator, identity: str) -> dict:
        attribute = str(rng.choice(["gain", "pan"]))
        return self._chain(rng, "absent", identity, [(attribute, "absent")], [])

    def _interference_pair(self, rng: Generator, order: list[str], used: set[str]) -> tuple[str, str] | None:
        assert self.pools is not None
        for target in order:
            if target in used or target not in self.pools.identities:
                continue
            partners = [s for s in self.pools.similar(target) if s not in used and s in self.identities]
            if partners:
                return target, partners[int(rng.integers(len(partners)))]
        return None

    def _place_chain(
        self, rng: Generator, occupancy: Occupancy, lengths: list[int], sources: list[str | None]
    ) -> list[int] | None:
        """Onsets of a chain of events of ``lengths`` frames (``sources``: each event's identity, None
        for a query), placed without overlap and within ``max_intervening``; None after
        ``placement_attempts`` failed tries."""
        cfg = self.config
        ranges = [cfg.offset_seconds] * (len(lengths) - 2) + [cfg.query_offsets()] * (len(lengths) > 1)
        log_ranges = [(math.log(low * FRAME_RATE), math.log(high * FRAME_RATE)) for low, high in ranges]
        for _ in range(cfg.placement_attempts):
            offsets = [round(math.exp(rng.uniform(low, high))) for low, high in log_ranges]
            span = sum(offsets) + lengths[-1]
            if span > cfg.frames:
                continue
            start = int(rng.integers(0, cfg.frames - span + 1))
            onsets = list(itertools.accumulate(offsets, initial=start))
            if all(occupancy.free(o, n) for o, n in zip(onsets, lengths)) and occupancy.admits(onsets, sources):
                for o, n in zip(onsets, lengths):
                    occupancy.take(o, n)
                occupancy.record(onsets, sources)
                return onsets
        return None

    # ----- events ----------------------------------------------------------------------------
    def _event(
        self,
        rng: Generator,
        identity: str,
        role: str,
        onset: int,
        frames: int,
        gain_index: int,
        pan_index: int,
        group: str = "",
        gain_db: float | None = None,
        pan: float | None = None,
    ) -> StreamEvent:
        """One event; its gain and pan are ``gain_db``/``pan`` when given (queries), else the classes
        ``gain_index``/``pan_index`` — physical values with 4 attribute values, stored indices otherwise."""
        recording_id, start = self.pick_excerpt(rng, identity, frames)
        if gain_db is not None or self.config.attribute_values == PHYSICAL_VALUES:
            values = {
                "gain_db": float(GAINS_DB[gain_index] if gain_db is None else gain_db),
                "pan": float(PANS[pan_index] if pan is None else pan),
            }
        else:
            values = {"gain_index": gain_index, "pan_index": pan_index}
        return StreamEvent(
            identity=identity,
            role=role,
            onset_frame=int(onset),
            frames=int(frames),
            recording_id=recording_id,
            start_sample=start,
            group=group,
            **values,
        )

    def pick_excerpt(self, rng: np.random.Generator, identity: str, frames: int) -> tuple[str, int]:
        """A random recording of ``identity`` and an excerpt start fitting ``frames`` frames."""
        ids = self.library.recording_ids(identity, self.config.split)
        if not ids:
            raise MemgymError(f"{self.library.name}: identity '{identity}' has no '{self.config.split}' recordings")
        recording_id = ids[int(rng.integers(len(ids)))]
        return recording_id, excerpt_start(self.library, recording_id, frames, rng)

    # Over 60 lines on purpose: the events, items and labels of one stream are written in the
    # generator's fixed draw order (saved datasets depend on it).
    def _assemble(
        self,
        rng: Generator,
        episode_id: str,
        placed: list[tuple[dict, list[int]]],
        distractor_events: list[StreamEvent],
        n_distractors: int,
        dropped: dict[str, int],
    ) -> AMemOpsStream:
        cfg = self.config
        events: list[StreamEvent] = list(distractor_events)
        queries = []
        for number, (proposal, onsets) in enumerate(placed):
            group = f"{proposal['type']}-{number:02d}"
            history = []
            for (identity, role, g, p), onset, length in zip(proposal["history"], onsets, proposal["lengths"]):
                history.append(self._event(rng, identity, role, onset, length, g, p, group=group))
            events += history
            own = [e for e in history if e.identity == proposal["identity"]]
            query_onsets = onsets[len(history) :]
            if proposal.get("joint"):  # one query event asks every attribute
                query_onsets = query_onsets * len(proposal["queries"])
            for (attribute, operation), onset in zip(proposal["queries"], query_onsets):
                if proposal.get("joint") and queries and queries[-1][1] is proposal:
                    queries.append((queries[-1][0], proposal, attribute, operation, own))
                    continue
                query = self._event(
                    rng,
                    proposal["identity"],
                    "query",
                    onset,
                    cfg.query_frames,
                    0,
                    0,
                    group=group,
                    gain_db=cfg.query_gain_db,
                    pan=0.5,
                )
                queries.append((query, proposal, attribute, operation, own))
        queries.sort(key=lambda item: item[0].onset_frame)
        items = []
        event_ids: dict[int, str] = {}  # id(query event) -> its query id (the first item's)
        for k, (query, proposal, attribute, operation, own) in enumerate(queries):
            query_id = f"q{k:02d}"
            if id(query) not in event_ids:
                event_ids[id(query)] = query_id
                events.append(dataclasses.replace(query, query_id=query_id))
            items.append(query_item(query_id, query, proposal, attribute, operation, own, cfg.attribute_values))
            if proposal.get("joint"):
                items[-1].annotations.update(joint=True, query_event=event_ids[id(query)])
        events.sort(key=lambda e: (e.onset_frame, e.role))
        return AMemOpsStream(
            episode_id=episode_id,
            benchmark="amemops",
            items=tuple(items),
            annotations={
                "generator": self.digest,
                "distractors_requested": n_distractors,
                "distractors": sum(e.role == "distractor" for e in events),
                "dropped": dropped,
                "proposed": {
                    "initial": cfg.n_initial,
                    "update": cfg.n_update,
                    "interference": cfg.n_interference,
                    "absent": cfg.n_absent,
                },
            },
            frames=cfg.frames,
            library=self.library.fingerprint(),
            split=cfg.split,
            events=tuple(events),
            noise_seed=int(rng.integers(2**62)),
            noise_db=cfg.noise_db,
            rms=cfg.rms,
            fade_ms=cfg.fade_ms,
            attribute_values=cfg.attribute_values,
        )


def excerpt_start(library: SourceLibrary, recording_id: str, frames: int, rng: np.random.Generator) -> int:
    """Excerpt start sample: uniform where the recording allows (``excerpt_start == "random"``), else 0.

    Raises:
        MemgymError: the recording is shorter than the excerpt.
    """
    need = frames * HOP
    available = library.num_samples(recording_id)
    if available < need:
        raise MemgymError(
            f"{library.name}: recording '{recording_id}' has {available} samples "
            f"({available / 16000:.2f} s), shorter than a {frames}-frame excerpt ({need / 16000:.2f} s)"
        )
    if library.info(recording_id).excerpt_start == "zero":
        return 0
    return int(rng.integers(0, available - need + 1))
