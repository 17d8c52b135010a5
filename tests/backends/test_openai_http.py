"""The OpenAI-compatible client against a scripted local HTTP server on 127.0.0.1."""

from __future__ import annotations

import time

import numpy as np
import pytest
from fake_openai import FakeEndpoint

from memgym.backends.config import ReasonerConfig, build_reasoner
from memgym.backends.errors import ReasonerError
from memgym.backends.openai_http import OpenAIChatReasoner
from memgym.core.chat import ImagePart, Message, TextPart
from memgym.core.errors import ConfigError


@pytest.fixture
def endpoint():
    server = FakeEndpoint()
    yield server
    server.close()


def make_client(endpoint: FakeEndpoint, **kwargs) -> tuple[OpenAIChatReasoner, list[float]]:
    delays: list[float] = []
    options = {"timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.5, "sleep": delays.append, "api_key": "k"}
    options.update(kwargs)
    return OpenAIChatReasoner("tiny-model", endpoint.base_url, **options), delays


def test_request_payload_is_pinned_and_reply_is_returned(endpoint):
    client, _ = make_client(endpoint)
    endpoint.script = [("reply", "  Amelia  ")]
    reply = client.generate(
        [Message.text("system", "be brief"), Message.text("user", "who owns it?")], max_new_tokens=7
    )
    assert reply == "Amelia"
    body = endpoint.requests[0]
    assert body["model"] == "tiny-model" and body["temperature"] == 0.0 and body["max_tokens"] == 7
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "who owns it?"}]
    assert endpoint.headers[0]["Authorization"] == "Bearer k"


def test_images_are_sent_as_data_urls(endpoint):
    client, _ = make_client(endpoint)
    image = np.zeros((4, 5, 3), np.uint8)
    client.generate([Message("user", (TextPart("what is this"), ImagePart(image)))])
    parts = endpoint.requests[0]["messages"][0]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_server_errors_are_retried_with_exponential_backoff(endpoint):
    client, delays = make_client(endpoint)
    endpoint.script = [("status", 500), ("status", 503), ("reply", "ok")]
    assert client.generate([Message.text("user", "hi")]) == "ok"
    assert delays == [0.5, 1.0]
    assert len(endpoint.requests) == 3


def test_persistent_failure_raises_reasoner_error_naming_the_cause(endpoint):
    client, delays = make_client(endpoint)
    endpoint.script = [("status", 500)] * 3
    with pytest.raises(ReasonerError, match=r"failed after 3 attempts; last error: HTTP 500"):
        client.generate([Message.text("user", "hi")])
    assert delays == [0.5, 1.0]


def test_client_errors_are_not_retried(endpoint):
    client, delays = make_client(endpoint)
    endpoint.script = [("status", 404)]
    with pytest.raises(ReasonerError, match="HTTP 404"):
        client.generate([Message.text("user", "hi")])
    assert delays == [] and len(endpoint.requests) == 1


def test_timeouts_are_retried_then_reported(endpoint):
    client, delays = make_client(endpoint, timeout_s=0.2, max_retries=1)
    endpoint.script = [("sleep", 0.6), ("sleep", 0.6)]
    with pytest.raises(ReasonerError, match="timed out"):
        client.generate([Message.text("user", "hi")])
    assert delays == [0.5]


def test_timeout_then_success(endpoint):
    client, _ = make_client(endpoint, timeout_s=0.2, max_retries=1)
    endpoint.script = [("sleep", 0.6), ("reply", "fine")]
    assert client.generate([Message.text("user", "hi")]) == "fine"


def test_malformed_reply_is_a_reasoner_error(endpoint):
    client, _ = make_client(endpoint)
    endpoint.script = [("raw", b"<html>not json</html>")]
    with pytest.raises(ReasonerError, match="not a chat completion"):
        client.generate([Message.text("user", "hi")])


def test_unreachable_endpoint_fails_at_once_without_retries():
    delays: list[float] = []
    client = OpenAIChatReasoner("m", "http://127.0.0.1:9/v1", max_retries=3, backoff_s=5, sleep=delays.append)
    start = time.monotonic()
    with pytest.raises(ReasonerError, match="cannot connect .*is the server running"):
        client.generate([Message.text("user", "hi")])
    assert delays == [] and time.monotonic() - start < 2.0


