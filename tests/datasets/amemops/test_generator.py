import dataclasses

import numpy as np
import pytest

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.records import from_json
from memgym.datasets.amemops.config import GAINS_DB, NONE_INDEX, PANS, StreamConfig
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.sources.similarity import SimilarityPools


@pytest.fixture(scope="module")
def generator(tones):
    return StreamGenerator(StreamConfig(), tones, SimilarityPools(tones, recordings_per_identity=1))


@pytest.fixture(scope="module")
def streams(generator):
    return [generator.generate(seed=3, index=i) for i in range(12)]


def _index(event, attribute):
    return GAINS_DB.index(event.gain_db) if attribute == "gain" else PANS.index(event.pan)


def test_durations_nonoverlap_and_length(streams):
    for stream in streams:
        assert stream.frames == 2048
        taken = np.zeros(stream.frames, dtype=int)
        for event in stream.events:
            assert event.onset_frame >= 0 and event.end_frame <= 2048
            assert event.frames == 12 if event.role == "query" else 18 <= event.frames <= 32
            taken[event.onset_frame : event.end_frame] += 1
            if event.role == "query":
                assert event.gain_db == -3.0 and event.pan == 0.5
            else:
                assert event.gain_db in GAINS_DB and event.pan in PANS
        assert taken.max() == 1


def test_query_counts_and_drops(streams):
    for stream in streams:
        counts = {t: 0 for t in ("initial", "update", "interference", "absent")}
        for item in stream.items:
            counts[item.annotations["type"]] += 1
        for kind, proposed in stream.annotations["proposed"].items():
            assert counts[kind] + stream.annotations["dropped"][kind] == proposed
        assert stream.annotations["distractors_requested"] in (4, 8, 16)
        assert (
            stream.annotations["distractors"] + stream.annotations["dropped"]["distractor"]
            == stream.annotations["distractors_requested"]
        )
        assert sum(e.role == "distractor" for e in stream.events) == stream.annotations["distractors"]
        assert [i.annotations["onset_frame"] for i in stream.items] == sorted(
            i.annotations["onset_frame"] for i in stream.items
        )
    total = sum(len(s.items) for s in streams)
    assert total > 12 * 15  # most of the 26 proposals fit


def test_update_queries_ask_gain_and_pan_equally(generator):
    attributes = []
    for i in range(30):
        stream = generator.generate(seed=0, index=i)
        dropped = stream.annotations["dropped"]["update"]
        asked = [it.annotations["attribute"] for it in stream.items if it.annotations["type"] == "update"]
        if dropped == 0:
            assert asked.count("gain") == asked.count("pan") == 4
        attributes += asked
    assert abs(attributes.count("gain") / len(attributes) - 0.5) < 0.1


def test_answers_operations_and_delays(streams, generator):
    ops = []
    for stream in streams:
        for item in stream.items:
            a = item.annotations
            query = next(e for e in stream.events if e.query_id == item.item_id)
            assert query.identity == a["identity"] and query.onset_frame == a["onset_frame"]
            assert a["end_frame"] == query.end_frame - 1
            own = [e for e in stream.events if e.identity == a["identity"] and e.role == "target"]
            group = [e for e in stream.events if e.group == a["group"]]
            if a["type"] == "absent":
                assert item.answer == NONE_INDEX and a["delay_s"] is None
                assert all(e.role == "query" for e in stream.events if e.identity == a["identity"])
                continue
            latest = own[-1]
            assert all(e.end_frame <= query.onset_frame for e in own)
            assert item.answer == _index(latest, a["attribute"])
            assert a["delay_s"] == pytest.approx((query.end_frame - latest.end_frame) / 25)
            onsets = [e.onset_frame for e in group]
            assert all(2 * 25 - 1 <= b - o <= 60 * 25 + 1 for o, b in zip(onsets, onsets[1:]))  # log-uniform 2-60 s
            other = "pan" if a["attribute"] == "gain" else "gain"
            asked_values = {_index(e, a["attribute"]) for e in own}
            other_values = [_index(e, other) for e in own]
            if a["type"] == "initial":
                assert len(own) == 1 and a["operation"] == "initial"
            elif a["type"] == "update":
                assert len(own) >= 2
                changes = [_index(x, a["attribute"]) != _index(y, a["attribute"]) for x, y in zip(own, own[1:])]
                if a["operation"] == "updated":
                    assert all(changes)
                    assert a["previous_index"] == _index(own[-2], a["attribute"]) != item.answer
                else:
                    assert a["operation"] == "retained"
                    assert len(asked_values) == 1 and len(set(other_values)) > 1
                    assert a["previous_index"] is None
            elif a["type"] == "interference":
                partner = [e for e in group if e.role == "interferer"]
                assert len(own) == 1 and len(partner) == 1
                assert own[0].end_frame <= partner[0].onset_frame < query.onset_frame
                assert partner[0].identity in generator.pools.similar(a["identity"])
                assert _index(partner[0], a["attribute"]) != item.answer
            ops.append(a["operation"])
    assert {"initial", "updated", "retained", "interference"} <= set(ops)


