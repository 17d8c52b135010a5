"""Hugging Face ``transformers`` reasoner: text LMs and vision(-audio) LMs, greedy decoding.

The model is loaded from a local folder or a hub id (``HF_HUB_OFFLINE=1`` keeps it local). A
folder with a processor config (``preprocessor_config.json`` / ``processor_config.json``), such as
Qwen2.5-VL or Qwen3-VL, is driven through ``AutoProcessor`` so that :class:`ImagePart` and
:class:`AudioPart` contents reach the model; any other model uses its tokenizer's chat template
(or a plain ``role: text`` transcript when it has none). Decoding is greedy (``do_sample=False``)
under a fixed torch seed, so one model, prompt and ``max_new_tokens`` always give the same reply.
GGUF checkpoints load through ``gguf_file=`` (needs the ``gguf`` package); a GGUF causal LM is
de-quantised once and read from the cache afterwards (:mod:`memgym.backends.gguf_cache`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgym.backends.config import ReasonerConfig
from memgym.backends.errors import OverContextError, ReasonerError
from memgym.backends.gguf_cache import dequantised_folder
from memgym.backends.throughput import Throughput
from memgym.core.chat import Message, to_hf_messages
from memgym.core.errors import ConfigError
from memgym.core.protocols import Reasoner
from memgym.core.registry import register_reasoner

_PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


@register_reasoner("hf")
class HFReasoner(Reasoner):
    """A causal LM or VLM from ``transformers``.

    Args:
        model: local folder or hub id.
        device: torch device string.
        dtype: ``"auto"`` or a torch dtype name.
        gguf_file: GGUF file inside ``model`` (empty for safetensors checkpoints).
        use_processor: force (True) or forbid (False) ``AutoProcessor``; None decides from the
            folder's files.
        seed: torch seed set before each generation.
        threads: torch CPU threads while generating (0: leave torch's setting).

    ``throughput`` counts the prompt and generated tokens and seconds of every reply
    (:mod:`memgym.backends.throughput`).
    """

    name = "hf"

    def __init__(
        self,
        model: str,
        *,
        device: str = "cpu",
        dtype: str = "auto",
        gguf_file: str = "",
        use_processor: bool | None = None,
        seed: int = 0,
        threads: int = 0,
    ) -> None:
        import torch
        import transformers

        if not model:
            raise ConfigError("hf reasoner: 'model' must name a local folder or a hub id")
        self.model_id = model
        self.device = device
        self.seed = seed
        self.threads = threads
        self.throughput = Throughput()
        source, kwargs = model, {"gguf_file": gguf_file} if gguf_file else {}
        if use_processor is None:
            use_processor = any((Path(model) / f).is_file() for f in _PROCESSOR_FILES)
        if gguf_file and not use_processor:  # a causal LM: de-quantised once, then read from the cache
            source, kwargs = str(dequantised_folder(model, gguf_file)), {}
        self.processor = None
        try:
            if use_processor:
                self.processor = transformers.AutoProcessor.from_pretrained(source, **kwargs)
                self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
                model_cls = _vision_model_class(transformers)
            else:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
                model_cls = transformers.AutoModelForCausalLM
            torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
            self.model = model_cls.from_pretrained(source, dtype=torch_dtype, **kwargs).to(device).eval()
        except (OSError, ValueError) as exc:
            raise ConfigError(f"hf reasoner: cannot load model '{model}': {_first_line(exc)}") from None

    @classmethod
    def from_config(cls, config: ReasonerConfig) -> HFReasoner:
        """Build from a :class:`ReasonerConfig`."""
        return cls(
            config.model,
            device=config.device,
            dtype=config.dtype,
            gguf_file=config.gguf_file,
            seed=config.seed,
            threads=config.threads,
        )

    @property
    def accepts_images(self) -> bool:
        """Whether image parts reach the model (a processor-driven VLM); agents send text-only
        evidence to text models."""
        return self.processor is not None

    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        return self._reply(messages, max_new_tokens, line=False)

    def generate_line(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        """The first non-empty line of :meth:`generate`'s reply, decoding stopped at its end (greedy
        decoding: the same text as cutting the full reply, without decoding the rest)."""
        return self._reply(messages, max_new_tokens, line=True)

    def _reply(self, messages: Sequence[Message], max_new_tokens: int, *, line: bool) -> str:
        from jinja2.exceptions import TemplateError

        try:
            inputs = self._encode(messages)
        except (TemplateError, ValueError) as exc:  # e.g. "System role not supported" by the chat template
            raise ReasonerError(f"hf reasoner '{self.model_id}': cannot format the chat: {_first_line(exc)}") from None
        length = int(inputs["input_ids"].shape[1])
        limit = position_limit(self.model.config)
        if limit is not None and length + max_new_tokens > limit:
            raise OverContextError(
                f"hf reasoner '{self.model_id}': the prompt has {length} tokens (+{max_new_tokens} to reply), "
                f"more than the context limit {limit}",
                tokens=length + max_new_tokens,
                limit=limit,
            )
        try:
            new_tokens = timed_generate(self, inputs, max_new_tokens, line=line)
        except (RuntimeError, IndexError, ValueError) as exc:  # out of memory, ...
            raise ReasonerError(
                f"hf reasoner '{self.model_id}': generation failed for a {length}-token prompt: {_first_line(exc)}"
            ) from None
        text = self.tokenizer.decode(new_tokens, skip_special_tokens=True).strip()
        return first_line(text) if line else text

    def _encode(self, messages: Sequence[Message]) -> dict[str, Any]:
        hf_messages, images, audios = to_hf_messages(messages)
        if self.processor is not None:
            from PIL import Image

            prompt = self.processor.apply_chat_template(hf_messages, add_generation_prompt=True, tokenize=False)
            kwargs: dict[str, Any] = {"text": [prompt], "return_tensors": "pt"}
            if images:
                kwargs["images"] = [Image.fromarray(image) for image in images]
            if audios:
                kwargs["audio"] = audios
            encoded = self.processor(**kwargs)
        else:
            if images or audios:
                raise ReasonerError(f"hf reasoner '{self.model_id}' is a text model; it cannot take images or audio")
            if getattr(self.tokenizer, "chat_template", None):
                text_messages = [{"role": m["role"], "content": _text_of(m)} for m in hf_messages]
                prompt = self.tokenizer.apply_chat_template(text_messages, add_generation_prompt=True, tokenize=False)
            else:
                prompt = "".join(f"{m['role']}: {_text_of(m)}\n" for m in hf_messages) + "assistant:"
            encoded = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        return {k: v.to(self.device) if hasattr(v, "to") else v for k, v in dict(encoded).items()}


def timed_generate(reasoner: Any, inputs: dict[str, Any], max_new_tokens: int, *, line: bool = False) -> Any:
    """Greedy ``reasoner.model.generate`` on ``inputs`` under ``reasoner.seed`` (and ``reasoner.threads``
    torch CPU threads, when set; restored after); returns the new token ids ``(N,)`` and counts the
    reply in ``reasoner.throughput``. ``line``: stop once the reply has a line end after some text."""
    import torch
    from transformers import StoppingCriteriaList

    tokenizer = reasoner.tokenizer
    length = int(inputs["input_ids"].shape[1])
    clock = _FirstToken()
    criteria = [clock, _LineEnd(tokenizer, length)] if line else [clock]
    torch.manual_seed(reasoner.seed)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    saved = torch.get_num_threads()
    if reasoner.threads:
        torch.set_num_threads(reasoner.threads)
    start = time.perf_counter()
    try:
        with torch.inference_mode():
            output = reasoner.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
                stopping_criteria=StoppingCriteriaList(criteria),
            )
    finally:
        torch.set_num_threads(saved)
    end = time.perf_counter()
    sequences = output.sequences if hasattr(output, "sequences") else output
    new_tokens = sequences[0, length:]
    first = clock.at if clock.at is not None else end
    reasoner.throughput.add(length, len(new_tokens), first - start, end - first)
    return new_tokens


class _FirstToken:
    """A stopping criterion that never stops; notes when the first new token arrived."""

    def __init__(self) -> None:
        self.at: float | None = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        if self.at is None:
            self.at = time.perf_counter()
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


class _LineEnd:
    """Stops once the new tokens (after the ``length``-token prompt) decode to text with a line end
    after non-blank text."""

    def __init__(self, tokenizer: Any, length: int) -> None:
        self.tokenizer, self.length = tokenizer, length

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        done = [
            "\n" in self.tokenizer.decode(row[self.length :], skip_special_tokens=True).lstrip() for row in input_ids
        ]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped ("" when there is none)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _vision_model_class(transformers: Any) -> Any:
    for name in ("AutoModelForImageTextToText", "AutoModelForVision2Seq", "AutoModelForCausalLM"):
        if hasattr(transformers, name):
            return getattr(transformers, name)
    raise ConfigError("this transformers version has no auto class for vision-language models")


def _text_of(message: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in message["content"] if part["type"] == "text")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def position_limit(config: Any) -> int | None:
    """``max_position_embeddings`` of the text model in a (nested, multimodal) transformers config,
    or None when the config names none (the prompt length is then not checked)."""
    for path in (("text_config",), ("thinker_config", "text_config"), ()):
        node = config
        for name in path:
            node = getattr(node, name, None)
        limit = getattr(node, "max_position_embeddings", None) if node is not None else None
        if limit:
            return int(limit)
    return None