def test_connect_timeout_bounds_a_silent_endpoint():
    """A host that never accepts (a full listen backlog here) fails after connect_timeout_s, not timeout_s x retries."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        fillers = []
        for _ in range(8):  # fill the backlog so further connects hang
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(listener.getsockname())
            fillers.append(filler)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        client = OpenAIChatReasoner("m", url, timeout_s=30, connect_timeout_s=0.3, max_retries=3, sleep=lambda s: None)
        start = time.monotonic()
        with pytest.raises(ReasonerError, match=r"cannot connect \(no answer within 0.3 s\)"):
            client.generate([Message.text("user", "hi")])
        assert time.monotonic() - start < 5.0
        start = time.monotonic()
        with pytest.raises(ReasonerError, match="not tried again for 30 s"):  # the next item does not wait
            client.generate([Message.text("user", "hi")])
        assert time.monotonic() - start < 0.2
        for filler in fillers:
            filler.close()


def test_build_from_config_and_bad_config():
    reasoner = build_reasoner(ReasonerConfig(backend="openai", model="m", base_url="http://127.0.0.1:1/v1"))
    assert isinstance(reasoner, OpenAIChatReasoner)
    with pytest.raises(ConfigError, match="base_url"):
        build_reasoner(ReasonerConfig(backend="openai", model="m", base_url="localhost:8000"))


def test_context_overflow_is_over_context_not_retried(endpoint):
    from memgym.backends.errors import OverContextError

    message = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    endpoint.script = [("error", (400, message))]
    client, delays = make_client(endpoint)
    with pytest.raises(OverContextError, match="exceeds the model's context"):
        client.generate([Message.text("user", "hi")])
    assert delays == [] and len(endpoint.requests) == 1


def test_audio_parts_travel_as_input_audio(endpoint):
    from memgym.core.chat import AudioPart, decode_wav

    endpoint.script = [("reply", "ok")]
    client, _ = make_client(endpoint)
    audio = (0.25 * np.sin(np.arange(800) / 7)).astype(np.float32)
    client.generate([Message("user", (TextPart("Session 1\n"), AudioPart(audio, 16000))), Message.text("user", "q")])
    part = endpoint.requests[0]["messages"][0]["content"][1]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    import base64

    decoded, rate = decode_wav(base64.b64decode(part["input_audio"]["data"]))
    assert rate == 16000 and np.allclose(decoded, audio, atol=1e-4)


def test_one_line_replies_stop_at_the_first_line_end(endpoint):
    client, _ = make_client(endpoint)
    messages = [Message.text("user", "whose mug is it?")]
    endpoint.script = [("reply", "Amelia's\nbecause she said so"), ("reply", ""), ("reply", "\n\n  the red one \nmore")]
    assert client.generate_line(messages, max_new_tokens=5) == "Amelia's"  # a server ignoring stop
    assert endpoint.requests[0]["stop"] == ["\n"] and endpoint.requests[0]["max_tokens"] == 5
    assert client.generate_line(messages, max_new_tokens=5) == "the red one"  # empty: asked again
    assert "stop" not in endpoint.requests[2]


class _Tracking:
    """A ``respond`` for :class:`FakeEndpoint` that waits ``delay_s``, answers the prompt upper-cased
    and records the most requests it served at once."""

    def __init__(self, delay_s: float) -> None:
        import threading

        self.delay_s, self.now, self.most = delay_s, 0, 0
        self.lock = threading.Lock()

    def __call__(self, text: str) -> str:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.delay_s)
        with self.lock:
            self.now -= 1
        return text.upper()


def test_generate_many_keeps_concurrency_requests_in_flight_and_the_item_order():
    respond = _Tracking(0.3)
    server = FakeEndpoint(respond)
    try:
        client = OpenAIChatReasoner("m", server.base_url, concurrency=4)
        requests = [[Message.text("user", f"q{i}")] for i in range(10)]
        assert client.generate_many(requests) == [f"Q{i}" for i in range(10)]
        assert respond.most == 4  # never more than concurrency, and that many at once
        one = OpenAIChatReasoner("m", server.base_url, concurrency=1)
        respond.most = 0
        assert one.generate_many(requests[:3]) == ["Q0", "Q1", "Q2"] and respond.most == 1
    finally:
        server.close()


def test_generate_many_reports_failures_in_place_or_raises_the_first(endpoint):
    client, delays = make_client(endpoint, concurrency=3, max_retries=1)
    endpoint.script = [("status", 400)]  # whichever request arrives first is refused, not retried
    replies = client.generate_many([[Message.text("user", f"q{i}")] for i in range(5)], return_errors=True)
    failed = [r for r in replies if isinstance(r, ReasonerError)]
    assert len(failed) == 1 and "HTTP 400" in str(failed[0]) and replies.count("default") == 4
    endpoint.script = [("status", 503), ("status", 503)]  # one request: both tries refused
    with pytest.raises(ReasonerError, match="failed after 2 attempts; last error: HTTP 503"):
        client.generate_many([[Message.text("user", "only")]])
    assert delays == [0.5]


def test_concurrency_comes_from_the_config():
    config = ReasonerConfig(backend="openai", model="m", base_url="http://127.0.0.1:9/v1", concurrency=3)
    assert build_reasoner(config).concurrency == 3 and ReasonerConfig().concurrency == 8
    with pytest.raises(ConfigError, match="concurrency >= 1"):
        OpenAIChatReasoner("m", "http://127.0.0.1:9/v1", concurrency=0)


def test_retry_after_is_honoured_when_longer_than_the_backoff(endpoint):
    client, delays = make_client(endpoint)
    endpoint.script = [("retry_after", (429, "3")), ("retry_after", (503, "0.1")), ("reply", "ok")]
    assert client.generate([Message.text("user", "hi")]) == "ok"
    assert delays == [3.0, 1.0]  # the server's 3 s, then the backoff (1 s) over its 0.1 s