def test_identities_distinct_across_roles(streams):
    for stream in streams:
        by_group = {}
        for event in stream.events:
            key = event.group or f"distractor-{event.identity}"
            by_group.setdefault(event.identity, set()).add(key)
        assert all(len(groups) == 1 for groups in by_group.values())


def test_deterministic_and_round_trip(generator, tones):
    a = generator.generate(seed=7, index=2)
    again = StreamGenerator(StreamConfig(), tones, generator.pools).generate(seed=7, index=2)
    assert a == again
    assert a != generator.generate(seed=7, index=3)
    assert a != generator.generate(seed=8, index=2)
    assert from_json(a.to_json()) == a


def test_impossible_settings_raise_clear_errors(tones):
    with pytest.raises(ConfigError, match="impossible stream settings.*frames=200"):
        StreamConfig(frames=200)
    with pytest.raises(ConfigError, match="excerpt_frames"):
        StreamConfig(excerpt_frames=(30, 20))
    with pytest.raises(ConfigError, match="offset_seconds min"):
        StreamConfig(offset_seconds=(0.5, 60.0))
    small = StreamConfig(n_absent=15)
    with pytest.raises(ConfigError, match="has 60 identities.*need 61"):
        StreamGenerator(small, tones)


def test_clip_shorter_than_excerpt_is_named(tones):
    short = type(tones)(seconds=1.0)
    generator = StreamGenerator(StreamConfig(), short, SimilarityPools(short, recordings_per_identity=1))
    with pytest.raises(
        MemgymError, match=r"recording 'tone\d\d-train-\d' has 16000 samples.*shorter than a \d+-frame excerpt"
    ):
        generator.generate(seed=0, index=0)


def test_distractor_similarity_policies(tones, generator):
    for policy in ("similar", "dissimilar"):
        config = StreamConfig(distractor_similarity=policy, distractors=(4,))
        stream = StreamGenerator(config, tones, generator.pools).generate(seed=0, index=0)
        anchors = {i.annotations["identity"] for i in stream.items if i.annotations["type"] != "absent"}
        pool = set()
        for anchor in anchors:
            pool |= set(generator.pools.similar(anchor) if policy == "similar" else generator.pools.dissimilar(anchor))
        distractors = [e.identity for e in stream.events if e.role == "distractor"]
        assert distractors and set(distractors) <= pool
    mixed = StreamGenerator(StreamConfig(distractor_similarity="mixed"), tones, generator.pools)
    assert {mixed.generate(0, i).annotations["distractor_similarity"] for i in range(30)} == {
        "any",
        "similar",
        "dissimilar",
    }


