"""Audio language models from ``transformers``: typed chat with audio parts -> each processor's format.

One :class:`AudioChatFormat` per model family says which model class generates text, how an
:class:`~memgym.core.chat.AudioPart` appears in the chat-template message (the template renders the
family's audio placeholder for it) and which keyword carries the waveforms to the processor:

=================  ===============================================  =====================================
family             model class (text output)                        audio content part
=================  ===============================================  =====================================
``qwen2_audio``    ``Qwen2AudioForConditionalGeneration``           ``{"type": "audio", "audio_url": id}``
``qwen2_5_omni``   ``Qwen2_5OmniThinkerForConditionalGeneration``   ``{"type": "audio", "audio": id}``
``qwen3_omni``     ``Qwen3OmniMoeThinkerForConditionalGeneration``  ``{"type": "audio", "audio": id}``
=================  ===============================================  =====================================

The chat template is the model folder's own (``processor.apply_chat_template``); the waveforms
(16 kHz mono float32) go to ``processor(text=..., audio=[...], sampling_rate=16000)`` in the order
their parts appear. Audio Flamingo 3 takes one recording per prompt and Voxtral's processor
needs ``mistral_common``; neither can read a multi-turn spoken history as separate turns here,
so neither is offered.

Context limits are respected, never worked around: a clip longer than the feature extractor's
window (30 s for Whisper-style encoders, which would cut it) or an encoded prompt longer than
``max_context_tokens`` (default: the text model's ``max_position_embeddings``) minus the reply
budget raises :class:`~memgym.backends.errors.OverContextError`, which evaluation records as
``over_context`` for that model and item. Decoding is greedy under a fixed torch seed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.backends.config import ReasonerConfig
from memgym.backends.errors import OverContextError, ReasonerError
from memgym.backends.hf import position_limit, timed_generate
from memgym.backends.throughput import Throughput
from memgym.core.chat import AudioPart, ImagePart, Message, TextPart, mono_at
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.registry import register_reasoner

SAMPLE_RATE = 16000
"""Rate every family's feature extractor expects (Hz); other rates are resampled linearly."""


@dataclasses.dataclass(frozen=True)
class AudioChatFormat:
    """How one model family reads chat with audio.

    Attributes:
        model_class: ``transformers`` class that generates text.
        audio_key: key of the audio reference inside an ``{"type": "audio"}`` content part.
    """

    model_class: str
    audio_key: str


AUDIO_FORMATS: dict[str, AudioChatFormat] = {
    "qwen2_audio": AudioChatFormat("Qwen2AudioForConditionalGeneration", "audio_url"),
    "qwen2_5_omni": AudioChatFormat("Qwen2_5OmniThinkerForConditionalGeneration", "audio"),
    "qwen3_omni": AudioChatFormat("Qwen3OmniMoeThinkerForConditionalGeneration", "audio"),
}
"""Family name -> its chat format (see the module docstring)."""

FAMILY_OF_MODEL_TYPE: dict[str, str] = {
    "qwen2_audio": "qwen2_audio",
    "qwen2_5_omni": "qwen2_5_omni",
    "qwen2_5_omni_thinker": "qwen2_5_omni",
    "qwen3_omni_moe": "qwen3_omni",
    "qwen3_omni_moe_thinker": "qwen3_omni",
}
"""``model_type`` in a model folder's ``config.json`` -> family (used when no family is given)."""


def to_audio_chat(messages: Sequence[Message], fmt: AudioChatFormat) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """Chat-template messages for ``fmt`` and the ``(N,) float32`` 16 kHz waveforms in order.

    Every message's content is a list of parts (text parts ``{"type": "text", "text": ...}``); an
    audio part is ``{"type": "audio", fmt.audio_key: "audio-<k>"}`` with ``k`` its 0-based index
    among the returned waveforms.

    Raises:
        ReasonerError: a message holds an image (audio LMs here take text and audio only).
    """
    out, audios = [], []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            elif isinstance(part, AudioPart):
                parts.append({"type": "audio", fmt.audio_key: f"audio-{len(audios)}"})
                audios.append(mono_at(part.waveform, part.sample_rate, SAMPLE_RATE))
            elif isinstance(part, ImagePart):
                raise ReasonerError("audio language models take text and audio parts, not images")
        out.append({"role": message.role, "content": parts})
    return out, audios


