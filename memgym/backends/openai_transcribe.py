"""OpenAI-compatible ``/audio/transcriptions`` client (vLLM Whisper servers, hosted APIs).

:class:`OpenAITranscriber` sends one turn as a 16-bit WAV file in a multipart form (``model``,
``temperature=0``, ``response_format=json``, optional ``language``) and returns the ``text`` of the
JSON answer. Connection handling, retries and errors are those of
:class:`~memgym.backends.openai_http.OpenAIChatReasoner` (its :meth:`post`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

import numpy as np

from memgym.backends.errors import ReasonerError
from memgym.backends.openai_http import OpenAIChatReasoner
from memgym.core.chat import encode_wav
from memgym.core.errors import ConfigError


class OpenAITranscriber:
    """Speech-to-text through an OpenAI-compatible endpoint.

    Args:
        model: the served ASR model (``whisper-1``, ``openai/whisper-large-v3``).
        base_url: endpoint root before ``/audio/transcriptions``.
        language: ISO-639-1 code sent as a hint (empty: none).
        api_key: bearer token; None reads ``api_key_env``.
        timeout_s, max_retries, backoff_s, sleep: as for the chat client.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        language: str = "en",
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise ConfigError("openai transcriber: 'model' must name the served ASR model")
        self.model = model
        self.language = language
        self.client = OpenAIChatReasoner(
            model, base_url, api_key=api_key, api_key_env=api_key_env, timeout_s=timeout_s,
            max_retries=max_retries, backoff_s=backoff_s, sleep=sleep,
        )  # fmt: skip
        self.path = self.client.root_path + "/audio/transcriptions"
        self.url = base_url.rstrip("/") + "/audio/transcriptions"

    def identity(self) -> str:
        """Names the model and endpoint (for transcript caches)."""
        return f"openai-asr:{self.model}@{self.url}:{self.language}:t=0"

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        """The words of ``audio`` (``(N,)`` float32 in [-1, 1]) at ``sample_rate`` Hz."""
        fields = {"model": self.model, "temperature": "0", "response_format": "json"}
        if self.language:
            fields["language"] = self.language
        body, content_type = multipart_body(fields, "file", "turn.wav", encode_wav(audio, sample_rate))
        raw = self.client.post(self.path, body, content_type)
        try:
            text = json.loads(raw)["text"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ReasonerError(f"{self.url}: reply is not a transcription: {raw[:200]!r}") from None
        if not isinstance(text, str):
            raise ReasonerError(f"{self.url}: transcription text is {type(text).__name__}, expected a string")
        return text.strip()


def multipart_body(fields: dict[str, str], file_field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    """``multipart/form-data`` body with text ``fields`` and one file; returns (body, content type)."""
    boundary = "memgym-" + hashlib.sha256(data).hexdigest()[:32]
    lines: list[bytes] = []
    for name, value in fields.items():
        lines += [
            f"--{boundary}".encode(),
            f'Content-Disposition: form-data; name="{name}"'.encode(),
            b"",
            value.encode(),
        ]
    lines += [
        f"--{boundary}".encode(),
        f'Content-Disposition: form-data; name="{file_field}"; filename="{filename}"'.encode(),
        b"Content-Type: audio/wav",
        b"",
        data,
        f"--{boundary}--".encode(),
        b"",
    ]
    return b"\r\n".join(lines), f"multipart/form-data; boundary={boundary}"
