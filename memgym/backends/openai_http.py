"""OpenAI-compatible ``/chat/completions`` client: vLLM, llama.cpp server, hosted APIs.

Requests are plain JSON over ``http.client`` (no extra dependency), with temperature 0 and a
fixed seed. A reply that times out (``timeout_s``), a connection dropped mid-request, 408, 409,
429 or any 5xx answer is retried after ``backoff_s * 2**attempt`` seconds (or the server's
``Retry-After``, up to 60 s, when longer), up to ``max_retries`` times; other 4xx answers (a wrong model name, a bad key) fail at once, and so does an endpoint
that cannot be reached at all (connection refused, unknown host, or no connection within
``connect_timeout_s``, 10 s by default), so an eval against a server that is down fails each item
at once instead of retrying for minutes; after a connection attempt that got no answer, requests in
the next ``SILENT_HOLD_S`` seconds fail without trying. A 400/413 saying the prompt exceeds the
model's context raises :class:`~memgym.backends.errors.OverContextError` (the item is over context,
not cut). Audio parts travel as ``input_audio`` (base64 WAV), which vLLM serves for audio LMs.
:meth:`OpenAIChatReasoner.generate_many` keeps ``concurrency`` requests in flight (8 by default,
``reasoner.concurrency=`` / ``judge.concurrency=``; one thread and connection each) and returns the
replies in request order. :meth:`OpenAIChatReasoner.post` is shared with other endpoints of the same server
(``/audio/transcriptions``). A request that still fails raises
:class:`~memgym.backends.errors.ReasonerError` with the endpoint, the attempts and the last cause,
which evaluation loops record for that item before going on.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.parse
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from memgym.backends.config import ReasonerConfig
from memgym.backends.errors import OverContextError, ReasonerError
from memgym.core.chat import Message, to_openai_messages
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.registry import register_reasoner

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
CONNECT_TIMEOUT_S = 10.0
"""Seconds to reach an endpoint when built from a config (or ``timeout_s`` if shorter)."""
_CONTEXT_MESSAGE = re.compile(
    r"context length|context window|maximum context|context_length_exceeded|too many tokens|prompt is too long",
    re.IGNORECASE,
)
"""What vLLM, llama.cpp and hosted APIs say when a prompt does not fit the model's context."""
MAX_RETRY_AFTER_S = 60.0
"""Longest wait a server's ``Retry-After`` gets before the next try."""
SILENT_HOLD_S = 30.0
"""After a connection attempt got no answer, requests in the next this many seconds fail at once."""