def test_update_queries_both_asks_gain_and_pan_of_each_update_source(tones, generator):
    config = StreamConfig(update_queries="both")
    both = StreamGenerator(config, tones, generator.pools)
    seen_ops = set()
    for i in range(6):
        stream = both.generate(seed=0, index=i)
        updates = [it for it in stream.items if it.annotations["type"] == "update"]
        assert len(updates) + stream.annotations["dropped"]["update"] == 8
        by_group = {}
        for item in updates:
            by_group.setdefault(item.annotations["group"], []).append(item)
        for items in by_group.values():
            assert sorted(it.annotations["attribute"] for it in items) == ["gain", "pan"]
            own = [e for e in stream.events if e.group == items[0].annotations["group"] and e.role == "target"]
            for item in items:
                a = item.annotations
                values = {_index(e, a["attribute"]) for e in own}
                assert (len(values) > 1) == (a["operation"] == "updated")
                assert item.answer == _index(own[-1], a["attribute"])
                seen_ops.add(a["operation"])
            assert any(it.annotations["operation"] == "updated" for it in items)
    assert seen_ops == {"updated", "retained"}
    with pytest.raises(ConfigError, match="n_update must be even"):
        StreamConfig(update_queries="both", n_update=7)


@pytest.fixture(scope="module")
def sixteen(tones, generator):
    config = StreamConfig(attribute_values=16, update_queries="both", max_updates=3)
    return StreamGenerator(config, tones, generator.pools)


def test_sixteen_values_cover_all_classes_and_keep_the_planned_relations(sixteen):
    streams = [sixteen.generate(seed=0, index=i) for i in range(8)]
    seen = {"gain": set(), "pan": set()}
    most_per_stream = 0
    for stream in streams:
        assert stream.attribute_values == 16
        sources = [e for e in stream.events if e.role != "query"]
        assert all(e.gain_db is None and e.pan is None for e in sources)
        for attribute in seen:
            values = {e.attribute_class(attribute) for e in sources}
            assert values <= set(range(16))
            seen[attribute] |= values
            most_per_stream = max(most_per_stream, len(values))
        for item in stream.items:
            a = item.annotations
            assert 0 <= item.answer <= 16
            own = [e for e in stream.events if e.group == a["group"] and e.role == "target"]
            if a["type"] == "absent":
                assert item.answer == 16 and not own
                continue
            assert item.answer == own[-1].attribute_class(a["attribute"]) < 16
            if a["operation"] == "updated":
                assert a["previous_index"] is not None and a["previous_index"] != item.answer
            elif a["operation"] == "retained":
                assert {e.attribute_class(a["attribute"]) for e in own} == {item.answer}
            elif a["operation"] == "interference":
                partner = next(e for e in stream.events if e.group == a["group"] and e.role == "interferer")
                assert partner.attribute_class(a["attribute"]) != item.answer
    assert seen == {"gain": set(range(16)), "pan": set(range(16))}
    assert most_per_stream > 4  # a stream is not limited to four values of an attribute


def test_sixteen_values_are_deterministic_and_round_trip(sixteen, tones, generator):
    a = sixteen.generate(seed=5, index=1)
    assert a == StreamGenerator(sixteen.config, tones, generator.pools).generate(seed=5, index=1)
    assert from_json(a.to_json()) == a
    assert a != sixteen.generate(seed=5, index=2)


def test_value_count_enters_the_stream_key_only_when_not_four(tones, generator, sixteen):
    assert "attribute_values" not in StreamConfig().key()  # streams of earlier versions are unchanged
    assert StreamConfig(attribute_values=16).key()["attribute_values"] == 16
    eight = dataclasses.replace(sixteen.config, attribute_values=8)
    assert sixteen.digest != StreamGenerator(eight, tones, generator.pools).digest
    with pytest.raises(ConfigError, match="attribute_values must be >= 2"):
        StreamConfig(attribute_values=1)
    with pytest.raises(ConfigError, match=r"data.stream.attribute_values=16: audio streams need 4 values"):
        StreamConfig(attribute_values=16).require_audio("data.stream")


