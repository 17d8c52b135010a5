import numpy as np
import pytest

from memgym.core.errors import ConfigError
from memgym.datasets.amemops.audio import StreamRenderer, fade, noise_for, pan_gains, render_audio
from memgym.datasets.amemops.config import GAINS_DB, PANS, StreamConfig
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.datasets.sources.similarity import SimilarityPools


def _stream(events, frames=200, noise_db=45.0):
    return AMemOpsStream(
        episode_id="t",
        benchmark="amemops",
        frames=frames,
        library="tones",
        split="train",
        events=tuple(events),
        noise_seed=11,
        noise_db=noise_db,
    )


def _event(tones, gain_db=0.0, pan=0.5, onset=10, frames=25, role="target"):
    rid = tones.recording_ids("tone03", "train")[1]
    return StreamEvent(
        identity="tone03",
        role=role,
        onset_frame=onset,
        frames=frames,
        gain_db=gain_db,
        pan=pan,
        recording_id=rid,
        start_sample=1234,
    )


def test_recording_rms_normalised_before_excerpt(tones):
    renderer = StreamRenderer(tones)
    rid = tones.recording_ids("tone03", "train")[1]
    whole = StreamEvent(
        identity="tone03", role="target", onset_frame=0, frames=50, gain_db=0, pan=0.5, recording_id=rid, start_sample=0
    )
    assert np.sqrt(np.mean(renderer.excerpt(whole, 0.05).astype(np.float64) ** 2)) == pytest.approx(0.05, rel=1e-4)


@pytest.mark.parametrize("gain_index", range(4))
@pytest.mark.parametrize("pan_index", range(4))
def test_gain_and_equal_power_pan_preserve_energy(tones, gain_index, pan_index):
    gain_db, pan = GAINS_DB[gain_index], PANS[pan_index]
    event = _event(tones, gain_db, pan)
    renderer = StreamRenderer(tones)
    audio = renderer.render(_stream([event]), noise=False).astype(np.float64)
    mono = renderer.excerpt(event, 0.05).astype(np.float64) * fade(event.frames * 640, 160)
    expected_energy = np.sum(mono**2) * 10 ** (gain_db / 10)
    assert np.sum(audio**2) == pytest.approx(expected_energy, rel=1e-5)
    left, right = pan_gains(pan)
    assert left**2 + right**2 == pytest.approx(1.0)
    assert np.sum(audio[0] ** 2) == pytest.approx(expected_energy * left**2, rel=1e-5, abs=1e-9)
    # placed at its onset, silent elsewhere
    start, end = event.onset_frame * 640, event.end_frame * 640
    assert not audio[:, :start].any() and not audio[:, end:].any()


def test_fades_are_10ms_linear(tones):
    event = _event(tones)
    audio = StreamRenderer(tones).render(_stream([event]), noise=False)
    start = event.onset_frame * 640
    env = fade(event.frames * 640, 160)
    assert env[0] == pytest.approx(1 / 161) and env[159] == pytest.approx(160 / 161) and env[160] == 1.0
    assert env[-1] == pytest.approx(1 / 161)
    assert abs(audio[0, start]) < 0.01 * np.abs(audio[0, start + 200 : start + 400]).max()


def test_noise_45_db_below_reference_independent_and_shared(tones):
    stream = _stream([], frames=500)
    noise = render_audio(stream, tones).astype(np.float64)
    expected = 0.05 * 10 ** (-45 / 20)
    assert np.std(noise, axis=1) == pytest.approx([expected, expected], rel=0.01)
    assert abs(np.corrcoef(noise)[0, 1]) < 0.01
    np.testing.assert_array_equal(noise, noise_for(stream))


def test_no_normalisation_or_clipping(tones):
    """Levels are absolute: a 0 dB event is exactly 10**(6/20) x a -6 dB one, whatever else is in the stream."""
    loud = StreamRenderer(tones).render(
        _stream([_event(tones, 0.0, 0.0), _event(tones, 0.0, 1.0, onset=60)]), noise=False
    )
    quiet = StreamRenderer(tones).render(_stream([_event(tones, -6.0, 0.0)]), noise=False)
    np.testing.assert_allclose(loud[0, : 40 * 640], quiet[0, : 40 * 640] * 10 ** (6 / 20), rtol=1e-5, atol=1e-8)


def test_generated_stream_audio_shape_and_level(tones):
    generator = StreamGenerator(StreamConfig(), tones, SimilarityPools(tones, recordings_per_identity=1))
    stream = generator.generate(seed=1, index=0)
    audio = render_audio(stream, tones)
    assert audio.shape == (2, 2048 * 640) and audio.dtype == np.float32
    np.testing.assert_array_equal(audio, render_audio(stream, tones))


@pytest.mark.slow  # streams rendered again in fresh processes; in 'make test'
def test_streams_identical_across_processes(tones):
    """Same config + seed + index => the same record and audio in a fresh interpreter (other hash seed)."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import hashlib;"
        "from memgym.datasets.amemops.config import StreamConfig;"
        "from memgym.datasets.amemops.generator import StreamGenerator;"
        "from memgym.datasets.amemops.audio import render_audio;"
        "from memgym.datasets.sources.tones import ToneLibrary;"
        "t = ToneLibrary(); s = StreamGenerator(StreamConfig(), t).generate(2, 5);"
        "print(hashlib.sha256(s.to_json().encode() + render_audio(s, t).tobytes()).hexdigest())"
    )
    env = dict(os.environ, PYTHONHASHSEED="4321")
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()
    stream = StreamGenerator(StreamConfig(), tones).generate(2, 5)
    here = hashlib.sha256(stream.to_json().encode() + render_audio(stream, tones).tobytes()).hexdigest()
    assert other == here


def test_symbolic_value_streams_are_not_rendered(tones):
    config = StreamConfig(distractors=(4,), n_interference=0, attribute_values=16)
    stream = StreamGenerator(config, tones).generate(seed=0, index=0)
    with pytest.raises(ConfigError, match="generated with attribute_values=16: only attribute_values=4"):
        StreamRenderer(tones).render(stream)