@register_reasoner("openai")
class OpenAIChatReasoner(Reasoner):
    """Client of one model behind an OpenAI-compatible endpoint.

    Args:
        model: the served model name.
        base_url: endpoint root ending before ``/chat/completions`` (e.g. ``http://host:8000/v1``).
        api_key: bearer token; None reads ``api_key_env`` (a missing key sends no header).
        timeout_s: seconds to wait for a reply.
        connect_timeout_s: seconds to wait for the connection (then fail without retrying).
        max_retries: retries after a retryable failure.
        backoff_s: delay before the first retry, doubled each time.
        seed: sent as ``seed`` for servers that honour it.
        concurrency: requests :meth:`generate_many` keeps in flight (one thread and connection each).
        sleep: the delay function (tests pass a recorder).
    """

    name = "openai"
    io_bound = True

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        seed: int = 0,
        concurrency: int = 8,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"openai reasoner: base_url must start with http:// or https://, got {base_url!r}")
        if not model:
            raise ConfigError("openai reasoner: 'model' must name the served model")
        if max_retries < 0 or timeout_s <= 0 or connect_timeout_s <= 0 or backoff_s < 0 or concurrency < 1:
            raise ConfigError(
                "openai reasoner: need max_retries >= 0, timeout_s > 0, connect_timeout_s > 0, backoff_s >= 0 "
                "and concurrency >= 1"
            )
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        parts = urllib.parse.urlsplit(self.url)
        if not parts.hostname:
            raise ConfigError(f"openai reasoner: base_url {base_url!r} names no host")
        self._secure = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port or (443 if self._secure else 80)
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.root_path = parts.path.removesuffix("/chat/completions")
        self.connect_timeout_s = connect_timeout_s
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env, "")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.seed = seed
        self.concurrency = concurrency
        self.sleep = sleep
        self._silent_until = -1.0  # time.monotonic() before which the endpoint counts as unreachable
        self._silent_reason = ""

    @classmethod
    def from_config(cls, config: ReasonerConfig) -> OpenAIChatReasoner:
        """Build from a :class:`ReasonerConfig`."""
        return cls(
            config.model,
            config.base_url,
            api_key_env=config.api_key_env,
            timeout_s=config.timeout_s,
            connect_timeout_s=min(CONNECT_TIMEOUT_S, config.timeout_s),
            max_retries=config.max_retries,
            backoff_s=config.backoff_s,
            seed=config.seed,
            concurrency=config.concurrency,
        )

    def payload(self, messages: Sequence[Message], max_new_tokens: int) -> dict[str, Any]:
        """The JSON body sent for ``messages``."""
        return {
            "model": self.model,
            "messages": to_openai_messages(messages),
            "max_tokens": int(max_new_tokens),
            "temperature": 0.0,
            "seed": self.seed,
        }

    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        body = json.dumps(self.payload(messages, max_new_tokens)).encode()
        return _reply_text(self.post(self._path, body, "application/json"), self.url)

    def generate_many(
        self, requests: Sequence[Sequence[Message]], *, max_new_tokens: int = 256, return_errors: bool = False
    ) -> list[Any]:
        """Replies to each chat of ``requests`` in their order, with up to :attr:`concurrency`
        requests in flight (each retried as :meth:`post` does); a server that batches (vLLM,
        llama.cpp with ``--parallel``) answers them side by side.

        Args:
            return_errors: put a failed request's :class:`ReasonerError` in its place instead of
                raising the first one (in request order) once all have finished.
        """
        if self.concurrency == 1 or len(requests) < 2:
            return super().generate_many(requests, max_new_tokens=max_new_tokens, return_errors=return_errors)

        def one(messages: Sequence[Message]) -> Any:
            try:
                return self.generate(messages, max_new_tokens=max_new_tokens)
            except ReasonerError as exc:
                if not return_errors:
                    raise
                return exc

        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests)), thread_name_prefix="openai") as pool:
            futures = [pool.submit(one, messages) for messages in requests]
            wait(futures)
        return [future.result() for future in futures]

    def generate_line(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        """The first non-empty line of :meth:`generate`'s reply: the server is asked to stop at the
        first line end (``"stop": ["\\n"]``, so short answers cost few tokens); a reply that opened
        with a line end, and so came back empty, is asked for again without the stop. Lines after
        the first (a server that ignores ``stop``) are dropped."""
        body = json.dumps({**self.payload(messages, max_new_tokens), "stop": ["\n"]}).encode()
        reply = _reply_text(self.post(self._path, body, "application/json"), self.url)
        if not reply:
            reply = self.generate(messages, max_new_tokens=max_new_tokens)
        return next((line.strip() for line in reply.splitlines() if line.strip()), "")

    def post(self, path: str, body: bytes, content_type: str) -> bytes:
        """POST ``body`` to ``path`` on this endpoint's server; the raw answer (module docstring).

        Args:
            path: absolute path, e.g. :attr:`_path` or ``<root>/audio/transcriptions``.
        Raises:
            OverContextError: the server said the prompt exceeds the model's context.
            ReasonerError: any other failure, after the retries.
        """
        url = f"{'https' if self._secure else 'http'}://{self._host}:{self._port}{path}"
        headers = {"Content-Type": content_type}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last, wait_s = "", 0.0
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.sleep(max(self.backoff_s * 2 ** (attempt - 1), wait_s))
            connection = self._connect()
            try:
                connection.request("POST", path, body=body, headers=headers)
                response = connection.getresponse()
                raw = response.read()
            except TimeoutError as exc:
                last = f"timed out after {self.timeout_s:g} s ({exc})"
                continue
            except (http.client.HTTPException, OSError) as exc:
                last = f"connection failed ({type(exc).__name__}: {exc})"
                continue
            finally:
                connection.close()
            if response.status >= 400:
                detail = raw[:300].decode("utf-8", "replace")
                last = f"HTTP {response.status}: {detail}"
                if response.status in (400, 413) and _CONTEXT_MESSAGE.search(detail):
                    raise OverContextError(f"{url}: the prompt exceeds the model's context ({last})")
                if response.status not in RETRY_STATUS:
                    raise ReasonerError(f"{url}: {last}")
                wait_s = _retry_after(response.getheader("Retry-After"))
                continue
            return raw
        raise ReasonerError(f"{url}: failed after {self.max_retries + 1} attempts; last error: {last}")

    def _connect(self) -> http.client.HTTPConnection:
        """An open connection whose reads time out after ``timeout_s``.

        Raises:
            ReasonerError: the endpoint cannot be reached within ``connect_timeout_s`` (not retried).
        """
        if time.monotonic() < self._silent_until:
            raise ReasonerError(self._silent_reason + f" (not tried again for {SILENT_HOLD_S:g} s)")
        cls = http.client.HTTPSConnection if self._secure else http.client.HTTPConnection
        connection = cls(self._host, self._port, timeout=self.connect_timeout_s)
        try:
            connection.connect()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            reason = "no answer" if isinstance(exc, TimeoutError) else str(exc)
            message = (
                f"{self.url}: cannot connect ({reason} within {self.connect_timeout_s:g} s); is the server running?"
            )
            if isinstance(exc, TimeoutError):  # a silent host costs connect_timeout_s per try: hold off
                self._silent_until, self._silent_reason = time.monotonic() + SILENT_HOLD_S, message
            raise ReasonerError(message) from None
        connection.sock.settimeout(self.timeout_s)
        return connection


def _retry_after(header: str | None) -> float:
    """Seconds a ``Retry-After`` header asks for (its number form), at most :data:`MAX_RETRY_AFTER_S`;
    0 without one or for its date form."""
    try:
        return min(max(float(header or 0), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return 0.0


def _reply_text(raw: bytes, url: str) -> str:
    try:
        reply = json.loads(raw)
        content = reply["choices"][0]["message"]["content"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise ReasonerError(f"{url}: reply is not a chat completion: {raw[:200]!r}") from None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if not isinstance(content, str):
        raise ReasonerError(f"{url}: reply content is {type(content).__name__}, expected text")
    return content.strip()
