import numpy as np
import pytest

from memgym.sensors.log_mel import LOG_FLOOR, log_mel, mel_filterbank

librosa = pytest.importorskip("librosa")


def test_filterbank_matches_librosa():
    reference = librosa.filters.mel(sr=16_000, n_fft=1024, n_mels=64, fmin=50, fmax=7800)
    np.testing.assert_allclose(mel_filterbank(), reference, rtol=1e-5, atol=1e-8)


def test_stereo_log_mel_matches_librosa_to_1e4():
    rng = np.random.default_rng(0)
    t = np.arange(64_000) / 16_000
    left = 0.05 * np.sin(2 * np.pi * 440 * t) + 0.01 * rng.standard_normal(len(t))
    right = 0.02 * rng.standard_normal(len(t))
    audio = np.stack([left, right]).astype(np.float32)
    features = log_mel(audio).numpy()
    assert features.shape == (100, 128) and features.dtype == np.float32  # 64000 / 640 frames
    for channel in range(2):
        mel = librosa.feature.melspectrogram(
            y=np.pad(audio[channel], (384, 0)),
            sr=16_000,
            n_fft=1024,
            hop_length=640,
            window="hann",
            center=False,
            power=2.0,
            n_mels=64,
            fmin=50,
            fmax=7800,
        )
        reference = np.log(mel + LOG_FLOOR).T
        np.testing.assert_allclose(features[:, 64 * channel : 64 * (channel + 1)], reference, atol=1e-4, rtol=0)


def test_frames_are_causal():
    audio = np.zeros((1, 6400), dtype=np.float32)
    audio[0, 5 * 640 :] = 1.0  # onset at the start of frame 5
    features = log_mel(audio).numpy()
    assert (features[:5] < np.log(LOG_FLOOR) + 1).all() and (features[5] > 0).any()
