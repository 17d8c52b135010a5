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
