"""AMemOps streams generated + featurised per second on one core, vs a per-event numpy + librosa baseline.

Both pipelines build the same stream records (``StreamGenerator``) from the embedded
environmental library with its recordings already in memory, then turn them into ``(T, 131)``
features: memgym renders with cached RMS scales into one preallocated stereo buffer and runs one
batched causal ``torch.stft`` log-mel; the baseline re-normalises each recording per event with
numpy, pads and adds each event, and calls ``librosa.feature.melspectrogram`` per channel.
Also prints how long a training batch of 40 streams takes at that rate.

Usage: ``python -m speed amemops_streams [STREAMS]`` (default 8 streams).
"""

from __future__ import annotations

import numpy as np
import torch

from memgym.datasets.amemops.audio import StreamRenderer
from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.features import query_flags, stream_features
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.sources.synthetic_environment import SyntheticEnvironmentLibrary
from memgym.sensors.log_mel import FMAX, FMIN, HOP, LOG_FLOOR, N_FFT, N_MELS, SAMPLE_RATE
from speed.harness import report, time_best


def baseline_features(stream: AMemOpsStream, library, librosa) -> np.ndarray:
    """Straightforward per-event rendering and librosa log-mel of one stream."""
    audio = np.zeros((2, stream.frames * HOP))
    fade_n = int(stream.fade_ms * SAMPLE_RATE / 1000)
    for event in stream.events:
        recording = library.load(event.recording_id).astype(np.float64)
        recording = recording * stream.rms / np.sqrt(np.mean(recording**2))
        n = event.frames * HOP
        excerpt = recording[event.start_sample : event.start_sample + n].copy()
        ramp = np.arange(1, fade_n + 1) / (fade_n + 1)
        excerpt[:fade_n] *= ramp
        excerpt[n - fade_n :] *= ramp[::-1]
        excerpt *= 10 ** (event.gain_db / 20)
        for channel, weight in enumerate((np.cos(event.pan * np.pi / 2), np.sin(event.pan * np.pi / 2))):
            placed = np.pad(excerpt * weight, (event.onset_frame * HOP, len(audio[channel]) - event.end_frame * HOP))
            audio[channel] += placed
    rng = np.random.default_rng(stream.noise_seed)
    audio += rng.standard_normal(audio.shape) * stream.rms * 10 ** (-stream.noise_db / 20)
    channels = []
    for channel in audio:
        mel = librosa.feature.melspectrogram(
            y=np.pad(channel, (N_FFT - HOP, 0)),
            sr=SAMPLE_RATE,
            n_fft=N_FFT,
            hop_length=HOP,
            center=False,
            power=2.0,
            n_mels=N_MELS,
            fmin=FMIN,
            fmax=FMAX,
        )
        channels.append(np.log(mel + LOG_FLOOR).T)
    return np.concatenate([*channels, query_flags(stream)], axis=1).astype(np.float32)


def main(argv: list[str]) -> None:
    import librosa

    torch.set_num_threads(1)  # one core
    count = int(argv[0]) if argv else 8
    library = SyntheticEnvironmentLibrary(cache_size=4096)
    generator = StreamGenerator(StreamConfig(), library)
    renderer = StreamRenderer(library)
    warm = [generator.generate(0, i) for i in range(count)]
    for stream in warm:  # loads every recording once (synthesis is not what is measured) + numba JIT
        renderer.render(stream)
    baseline_features(warm[0], library, librosa)

    def memgym_streams() -> None:
        for i in range(count):
            stream = generator.generate(0, i)
            stream_features(stream, renderer.render(stream))

    def baseline_streams() -> None:
        for i in range(count):
            baseline_features(generator.generate(0, i), library, librosa)

    ours = time_best("memgym generate + render + torch log-mel", memgym_streams, units=count, unit_name="streams")
    base = time_best("per-event numpy + librosa", baseline_streams, units=count, unit_name="streams")
    extra = [
        f"batch of 40 streams on one core: memgym {40 / ours.rate:.2f} s, baseline {40 / base.rate:.2f} s",
        "(recordings in memory; first-time synthesis of a clip costs ~17 ms and is cached per process)",
    ]
    report("amemops_streams: 2,048-frame streams -> (T, 131) features", ours, base, extra)