def test_joint_update_queries_ask_both_attributes_in_one_query_event(tones, generator):
    from memgym.datasets.amemops.symbolic import symbolic_stream

    config = StreamConfig(update_queries="joint", attribute_values=16)
    joint = StreamGenerator(config, tones, generator.pools)
    seen_ops = set()
    for i in range(4):
        stream = joint.generate(seed=0, index=i)
        updates = [it for it in stream.items if it.annotations["type"] == "update"]
        assert len(updates) + stream.annotations["dropped"]["update"] == 8 and updates
        assert not any(it.annotations.get("joint") for it in stream.items if it.annotations["type"] != "update")
        query_events = {e.query_id: e for e in stream.queries()}
        assert len(query_events) == len(stream.items) - len(updates) // 2  # one event per joint pair
        for first, second in zip(updates[::2], updates[1::2]):
            assert first.annotations["joint"] and second.annotations["query_event"] == first.item_id
            assert {first.annotations["attribute"], second.annotations["attribute"]} == {"gain", "pan"}
            assert first.annotations["end_frame"] == second.annotations["end_frame"]
            seen_ops |= {first.annotations["operation"], second.annotations["operation"]}
        features, gain, pan = symbolic_stream(stream, sorted(tones.identities()))
        for item in updates:
            frame = item.annotations["end_frame"]
            assert features[frame, -2:].tolist() == [1.0, 1.0]  # both request flags on the joint query
            assert gain[frame] == item.annotations["gain_index"] and pan[frame] == item.annotations["pan_index"]
    assert seen_ops == {"updated", "retained"}
    with pytest.raises(ConfigError, match="update_queries=joint .* n_update must be even"):
        StreamConfig(update_queries="joint", n_update=3)


def test_query_offsets_have_their_own_range(tones):
    """``query_offset_seconds`` draws the last offset of a chain (to its query); the others keep
    ``offset_seconds``, and leaving it empty keeps every earlier stream key."""
    assert "query_offset_seconds" not in StreamConfig().key()
    config = StreamConfig(
        frames=512,
        n_initial=3,
        n_update=6,
        n_interference=0,
        n_absent=1,
        distractors=(1,),
        excerpt_frames=(6, 10),
        offset_seconds=(0.8, 2.0),
        query_offset_seconds=(8.0, 14.0),
    )
    assert config.key()["query_offset_seconds"] == [8.0, 14.0]
    generator = StreamGenerator(config, tones)
    gaps, delays = [], []
    for index in range(8):
        stream = generator.generate(seed=0, index=index)
        chains: dict[str, list] = {}
        for event in stream.events:
            if event.group and not event.group.startswith("absent"):
                chains.setdefault(event.group, []).append(event)
        for events in chains.values():
            events.sort(key=lambda e: e.onset_frame)
            assert events[-1].role == "query"
            onsets = [e.onset_frame for e in events]
            gaps += np.diff(onsets[:-1]).tolist()
            delays.append(onsets[-1] - onsets[-2])
    assert gaps and min(gaps) >= 20 and max(gaps) <= 50  # 0.8-2 s at 25 Hz
    assert len(delays) > 8 * 6 and min(delays) >= 200 and max(delays) <= 350  # 8-14 s
    for bad, message in (((8.0,), "must be empty or"), ((0.2, 1.0), "shorter than the longest excerpt")):
        with pytest.raises(ConfigError, match=message):
            dataclasses.replace(config, query_offset_seconds=bad)


def _intervening(stream) -> list[int]:
    """Per query item (absent ones left out): other sources' events (queries not counted) between the
    queried source's last event and the query."""
    counts = []
    for item in stream.items:
        onset, identity = item.annotations["onset_frame"], item.annotations["identity"]
        writes = [e for e in stream.events if e.role != "query" and e.onset_frame < onset]
        own = [e.onset_frame for e in writes if e.identity == identity]
        if own:
            counts.append(sum(e.onset_frame > max(own) and e.identity != identity for e in writes))
    return counts


