"""TTS backends: embedded eSpeak NG, OpenAI-compatible endpoint (fake local server), HF path errors."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from memgym.backends.tts import TTSConfig, TTSError, Voice, make_tts_backend
from memgym.backends.tts.base import SpeechStyle
from memgym.core.chat import encode_wav


def test_espeak_synthesizes_16k_float_audio():
    backend = make_tts_backend(TTSConfig())
    voice = Voice(voice_id="v", backend="espeak", name="en-us+m1")
    audio = backend.synthesize("The repair is on Friday.", voice)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert 0.5 < audio.size / backend.sample_rate < 5 and np.abs(audio).max() <= 0.99
    again = backend.synthesize("The repair is on Friday.", voice)
    np.testing.assert_array_equal(audio, again)


def test_espeak_breath_voices_are_identical_in_engines_started_in_different_seconds():
    """libespeak-ng seeds its noise generator from the clock; the worker re-seeds it per utterance."""
    import time

    from memgym.backends.tts.espeak import _Engine
    from memgym.backends.tts.espeak import style_to_ssml as ssml

    # eSpeak's breath-noise variants (a user's bank may hold them; memgym's default left them in issue 38)
    breathy = [
        Voice(voice_id=f"breathy-{v}", backend="espeak", name=f"en-us+{v}", pitch=60) for v in ("f2", "f3", "f5")
    ]
    document = ssml("Please water the tomato plants every two days.", SpeechStyle())
    first = _Engine()
    time.sleep(1.05 - time.time() % 1.0)  # the second engine initialises in a later clock second
    second = _Engine()
    try:
        for voice in breathy:
            np.testing.assert_array_equal(first.speak(document, voice), second.speak(document, voice))
    finally:
        first._close()
        second._close()


def test_espeak_rejects_unknown_voice_and_foreign_backend():
    backend = make_tts_backend(TTSConfig())
    with pytest.raises(TTSError, match="no voice"):
        backend.synthesize("hello", Voice(voice_id="x", backend="espeak", name="xx-nonexistent+zz"))
    with pytest.raises(TTSError, match="backend 'openai'"):
        backend.synthesize("hello", Voice(voice_id="x", backend="openai", name="alloy"))


class _FakeSpeech(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeSpeech.requests.append({"path": self.path, **body})
        tone = 0.3 * np.sin(2 * np.pi * 220 * np.arange(24000) / 24000)  # 1 s at 24 kHz
        payload = encode_wav(tone.astype(np.float32), 24000)
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_openai_endpoint_backend_against_local_server():
    server = HTTPServer(("127.0.0.1", 0), _FakeSpeech)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        backend = make_tts_backend(TTSConfig(kind="openai", base_url=url, model="tts-test"))
        voice = Voice(voice_id="openai-alloy", backend="openai", name="alloy")
        style = SpeechStyle(rate=1.6, fillers={"1": "um"}, emphasis=(0,))
        audio = backend.synthesize("Budget is fine", voice, style)
        assert audio.dtype == np.float32 and abs(audio.size - 16000) < 10  # resampled 24 kHz -> 16 kHz
        request = _FakeSpeech.requests[-1]
        assert request["path"] == "/v1/audio/speech" and request["voice"] == "alloy" and request["model"] == "tts-test"
        assert request["speed"] == 1.6 and request["input"] == "Budget um, is fine"
        assert "Budget" in request["instructions"]
    finally:
        server.shutdown()


def test_openai_endpoint_unreachable_is_a_clear_error():
    backend = make_tts_backend(TTSConfig(kind="openai", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(TTSError, match="unreachable"):
        backend.synthesize("hi", Voice(voice_id="a", backend="openai", name="alloy"))


def test_hf_backend_requires_a_model_folder(tmp_path):
    with pytest.raises(TTSError, match="no config.json"):
        make_tts_backend(TTSConfig(kind="hf", model_path=str(tmp_path)))


def _tiny_vits(folder):
    import json as _json

    from transformers import VitsConfig, VitsModel, VitsTokenizer

    vocab = {c: i for i, c in enumerate("_,.!?-~ abcdefghijklmnopqrstuvwxyz'")}
    (folder / "vocab.json").write_text(_json.dumps(vocab))
    VitsTokenizer(str(folder / "vocab.json"), add_blank=True, normalize=True, phonemize=False).save_pretrained(folder)
    config = VitsConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=16,
        flow_size=16, spectrogram_bins=33, upsample_initial_channel=16, upsample_rates=[8, 8, 2, 2],
        upsample_kernel_sizes=[16, 16, 4, 4], resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3]],
        prior_encoder_num_flows=1, prior_encoder_num_wavenet_layers=1, posterior_encoder_num_wavenet_layers=1,
        duration_predictor_num_flows=1, duration_predictor_filter_channels=16, depth_separable_num_layers=1,
        num_speakers=3, speaker_embedding_size=8, sampling_rate=22050,
    )  # fmt: skip
    VitsModel(config).save_pretrained(folder)


def test_hf_local_backend_with_tiny_random_vits(tmp_path):
    _tiny_vits(tmp_path)
    backend = make_tts_backend(TTSConfig(kind="hf", model_path=str(tmp_path)))
    voice = Voice(voice_id="hf-1", backend="hf", name="1")
    audio = backend.synthesize("hello there, how are you", voice)
    assert audio.dtype == np.float32 and audio.ndim == 1 and audio.size > 1000
    np.testing.assert_array_equal(audio, backend.synthesize("hello there, how are you", voice))  # seeded per request


@pytest.mark.slow  # librosa's time stretch compiles numba code on first use (~15 s)
def test_hf_local_backend_realises_rate_on_the_signal(tmp_path):
    _tiny_vits(tmp_path)
    backend = make_tts_backend(TTSConfig(kind="hf", model_path=str(tmp_path)))
    voice = Voice(voice_id="hf-1", backend="hf", name="1")
    audio = backend.synthesize("hello there, how are you", voice)
    fast = backend.synthesize("hello there, how are you", voice, SpeechStyle(rate=2.0))
    assert fast.size < 0.7 * audio.size
