"""Variable-length audio observations as fixed-size arrays.

``memgym/VoxMem-v0`` sizes its ``audio`` key by the turn (10 ms rows of 160 samples, with the
valid sample count in ``audio_length``). :class:`AudioFeatures` summarises a turn as pooled
log-mel statistics (what a small policy can use); :class:`PadAudio` restores a zero-padded
waveform of fixed length (for a policy that reads raw samples).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from memgym.core.errors import MemgymError
from memgym.datasets.speech.turn_features import N_MELS, SAMPLE_RATE, log_mel_frames
from memgym.datasets.voxmem.audio_files import turn_audio
from memgym.wrappers.base import ObservationWrapper

FEATURE_LIMIT = 24.0
"""Bound of the pooled log-mel features (natural-log power >= log(1e-10) ~ -23; clipped)."""


def _audio_keys(env: gymnasium.Env, key: str, length_key: str, wrapper: str) -> None:
    space = env.observation_space
    if not isinstance(space, spaces.Dict) or key not in space.spaces or length_key not in space.spaces:
        raise MemgymError(f"{wrapper}: needs a Dict observation with '{key}' and '{length_key}' keys, got {space}")


class AudioFeatures(ObservationWrapper):
    """``audio`` (any length) -> ``Box(-24, 24, (2 * 40 + 1,), float32)``: the mean and standard
    deviation over 10 ms frames of the turn's 40-band log-mel spectrum
    (:func:`~memgym.datasets.speech.turn_features.log_mel_frames`), then its duration in seconds
    (clipped to 24); all zeros for a turn without audio.

    Args:
        env: an env whose ``Dict`` observation has ``key`` (16 kHz samples, flat or in rows) and
            ``length_key`` (the valid sample count, ``(1,)``).
    """

    def __init__(self, env: gymnasium.Env, key: str = "audio", length_key: str = "audio_length") -> None:
        super().__init__(env)
        _audio_keys(env, key, length_key, "AudioFeatures")
        self.key, self.length_key = key, length_key
        features = spaces.Box(-FEATURE_LIMIT, FEATURE_LIMIT, (2 * N_MELS + 1,), np.float32)
        self.observation_space = spaces.Dict({**env.observation_space.spaces, key: features})

    def observation(self, observation: dict) -> dict:
        length = int(np.asarray(observation[self.length_key]).reshape(-1)[0])
        features = np.zeros(2 * N_MELS + 1, np.float32)
        if length:
            mel, _ = log_mel_frames(turn_audio(observation[self.key], length))
            features[:N_MELS], features[N_MELS : 2 * N_MELS] = mel.mean(axis=0), mel.std(axis=0)
            features[-1] = length / SAMPLE_RATE
        return {**observation, self.key: np.clip(features, -FEATURE_LIMIT, FEATURE_LIMIT)}


class PadAudio(ObservationWrapper):
    """``audio`` (any length) -> ``Box(-1, 1, (samples,), float32)``: the waveform, cut to
    ``samples`` and zero-padded (``samples`` defaults to the env's ``max_samples``, VoxMem's
    longest turn: 480,000 floats, 1.92 MB a step).
    """

    def __init__(
        self, env: gymnasium.Env, samples: int | None = None, key: str = "audio", length_key: str = "audio_length"
    ) -> None:
        super().__init__(env)
        _audio_keys(env, key, length_key, "PadAudio")
        self.key, self.length_key = key, length_key
        self.samples = int(samples if samples is not None else env.get_wrapper_attr("max_samples"))
        waveform = spaces.Box(-1.0, 1.0, (self.samples,), np.float32)
        self.observation_space = spaces.Dict({**env.observation_space.spaces, key: waveform})

    def observation(self, observation: dict) -> dict:
        length = min(int(np.asarray(observation[self.length_key]).reshape(-1)[0]), self.samples)
        padded = np.zeros(self.samples, np.float32)
        padded[:length] = np.asarray(observation[self.key], np.float32).reshape(-1)[:length]
        return {**observation, self.key: padded}
