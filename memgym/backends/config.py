"""Typed settings for building a reasoner or judge backend by name.

Every job that needs a model (dataset writers, agents, the LLM-match judge) takes a
:class:`ReasonerConfig` and calls :func:`build_reasoner`. On the command line the fields are
nested keys, e.g. ``reasoner.backend=hf reasoner.model=/models/Qwen3-VL-4B-Instruct`` or
``judge.backend=openai judge.model=qwen3-vl judge.base_url=http://127.0.0.1:8000/v1``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field

from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.registry import REASONERS
from memgym.core.seeding import ADDED_FIELD, NOT_HASHED


@dataclasses.dataclass(frozen=True)
class ReasonerConfig:
    """Which model answers, and how it is reached."""

    backend: str = field(
        default="structured",
        metadata={
            "help": "registered reasoner: 'structured' (offline, symbolic), 'hf' (transformers), 'openai' (HTTP)"
        },
    )
    model: str = field(default="", metadata={"help": "hf: local folder or hub id; openai: the served model name"})
    base_url: str = field(
        default="", metadata={"help": "openai: endpoint root, e.g. http://127.0.0.1:8000/v1 (vLLM, llama.cpp)"}
    )
    api_key_env: str = field(default="OPENAI_API_KEY", metadata={"help": "openai: environment variable with the key"})
    timeout_s: float = field(default=120.0, metadata={"help": "openai: seconds before one request times out"})
    max_retries: int = field(default=3, metadata={"help": "openai: retries after a timeout, 429 or 5xx"})
    backoff_s: float = field(default=1.0, metadata={"help": "openai: first retry delay, doubled each retry"})
    device: str = field(default="cpu", metadata={"help": "hf: torch device ('cpu', 'cuda', 'cuda:1')"})
    dtype: str = field(default="auto", metadata={"help": "hf: torch dtype ('auto', 'float32', 'bfloat16')"})
    gguf_file: str = field(default="", metadata={"help": "hf: GGUF file name inside the model folder, if any"})
    seed: int = field(default=0, metadata={"help": "sampling seed sent to endpoints (decoding is greedy)"})
    max_new_tokens: int = field(default=128, metadata={"help": "longest reply in tokens"})
    concurrency: int = field(
        default=8,
        metadata={
            "help": "openai: requests kept in flight by generate_many, and episodes an eval plays at once "
            "(1: one at a time)",
            "min": 1,
            **NOT_HASHED,
            **ADDED_FIELD,
        },
    )
    threads: int = field(
        default=0,
        metadata={
            "help": "hf: torch CPU threads while generating (0 = torch's default; 1 is often much faster on a busy CPU)",
            "min": 0,
            **ADDED_FIELD,
        },
    )

    def identity(self) -> str:
        """A string naming the pinned model (backend, model, seed) for caches and results."""
        return f"{self.backend}:{self.model}:{self.gguf_file}:seed={self.seed}:t=0"


def build_reasoner(config: ReasonerConfig) -> Reasoner:
    """Instantiate the registered reasoner ``config.backend`` from its settings.

    Raises:
        ConfigError: a backend that needs a model or URL was given none.
    """
    cls = REASONERS.get(config.backend)
    from_config = getattr(cls, "from_config", None)
    if from_config is None:
        raise ConfigError(f"reasoner '{config.backend}' cannot be built from a ReasonerConfig")
    return from_config(config)


def concurrent_items(*configs: ReasonerConfig) -> int:
    """Items an evaluation using the models of ``configs`` may play at once: the smallest
    ``concurrency`` when every backend declares itself :attr:`~memgym.core.protocols.Reasoner.io_bound`
    (an HTTP client: the work is the server's, each thread builds its own client), else 1."""
    if not all(getattr(REASONERS.get(c.backend), "io_bound", False) for c in configs):
        return 1
    return min((c.concurrency for c in configs), default=1)