@register_reasoner("hf_audio")
class HFAudioReasoner(Reasoner):
    """An audio-text-to-text model from ``transformers`` (see the module docstring).

    Args:
        model: local folder (or hub id) with the model, its processor and chat template.
        family: key of :data:`AUDIO_FORMATS`; empty reads it from the folder's ``model_type``.
        device: torch device string.
        dtype: ``"auto"`` or a torch dtype name.
        max_context_tokens: context limit in tokens; 0 reads the text model's
            ``max_position_embeddings``.
        seed: torch seed set before each generation.
        threads: torch CPU threads while generating (0: leave torch's setting).

    ``throughput`` counts the prompt and generated tokens and seconds of every reply
    (:mod:`memgym.backends.throughput`).
    """

    name = "hf_audio"

    def __init__(
        self,
        model: str,
        *,
        family: str = "",
        device: str = "cpu",
        dtype: str = "auto",
        max_context_tokens: int = 0,
        seed: int = 0,
        threads: int = 0,
    ) -> None:
        import torch
        import transformers

        if not model:
            raise ConfigError("hf_audio: 'model' must name a local folder or a hub id")
        if not family:
            try:
                model_type = transformers.AutoConfig.from_pretrained(model).model_type
            except (OSError, ValueError) as exc:
                raise ConfigError(f"hf_audio: cannot read the config of '{model}': {_first_line(exc)}") from None
            family = FAMILY_OF_MODEL_TYPE.get(model_type, model_type)
        if family not in AUDIO_FORMATS:
            raise ConfigError(f"hf_audio: unknown family '{family}'; expected one of {sorted(AUDIO_FORMATS)}")
        self.model_id = model
        self.format = AUDIO_FORMATS[family]
        self.family = family
        self.device = device
        self.seed = seed
        self.threads = threads
        self.throughput = Throughput()
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(model)
            model_cls = getattr(transformers, self.format.model_class)
            torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
            self.model = model_cls.from_pretrained(model, dtype=torch_dtype).to(device).eval()
        except (OSError, ValueError, AttributeError) as exc:
            raise ConfigError(
                f"hf_audio: cannot load '{model}' as {self.format.model_class}: {_first_line(exc)}"
            ) from None
        self.tokenizer = self.processor.tokenizer
        limit = max_context_tokens or position_limit(self.model.config)
        if not limit:
            raise ConfigError("hf_audio: the model config names no max_position_embeddings; set max_context_tokens")
        self.max_context_tokens = limit
        extractor = self.processor.feature_extractor
        self.max_clip_s = float(getattr(extractor, "chunk_length", 30))

    @classmethod
    def from_config(cls, config: ReasonerConfig) -> HFAudioReasoner:
        """Build from a :class:`ReasonerConfig` (family from the folder, limit from the model)."""
        return cls(config.model, device=config.device, dtype=config.dtype, seed=config.seed, threads=config.threads)

    def encode(self, messages: Sequence[Message], max_new_tokens: int = 0) -> dict[str, Any]:
        """Processor inputs for ``messages``.

        Raises:
            OverContextError: a clip is longer than the encoder window, or the prompt plus
                ``max_new_tokens`` exceeds the context limit.
        """
        chat, audios = to_audio_chat(messages, self.format)
        for k, audio in enumerate(audios):
            if audio.size / SAMPLE_RATE > self.max_clip_s:
                raise OverContextError(
                    f"{self.model_id}: audio part {k} lasts {audio.size / SAMPLE_RATE:.1f} s, longer than the "
                    f"encoder's {self.max_clip_s:g} s window (it would be cut)"
                )
        prompt = self.processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        kwargs: dict[str, Any] = {"text": [prompt], "return_tensors": "pt"}
        if audios:
            kwargs.update(audio=audios, sampling_rate=SAMPLE_RATE)
        encoded = dict(self.processor(**kwargs))
        length = int(encoded["input_ids"].shape[1])
        if length + max_new_tokens > self.max_context_tokens:
            raise OverContextError(
                f"{self.model_id}: the prompt has {length} tokens (+{max_new_tokens} to reply), more than the "
                f"context limit {self.max_context_tokens}",
                tokens=length + max_new_tokens,
                limit=self.max_context_tokens,
            )
        return encoded

    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        inputs = self.encode(messages, max_new_tokens)
        inputs = {k: v.to(self.device) if hasattr(v, "to") else v for k, v in inputs.items()}
        try:
            new_tokens = timed_generate(self, inputs, max_new_tokens)
        except (RuntimeError, IndexError, ValueError) as exc:
            raise ReasonerError(f"hf_audio '{self.model_id}': generation failed: {_first_line(exc)}") from None
        return self.tokenizer.decode(new_tokens, skip_special_tokens=True).strip()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