def test_max_intervening_bounds_the_other_events_before_every_query(tones):
    """``max_intervening`` = k keeps at most k other sources' events between a query's source's last
    event and the query, for every query type (distractors and interference partners count); -1 (the
    default) leaves streams and keys as they were."""
    assert "max_intervening" not in StreamConfig().key()
    config = StreamConfig(
        frames=512,
        n_initial=3,
        n_update=4,
        n_interference=1,
        n_absent=1,
        distractors=(3,),
        excerpt_frames=(6, 10),
        offset_seconds=(0.4, 1.0),
        query_offset_seconds=(1.0, 3.0),
        placement_attempts=100,
    )
    free = StreamGenerator(config, tones, SimilarityPools(tones, recordings_per_identity=1))
    assert max(c for i in range(8) for c in _intervening(free.generate(seed=0, index=i))) > 1
    for bound in (0, 1):
        bounded = dataclasses.replace(config, max_intervening=bound, n_interference=min(bound, 1))
        assert bounded.key()["max_intervening"] == bound
        generator = StreamGenerator(bounded, tones, free.pools)
        streams = [generator.generate(seed=0, index=i) for i in range(8)]
        counts = [c for s in streams for c in _intervening(s)]
        assert len(counts) > 8 * 4 and max(counts) <= bound
        assert streams[0] == StreamGenerator(bounded, tones, free.pools).generate(seed=0, index=0)
        types = {i.annotations["operation"] for s in streams for i in s.items}
        assert {"initial", "updated", "retained", "absent"} <= types
    for bad, message in ((-2, "max_intervening must be -1"), (0, "leaves no room for an interference")):
        with pytest.raises(ConfigError, match=message):
            dataclasses.replace(config, max_intervening=bad)


EQUAL_WRITES = dict(
    frames=640,
    n_initial=3,
    n_update=6,
    n_interference=0,
    n_absent=0,
    distractors=(0,),
    excerpt_frames=(8, 8),
    offset_seconds=(0.4, 0.6),
    query_offset_seconds=(1.0, 2.0),
    value_repeats=(3, 3),
    placement_attempts=100,
)
"""The update-isolating streams' keys (``cpu-update-isolation`` on audio: the AEQ3 pilots)."""


def test_gap_distractors_put_other_writes_between_every_answer_and_its_query(tones):
    """``gap_distractors`` = k puts k one-off events of never-queried sources inside every query's gap
    (after its source's last event, before the query) where there is room, for initial and updated
    queries alike; 0 (the default) leaves keys and streams alone; more than ``max_intervening`` is an error."""
    assert "gap_distractors" not in StreamConfig().key()
    config = StreamConfig(**EQUAL_WRITES)
    pools = SimilarityPools(tones, recordings_per_identity=1)
    plain = StreamGenerator(config, tones, pools)
    assert StreamGenerator(dataclasses.replace(config, gap_distractors=0), tones, pools).digest == plain.digest
    gapped = dataclasses.replace(config, gap_distractors=2)
    assert gapped.key()["gap_distractors"] == 2
    generator = StreamGenerator(gapped, tones, pools)
    share: dict[str, list[bool]] = {"initial": [], "updated": []}
    for index in range(12):
        stream = generator.generate(seed=0, index=index)
        assert stream == StreamGenerator(gapped, tones, pools).generate(seed=0, index=index)
        queried = {i.annotations["identity"] for i in stream.items}
        distractors = [e for e in stream.events if e.role == "distractor"]
        assert distractors and not queried & {e.identity for e in distractors}
        assert len({e.identity for e in distractors}) == len(distractors)  # one-off sources
        assert stream.annotations["distractors"] == len(distractors)
        for item, count in zip(stream.items, _intervening(stream), strict=True):
            if item.annotations["operation"] in share:
                share[item.annotations["operation"]].append(count >= 2)
    before = [c >= 2 for i in range(12) for c in _intervening(plain.generate(seed=0, index=i))]
    assert np.mean(before) < 0.3
    assert all(np.mean(v) > 0.6 for v in share.values()), share
    with pytest.raises(ConfigError, match="gap_distractors must be >= 0"):
        dataclasses.replace(config, gap_distractors=-1)
    with pytest.raises(ConfigError, match="more events between .* than max_intervening=1"):
        dataclasses.replace(config, gap_distractors=2, max_intervening=1)


