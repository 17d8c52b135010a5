"""OpenAI-compatible ``/chat/completions`` client: vLLM, llama.cpp server, hosted APIs.

Requests are plain JSON over ``urllib`` (no extra dependency), with temperature 0 and a fixed
seed. A timeout, a connection error, 408, 409, 429 or any 5xx answer is retried after
``backoff_s * 2**attempt`` seconds, up to ``max_retries`` times; other 4xx answers (a wrong model
name, a bad key) fail at once; a 400/413 saying the prompt exceeds the model's context raises
:class:`~memgym.backends.errors.OverContextError` (the item is over context, not cut). Audio parts
travel as ``input_audio`` (base64 WAV), which vLLM serves for audio LMs. A request that still fails raises
:class:`~memgym.backends.errors.ReasonerError` with the endpoint, the attempts and the last cause,
which evaluation loops record for that item before going on.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from memgym.backends.config import ReasonerConfig
from memgym.backends.errors import OverContextError, ReasonerError
from memgym.core.chat import Message, to_openai_messages
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.registry import register_reasoner

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_CONTEXT_MESSAGE = re.compile(
    r"context length|context window|maximum context|context_length_exceeded|too many tokens|prompt is too long",
    re.IGNORECASE,
)
"""What vLLM, llama.cpp and hosted APIs say when a prompt does not fit the model's context."""


@register_reasoner("openai")
class OpenAIChatReasoner(Reasoner):
    """Client of one model behind an OpenAI-compatible endpoint.

    Args:
        model: the served model name.
        base_url: endpoint root ending before ``/chat/completions`` (e.g. ``http://host:8000/v1``).
        api_key: bearer token; None reads ``api_key_env`` (a missing key sends no header).
        timeout_s: seconds per request.
        max_retries: retries after a retryable failure.
        backoff_s: delay before the first retry, doubled each time.
        seed: sent as ``seed`` for servers that honour it.
        sleep: the delay function (tests pass a recorder).
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"openai reasoner: base_url must start with http:// or https://, got {base_url!r}")
        if not model:
            raise ConfigError("openai reasoner: 'model' must name the served model")
        if max_retries < 0 or timeout_s <= 0 or backoff_s < 0:
            raise ConfigError("openai reasoner: need max_retries >= 0, timeout_s > 0 and backoff_s >= 0")
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env, "")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.seed = seed
        self.sleep = sleep

    @classmethod
    def from_config(cls, config: ReasonerConfig) -> OpenAIChatReasoner:
        """Build from a :class:`ReasonerConfig`."""
        return cls(
            config.model,
            config.base_url,
            api_key_env=config.api_key_env,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            backoff_s=config.backoff_s,
            seed=config.seed,
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
        headers = {"Content-Type": "application/json"}
        raw = post_with_retries(
            self.url, body, headers, self.api_key, timeout_s=self.timeout_s, max_retries=self.max_retries,
            backoff_s=self.backoff_s, sleep=self.sleep,
        )  # fmt: skip
        return _reply_text(raw, self.url)


def post_with_retries(
    url: str,
    body: bytes,
    headers: dict[str, str],
    api_key: str,
    *,
    timeout_s: float,
    max_retries: int,
    backoff_s: float,
    sleep: Callable[[float], None],
) -> bytes:
    """POST ``body`` and return the raw answer, retrying as the module docstring says.

    Raises:
        OverContextError: the server answered 400/413 saying the prompt exceeds its context.
        ReasonerError: any other failure after the retries.
    """
    headers = dict(headers)
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    last = ""
    for attempt in range(max_retries + 1):
        if attempt:
            sleep(backoff_s * 2 ** (attempt - 1))
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            last = f"HTTP {exc.code}: {detail}"
            if exc.code in (400, 413) and _CONTEXT_MESSAGE.search(detail):
                raise OverContextError(f"{url}: the prompt exceeds the model's context ({last})") from None
            if exc.code not in RETRY_STATUS:
                raise ReasonerError(f"{url}: {last}") from None
            continue
        except TimeoutError as exc:
            last = f"timed out after {timeout_s:g} s ({exc})"
            continue
        except urllib.error.URLError as exc:
            last = f"cannot connect ({exc.reason})"
            continue
        except (ConnectionError, OSError) as exc:
            last = f"connection failed ({exc})"
            continue
    raise ReasonerError(f"{url}: failed after {max_retries + 1} attempts; last error: {last}")


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
