"""OpenAI-compatible client: requests in flight (``generate_many``, concurrency 8) vs one at a
time, against a local fake server that answers each chat completion after a fixed delay (a model
server that batches, like vLLM, answers concurrent requests in about the time of one).

    python -m speed openai_concurrency [REQUESTS] [DELAY_S]     # default 48 requests, 0.2 s
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from memgym.backends.openai_http import OpenAIChatReasoner
from memgym.core.chat import Message
from speed.harness import report, time_best


def delayed_server(delay_s: float, reply: Callable[[object], str] = lambda content: str(content).upper()):
    """A server on 127.0.0.1 (a :class:`ThreadingHTTPServer`) answering every POST with a chat
    completion after ``delay_s`` seconds: ``reply(content of the last message)``, by default its upper case."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(delay_s)
            text = reply(body["messages"][-1]["content"])
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 48
    delay_s = float(argv[1]) if len(argv) > 1 else 0.2
    server = delayed_server(delay_s)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        requests = [[Message.text("user", f"question {i}")] for i in range(n)]
        concurrent = OpenAIChatReasoner("fake", url, concurrency=8)
        single = OpenAIChatReasoner("fake", url, concurrency=1)
        replies = concurrent.generate_many(requests)
        assert replies == [f"QUESTION {i}" for i in range(n)], "replies out of order"
        report(
            f"openai_concurrency: {n} chat requests, server delay {delay_s:g} s",
            time_best("generate_many, concurrency=8", lambda: concurrent.generate_many(requests), units=n,
                      unit_name="requests", repeats=2),
            time_best("one at a time (concurrency=1)", lambda: single.generate_many(requests), units=n,
                      unit_name="requests", repeats=1),
            [f"ideal: 8.00x (each request waits {delay_s:g} s on the server)"],
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
