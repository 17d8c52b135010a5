"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for backend tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeEndpoint:
    """An OpenAI-compatible server answering from a script of (kind, value) steps.

    Kinds: ``reply`` (a chat completion with that text), ``raw`` (those bytes), ``status`` (that
    HTTP code), ``error`` (``(code, message)``), ``retry_after`` (``(code, seconds)``: that code with
    a ``Retry-After`` header), ``sleep`` (wait, then reply). JSON bodies are
    recorded parsed, others (multipart uploads) as bytes. With ``respond``, a request the script does
    not cover is answered with ``respond(last message's content)``, and :attr:`prompts` records them.
    Every request is answered after ``delay_s`` seconds (a model computing); :attr:`max_in_flight`
    is the most requests it has held at once.
    """

    def __init__(self, respond: Callable[[str], str] | None = None, delay_s: float = 0.0) -> None:
        self.script: list[tuple[str, object]] = []
        self.in_flight = self.max_in_flight = 0
        lock = threading.Lock()
        self.prompts: list[str] = []
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.paths: list[str] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                with lock:
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                try:
                    time.sleep(delay_s)
                    self.answer()
                finally:
                    with lock:
                        endpoint.in_flight -= 1

            def answer(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                is_json = self.headers.get("Content-Type", "").startswith("application/json")
                body = json.loads(raw) if is_json else raw
                endpoint.requests.append(body)
                endpoint.paths.append(self.path)
                endpoint.headers.append(dict(self.headers))
                if endpoint.script:
                    kind, value = endpoint.script.pop(0)
                elif respond is not None:  # this request's prompt (others may be answered meanwhile)
                    endpoint.prompts.append(body["messages"][-1]["content"])
                    kind, value = "reply", respond(body["messages"][-1]["content"])
                else:
                    kind, value = "reply", "default"
                if kind == "sleep":
                    time.sleep(float(value))
                    kind, value = "reply", "late"
                if kind in ("status", "error", "retry_after"):
                    code, message = (value, "scripted") if kind == "status" else value
                    self.send_response(int(code))
                    if kind == "retry_after":
                        self.send_header("Retry-After", str(message))
                    self.end_headers()
                    self.wfile.write(json.dumps({"error": message}).encode())
                    return
                payload = (
                    value
                    if kind == "raw"
                    else json.dumps({"choices": [{"message": {"role": "assistant", "content": value}}]}).encode()
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
