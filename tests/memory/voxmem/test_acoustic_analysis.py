"""Signal measurements and the sound tagger on synthetic signals with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.datasets.sources.tones import ToneLibrary
from memgym.datasets.speech.mixing import mix_at_snr
from memgym.datasets.speech.turn_features import SAMPLE_RATE, background_of, measure_turn
from memgym.memory.voxmem.sound_tagger import SoundTagger


def voiced(seconds: float, f0: float, seed: int = 0, gaps: int = 0) -> np.ndarray:
    """A speech-like harmonic signal at ``f0`` Hz with syllable-rate amplitude bursts (and silent gaps)."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    rng = np.random.default_rng(seed)
    tone = sum(np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6)) / k for k in range(1, 6))
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2
    signal = 0.2 * tone * envelope
    for g in range(gaps):
        start = int((g + 1) * len(t) / (gaps + 1))
        signal[start : start + SAMPLE_RATE // 4] = 0.0
    return signal.astype(np.float32)


def test_pitch_timing_and_pauses():
    silence = np.zeros(12000, np.float32)
    plain = measure_turn(np.concatenate([silence, voiced(2.0, 150.0), silence]))
    assert plain["f0_hz"] == pytest.approx(150.0, rel=0.04)
    assert plain["active_s"] == pytest.approx(2.0, abs=0.1)
    assert plain["background_db"] < -90  # digital silence around the voice
    high = measure_turn(voiced(2.0, 220.0))
    assert high["f0_hz"] == pytest.approx(220.0, rel=0.04)
    paused = measure_turn(voiced(2.0, 150.0, gaps=2))
    assert paused["pause"] > plain["pause"] + 0.15
    assert len(plain["voice"]) == 26 and len(plain["background"]) == 40


def test_sound_tagger_names_the_background_under_speech():
    library = ToneLibrary(identities=4)
    classes = library.identities()
    speech = [voiced(2.0, f0, seed=i, gaps=2) for i, f0 in enumerate((110, 140, 180, 220))]
    tagger = SoundTagger(library, classes, speech, snr_db=10.0)
    rng = np.random.default_rng(1)
    heard = voiced(2.0, 125.0, seed=9, gaps=2)  # a voice the tagger was not trained with
    for name in classes:
        clip = library.load(library.recording_ids(name, "train")[0])
        mixture = mix_at_snr(heard, clip, SAMPLE_RATE, 10.0, rng).mixture
        assert tagger.tag(*background_of(mixture)) == name
    assert tagger.tag(*background_of(heard)) == ""
    assert tagger.tag(*background_of(np.zeros(16000, np.float32))) == ""


def test_the_speech_level_decides_whether_there_is_a_sound():
    """Given the speech's loudness, a faint noise floor under clean speech (a breathy voice's) is no
    sound, while every mixture at the training SNR is still named by its class."""
    from memgym.datasets.speech.turn_features import loudness_of

    library = ToneLibrary(identities=4)
    classes = library.identities()
    speech = [voiced(2.0, f0, seed=i, gaps=2) for i, f0 in enumerate((110, 140, 180, 220))]
    tagger = SoundTagger(library, classes, speech, snr_db=10.0)
    assert -60.0 < tagger.none_below < -10.0
    heard = voiced(2.0, 125.0, seed=9, gaps=2)
    floor = heard + np.random.default_rng(3).normal(0, 10 ** (-50 / 20), heard.size).astype(np.float32)
    assert tagger.tag(*background_of(floor), loudness_of(floor)) == ""
    rng = np.random.default_rng(1)
    for name in classes:
        clip = library.load(library.recording_ids(name, "train")[0])
        mixture = mix_at_snr(heard, clip, SAMPLE_RATE, 10.0, rng).mixture
        assert tagger.tag(*background_of(mixture), loudness_of(mixture)) == name
        assert tagger.tag_audio(mixture) == name  # the cascade's entry point reads the same
    assert tagger.tag_audio(floor) == ""


def test_more_mixtures_per_recording_name_the_sound_and_change_the_identity():
    from memgym.core.errors import MemgymError

    library = ToneLibrary(identities=4)
    classes = library.identities()
    speech = [voiced(2.0, f0, seed=i, gaps=2) for i, f0 in enumerate((110, 140, 180, 220))]
    once, thrice = (SoundTagger(library, classes, speech, snr_db=10.0, mixes=m) for m in (1, 3))
    assert once.identity() != thrice.identity()
    heard, rng = voiced(2.0, 125.0, seed=9, gaps=2), np.random.default_rng(1)
    for name in classes:
        mixture = mix_at_snr(heard, library.load(library.recording_ids(name, "train")[0]), SAMPLE_RATE, 10.0, rng)
        assert thrice.tag(*background_of(mixture.mixture)) == name
    with pytest.raises(MemgymError, match="at least one mixture"):
        SoundTagger(library, classes, speech, mixes=0)


def test_the_rich_tagger_names_sounds_after_a_lead_and_is_deterministic():
    """The ``rich`` tagger (issue 38) trained on speech with a lead silence names every tone mixed under
    an unseen voice, tags nothing on clean speech or under a faint noise floor, gives the same
    weights when trained twice, and refuses the shape-only entry point."""
    from memgym.core.errors import MemgymError

    library = ToneLibrary(identities=4)
    classes = library.identities()
    lead = np.zeros(SAMPLE_RATE // 2, np.float32)
    speech = [np.concatenate([lead, voiced(2.0, f0, seed=i, gaps=2)]) for i, f0 in enumerate((110, 140, 180, 220))]
    tagger, again = (SoundTagger(library, classes, speech, snr_db=10.0, features="rich", lead_s=0.5) for _ in range(2))
    np.testing.assert_array_equal(tagger.weights, again.weights)
    assert tagger.identity() != SoundTagger(library, classes, speech, snr_db=10.0).identity()
    assert tagger.weights.shape == (324, len(classes))
    heard = np.concatenate([lead, voiced(2.0, 125.0, seed=9, gaps=2)])
    rng = np.random.default_rng(1)
    for name in classes:
        clip = library.load(library.recording_ids(name, "train")[0])
        assert tagger.tag_audio(mix_at_snr(heard, clip, SAMPLE_RATE, 10.0, rng).mixture) == name
    floor = heard + np.random.default_rng(3).normal(0, 10 ** (-50 / 20), heard.size).astype(np.float32)
    assert tagger.tag_audio(heard) == "" and tagger.tag_audio(floor) == ""
    with pytest.raises(MemgymError, match="tag_audio"):
        tagger.tag(*background_of(heard))
    with pytest.raises(MemgymError, match="'shape' or 'rich'"):
        SoundTagger(library, classes, speech, features="mfcc")  # type: ignore[arg-type]
