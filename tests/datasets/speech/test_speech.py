"""Voice bank, cue pairs, SNR mixing and the VCTK reader."""

from __future__ import annotations

import numpy as np
import pytest

from memgym.backends.tts.espeak import EspeakBackend
from memgym.core.errors import MemgymError
from memgym.datasets.speech.acoustics import snr_db
from memgym.datasets.speech.cues import CUES, cue_is_perceptible, render_cue_pair
from memgym.datasets.speech.mixing import mix_at_snr
from memgym.datasets.speech.vctk import VCTKCorpus
from memgym.datasets.speech.voices import assign_voices, espeak_voice_bank

TEXT = "I think the new lamp for the hallway should arrive on Friday."


@pytest.fixture(scope="module")
def backend():
    return EspeakBackend()


@pytest.mark.parametrize("cue", [c for c in CUES if c != "neutral"])
def test_each_cue_pair_differs_in_its_acoustic_feature(backend, cue):
    voice = espeak_voice_bank()[3]
    pair = render_cue_pair(backend, voice, TEXT, cue, np.random.default_rng(0))
    plain = backend.synthesize(TEXT, voice)
    np.testing.assert_array_equal(pair.plain, plain)  # same words and voice, cue removed
    assert cue_is_perceptible(cue, pair.cued, pair.plain, backend.sample_rate)
    assert not cue_is_perceptible(cue, pair.plain, pair.plain, backend.sample_rate)


def test_every_voice_renders_every_cue(backend):
    question = "How do I learn to juggle three balls?"
    for voice in espeak_voice_bank():
        for cue in ("fast", "slow", "surprise", "hesitation", "laughter", "emphasis"):
            pair = render_cue_pair(backend, voice, question, cue, np.random.default_rng(1))
            assert cue_is_perceptible(cue, pair.cued, pair.plain, backend.sample_rate), (voice.voice_id, cue)


def test_voice_bank_is_large_and_distinct(backend):
    import librosa

    bank = espeak_voice_bank()
    assert len(bank) >= 20 and len({(v.name, v.pitch, v.rate_wpm) for v in bank}) == len(bank)
    sentences = ["The meeting was moved to Thursday afternoon.", "Could you remind me to water the plants?"]
    feats = {}
    for voice in bank:
        rows = []
        for s in sentences:
            audio = backend.synthesize(s, voice)
            m = librosa.feature.mfcc(y=audio, sr=16000, n_mfcc=20)
            rms = librosa.feature.rms(y=audio)[0][: m.shape[1]]
            m = m[:, rms > 0.03]
            rows.append(np.concatenate([m.mean(1), m.std(1)]))
        feats[voice.voice_id] = np.array(rows)
    stacked = np.concatenate(list(feats.values()))
    mu, sd = stacked.mean(0), stacked.std(0) + 1e-6
    correct = 0
    for vid, rows in feats.items():  # train on sentence 0, classify sentence 1
        pred = min(feats, key=lambda j: np.linalg.norm((feats[j][0] - mu) / sd - (rows[1] - mu) / sd))
        correct += pred == vid
    assert correct >= 0.9 * len(bank)


def test_assign_voices_is_distinct_and_checks_bank_size():
    bank = espeak_voice_bank()
    voices = assign_voices(["a", "b", "c"], bank, np.random.default_rng(1))
    assert len({v.voice_id for v in voices.values()}) == 3
    with pytest.raises(MemgymError, match="only"):
        assign_voices([str(i) for i in range(30)], bank, np.random.default_rng(1))


@pytest.mark.parametrize("target", [10.0, 0.0, 20.0])
def test_mix_at_snr_hits_target_on_active_region(backend, target):
    speech = backend.synthesize(TEXT, espeak_voice_bank()[0])
    noise = np.random.default_rng(0).normal(0, 0.1, 30000).astype(np.float32)
    mix = mix_at_snr(speech, noise, 16000, target, np.random.default_rng(1))
    assert abs(mix.snr_db - target) < 1e-6
    assert abs(snr_db(mix.speech, mix.noise, 16000) - target) < 1e-6
    np.testing.assert_allclose(mix.mixture, mix.speech + mix.noise, atol=1e-6)
    assert np.abs(mix.mixture).max() <= 0.99 + 1e-6
    # the clean pair is the speech itself, up to the common peak-limiting scale
    scale = mix.speech[np.argmax(np.abs(speech))] / speech[np.argmax(np.abs(speech))]
    np.testing.assert_allclose(mix.speech, speech * scale, atol=1e-6)


def _vctk_fixture(root, sample_rate=48000):
    import soundfile

    (root / "txt" / "p225").mkdir(parents=True)
    (root / "wav48_silence_trimmed" / "p225").mkdir(parents=True)
    (root / "txt" / "p226").mkdir(parents=True)
    (root / "speaker-info.txt").write_text(
        "ID  AGE  GENDER  ACCENTS  REGION COMMENTS\np225  23  F    English    Southern  England\np226  22  M    English    Surrey\n"
    )
    (root / "txt" / "p225" / "p225_001.txt").write_text("Please call Stella.\n")
    tone = 0.2 * np.sin(2 * np.pi * 200 * np.arange(sample_rate) / sample_rate)
    soundfile.write(str(root / "wav48_silence_trimmed" / "p225" / "p225_001_mic1.flac"), tone, sample_rate)
    (root / "txt" / "p226" / "p226_001.txt").write_text("No recording for this one.\n")


def test_vctk_reader_on_layout_fixture(tmp_path):
    _vctk_fixture(tmp_path)
    corpus = VCTKCorpus(tmp_path)
    assert corpus.speakers["p225"].gender == "F" and corpus.speakers["p226"].region == "Surrey"
    (utt,) = corpus.utterances("p225")
    assert utt.text == "Please call Stella." and corpus.utterances("p226") == []
    audio = corpus.load_audio(utt)
    assert audio.dtype == np.float32 and abs(audio.size - 16000) < 5
    (voice,) = corpus.voices("hf")
    assert voice.voice_id == "vctk-p225" and voice.speaker_ref.endswith("p225_001_mic1.flac")


def test_vctk_reader_names_missing_parts(tmp_path):
    with pytest.raises(MemgymError, match="has no speaker-info.txt"):
        VCTKCorpus(tmp_path)


def test_vctk_speakers_become_the_voice_bank(tmp_path):
    from memgym.backends.tts import TTSConfig
    from memgym.core.errors import ConfigError
    from memgym.datasets.voxmem.config import VoxMemConfig, voice_bank

    _vctk_fixture(tmp_path)
    (voice,) = voice_bank(VoxMemConfig(tts=TTSConfig(kind="hf"), vctk_root=str(tmp_path)))
    assert voice.name == "0" and voice.voice_id == "vctk-p225" and voice.speaker_ref
    (voice,) = voice_bank(VoxMemConfig(tts=TTSConfig(kind="openai"), vctk_root=str(tmp_path)))
    assert voice.name == "p225"
    with pytest.raises(ConfigError, match="vctk_root needs"):
        voice_bank(VoxMemConfig(vctk_root=str(tmp_path)))
