"""Per-query conditions: pitch differences, intervening writes, training-audio matches and duplicate notes."""

from __future__ import annotations

import numpy as np
import pytest
from echo_tones import EchoTones

from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.query_conditions import AudioMatches, intervening_writes, pitch_differences
from memgym.datasets.sources.factory import LibraryConfig, open_library
from memgym.datasets.sources.tones import ToneLibrary

SMALL = dict(frames=1024, n_initial=4, n_update=4, n_interference=0, n_absent=1, distractors=(2,), split="eval")


@pytest.fixture(scope="module")
def echo():
    return EchoTones(identities=30)


def test_training_matches_follow_the_query_and_its_earlier_source_recordings(echo):
    matches = AudioMatches(echo)
    generator = StreamGenerator(StreamConfig(**SMALL), echo)
    seen = set()
    for index in range(6):
        stream = generator.generate(0, index)
        got = matches.training_matches(stream)
        for query in stream.queries():
            earlier = [
                e
                for e in stream.events
                if e.role != "query" and e.identity == query.identity and e.onset_frame < query.onset_frame
            ]
            want = any(e.recording_id.endswith("-eval-0") for e in (query, *earlier))
            assert got[query.query_id] == want
            seen.add(want)
    assert seen == {True, False}


def test_duplicate_notes_are_two_recordings_with_the_same_audio(echo):
    matches = AudioMatches(echo)
    generator = StreamGenerator(StreamConfig(**SMALL), echo)
    seen = set()
    for index in range(8):
        stream = generator.generate(0, index)
        recordings = {e.recording_id for e in stream.events}
        want = any(r.endswith("-eval-1") and r.replace("-eval-1", "-eval-2") in recordings for r in recordings)
        assert matches.has_duplicate_notes(stream) == want
        seen.add(want)
    assert seen == {True, False}


def test_a_recording_is_not_its_own_match_and_level_does_not_matter(echo):
    matches = AudioMatches(echo)
    assert matches.matches_training("tone03-eval-0") and not matches.matches_training("tone03-eval-3")
    assert not matches.matches_training("tone03-train-0")  # its only twin is an eval recording
    assert np.isclose(np.linalg.norm(matches.head("tone03-eval-1")), 1.0)


def test_pitch_differences_vanish_with_fixed_recordings():
    library = open_library(LibraryConfig(kind="synthetic_instruments"))
    original = StreamGenerator(StreamConfig(**SMALL), library).generate(0, 0)
    fixed = StreamGenerator(StreamConfig(**SMALL, recordings="fixed"), library).generate(0, 0)
    absent = {i.item_id for i in original.items if i.annotations["operation"] == "absent"}
    by_original, by_fixed = pitch_differences(original, library), pitch_differences(fixed, library)
    assert all(by_original[q] is None for q in absent) and all(by_fixed[q] is None for q in absent)
    assert {by_fixed[q] for q in by_fixed if q not in absent} == {0}
    assert any(by_original[q] > 0 for q in by_original if q not in absent)
    assert set(
        pitch_differences(StreamGenerator(StreamConfig(**SMALL), ToneLibrary()).generate(0, 0), ToneLibrary()).values()
    ) == {None}


def test_intervening_writes_count_other_sources_since_the_answer_was_last_heard(echo):
    """Per query: other sources' non-query events after the queried source's last event and before the
    query (the gap distractors put two there where they fit); None for an absent source."""
    config = StreamConfig(
        **SMALL, gap_distractors=2, excerpt_frames=(8, 8), offset_seconds=(1.0, 2.0), query_offset_seconds=(2.0, 3.0)
    )
    generator = StreamGenerator(config, echo)
    seen = []
    for index in range(4):
        stream = generator.generate(0, index)
        got = intervening_writes(stream)
        timeline = sorted(stream.events, key=lambda e: e.onset_frame)
        for query in stream.queries():
            count, heard = 0, False
            for event in timeline:
                if event.onset_frame >= query.onset_frame:
                    break
                if event.role == "query":
                    continue
                if event.identity == query.identity:
                    count, heard = 0, True
                elif heard:
                    count += 1
            assert got[query.query_id] == (count if heard else None)
            seen.append(got[query.query_id])
    assert None in seen and max(c for c in seen if c is not None) >= 2