def test_gap_distractors_drawn_per_query_from_the_dissimilar_pool(tones):
    """``gap_distractor_draw="uniform"``: 0..k gap events per query, so some gaps hold none and
    some k; with ``distractor_similarity="dissimilar"`` they come from the queried source's
    dissimilar pool while it lasts."""
    config = StreamConfig(
        **EQUAL_WRITES,
        gap_distractors=3,
        gap_distractor_draw="uniform",
        distractor_similarity="dissimilar",
    )
    pools = SimilarityPools(tones, recordings_per_identity=1)
    generator = StreamGenerator(config, tones, pools)
    in_gap, from_pool = [], []
    for index in range(12):
        stream = generator.generate(seed=0, index=index)
        distractors = [e for e in stream.events if e.role == "distractor"]
        for query in stream.queries():
            own = [e for e in stream.events if e.identity == query.identity and e.role != "query"]
            last = max(e.onset_frame for e in own if e.onset_frame < query.onset_frame)
            mine = [e for e in distractors if last < e.onset_frame < query.onset_frame]
            in_gap.append(len(mine))
            from_pool += [e.identity in pools.dissimilar(query.identity) for e in mine]
    assert min(in_gap) == 0 and max(in_gap) >= 3
    assert np.mean(from_pool) > 0.8, np.mean(from_pool)
    assert config.key()["gap_distractor_draw"] == "uniform"
    assert "gap_distractor_draw" not in dataclasses.replace(config, gap_distractor_draw="fixed").key()


def test_tones_library_size_is_a_setting():
    from memgym.datasets.sources.factory import LibraryConfig, open_library

    assert len(open_library(LibraryConfig(kind="tones", identities=256)).identities("eval")) == 256
    assert "identities" not in StreamConfig().key()["library"]  # earlier stream keys are unchanged
    with pytest.raises(ConfigError, match="library.identities sets the tones library's size"):
        LibraryConfig(kind="synthetic_env", identities=256)


def test_value_repeats_write_a_chains_first_value_several_times(tones):
    """``value_repeats`` = (a, b): every chain's first event (initial, update and interference targets
    alike) is heard a..b times with the same gain and pan before the chain's next event; an updated
    query's superseded value is the repeated one; (1, 1), the default, leaves keys and streams alone."""
    assert "value_repeats" not in StreamConfig().key()
    config = StreamConfig(
        frames=1024,
        n_initial=4,
        n_update=4,
        n_interference=1,
        n_absent=1,
        distractors=(2,),
        excerpt_frames=(6, 10),
        offset_seconds=(0.4, 0.6),
        query_offset_seconds=(1.0, 2.0),
        placement_attempts=100,
    )
    pools = SimilarityPools(tones, recordings_per_identity=1)
    single = StreamGenerator(config, tones, pools)
    assert StreamGenerator(dataclasses.replace(config, value_repeats=(1, 1)), tones, pools).digest == single.digest
    repeated = dataclasses.replace(config, value_repeats=(2, 3))
    assert repeated.key()["value_repeats"] == [2, 3]
    generator = StreamGenerator(repeated, tones, pools)
    counts: dict[str, set[int]] = {}
    for index in range(6):
        stream = generator.generate(seed=0, index=index)
        assert stream == StreamGenerator(repeated, tones, pools).generate(seed=0, index=index)
        for item in stream.items:
            kind = item.annotations["type"]
            if kind == "absent":
                continue
            own = sorted(
                (e for e in stream.events if e.group == item.annotations["group"] and e.role == "target"),
                key=lambda e: e.onset_frame,
            )
            first = (own[0].gain_db, own[0].pan)
            repeats = next((k for k, e in enumerate(own) if (e.gain_db, e.pan) != first), len(own))
            counts.setdefault(kind, set()).add(repeats)
            gaps = np.diff([e.onset_frame for e in own])
            assert gaps.min() >= 10 and gaps.max() <= 15  # offset_seconds (0.4-0.6 s) between repeats too
            if item.annotations["operation"] == "updated":
                assert item.annotations["previous_index"] == _index(own[0], item.annotations["attribute"])
    assert counts == {"initial": {2, 3}, "update": {2, 3}, "interference": {2, 3}}
    for bad in ((0, 1), (3, 2), (2,)):
        with pytest.raises(ConfigError, match="value_repeats must be"):
            dataclasses.replace(config, value_repeats=bad)
