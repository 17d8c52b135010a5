import numpy as np
import pytest

from memgym.datasets.amemops.audio import render_audio
from memgym.datasets.amemops.config import GAINS_DB, PANS
from memgym.datasets.amemops.templates import N_TEMPLATES, HistoryCondition, build_history_stream, template


def _index(event, attribute):
    return GAINS_DB.index(event.gain_db) if attribute == "gain" else PANS.index(event.pan)


def test_192_templates_cover_attribute_latest_pair_and_change():
    combos = {(t.repeat, t.attribute, t.latest_gain, t.latest_pan, t.change) for t in map(template, range(N_TEMPLATES))}
    assert len(combos) == 192
    assert {c[1] for c in combos} == {"gain", "pan"} and {c[4] for c in combos} == {0, 1, 2}


@pytest.mark.parametrize("delay", [20, 120])
@pytest.mark.parametrize("load", ["low", "high"])
def test_template_timing(tones, delay, load):
    stream = build_history_stream(37, tones, HistoryCondition(delay_s=delay, load=load))
    assert stream.frames == 4096
    targets = [e for e in stream.events if e.role == "target"]
    assert [(e.onset_frame, e.end_frame) for e in targets] == [(376, 400), (476, 500)]  # 0.96 s, 4 s apart, ends 20 s
    query = next(e for e in stream.events if e.role == "query")
    assert query.end_frame == 500 + 25 * delay and query.frames == 12
    item = stream.items[0]
    assert item.annotations["delay_s"] == delay and item.annotations["end_frame"] == query.end_frame - 1
    distractors = [e for e in stream.events if e.role == "distractor"]
    assert len(distractors) == (4 if load == "low" else 16)
    assert all(d.onset_frame >= 500 and d.end_frame <= query.onset_frame for d in distractors)
    assert len({d.identity for d in distractors} | {stream.items[0].annotations["identity"]}) == len(distractors) + 1
    if load == "high":
        gaps = np.diff([d.onset_frame for d in distractors])
        assert gaps.max() - gaps.min() <= 1  # evenly spaced onsets


def test_load_and_delay_keep_identities_and_durations(tones):
    high20 = [e for e in build_history_stream(8, tones, HistoryCondition(delay_s=20)).events if e.role == "distractor"]
    high120 = [
        e for e in build_history_stream(8, tones, HistoryCondition(delay_s=120)).events if e.role == "distractor"
    ]
    low120 = [
        e
        for e in build_history_stream(8, tones, HistoryCondition(delay_s=120, load="low")).events
        if e.role == "distractor"
    ]
    assert [(e.identity, e.frames, e.recording_id) for e in high20] == [
        (e.identity, e.frames, e.recording_id) for e in high120
    ]
    assert low120 == [high120[k] for k in (0, 5, 10, 15)]


@pytest.mark.parametrize("index", [0, 50, 101, 191])
def test_operations(tones, index):
    t = template(index)
    other = "pan" if t.attribute == "gain" else "gain"
    answers = set()
    for operation in ("no_update", "updated", "retained"):
        stream = build_history_stream(index, tones, HistoryCondition(operation=operation))
        earlier, latest = [e for e in stream.events if e.role == "target"]
        assert (_index(latest, "gain"), _index(latest, "pan")) == (t.latest_gain, t.latest_pan)
        same_asked = _index(earlier, t.attribute) == _index(latest, t.attribute)
        same_other = _index(earlier, other) == _index(latest, other)
        assert (same_asked, same_other) == {
            "no_update": (True, True),
            "updated": (False, True),
            "retained": (True, False),
        }[operation]
        answers.add(stream.items[0].answer)
        previous = stream.items[0].annotations["previous_index"]
        assert previous == (_index(earlier, t.attribute) if operation == "updated" else None)
    assert answers == {t.latest_gain if t.attribute == "gain" else t.latest_pan}


def test_earlier_controls_preserve_later_audio(tones):
    full = build_history_stream(3, tones, HistoryCondition(delay_s=120, operation="updated"))
    omitted = build_history_stream(3, tones, HistoryCondition(delay_s=120, operation="updated", earlier="omitted"))
    replayed = build_history_stream(3, tones, HistoryCondition(delay_s=120, operation="updated", earlier="distractor"))
    assert [e.role for e in omitted.events].count("target") == 1
    first = min((e for e in replayed.events if e.role == "distractor"), key=lambda e: e.onset_frame)
    swapped = next(e for e in replayed.events if e.onset_frame == 376)
    assert (swapped.identity, swapped.recording_id, swapped.start_sample) == (
        first.identity,
        first.recording_id,
        first.start_sample,
    )
    audio = [render_audio(s, tones) for s in (full, omitted, replayed)]
    np.testing.assert_array_equal(audio[0][:, 400 * 640 :], audio[1][:, 400 * 640 :])
    after_replay = swapped.end_frame * 640  # the replayed distractor keeps its own length (<= 28 frames)
    assert swapped.end_frame <= 404
    np.testing.assert_array_equal(audio[0][:, after_replay:], audio[2][:, after_replay:])
    np.testing.assert_array_equal(audio[0][:, : 376 * 640], audio[1][:, : 376 * 640])  # shared noise
    assert not np.array_equal(audio[0][:, 376 * 640 : 400 * 640], audio[1][:, 376 * 640 : 400 * 640])


def test_fixed_recordings_in_templates(tones):
    stream = build_history_stream(11, tones, HistoryCondition(recordings="fixed", earlier="omitted"))
    full = build_history_stream(11, tones, HistoryCondition(recordings="fixed"))
    target = stream.items[0].annotations["identity"]
    recs = {e.recording_id for e in full.events if e.identity == target}
    assert len(recs) == 1 and {e.recording_id for e in stream.events if e.identity == target} == recs
    assert all(e.start_sample == 0 for e in stream.events)
