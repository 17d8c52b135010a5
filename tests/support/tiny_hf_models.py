"""A tiny randomly initialised Llama with a word-level tokenizer, built offline (no downloads)."""

from __future__ import annotations

from pathlib import Path

WORDS = [
    "the",
    "a",
    "mug",
    "red",
    "blue",
    "who",
    "owns",
    "is",
    "it",
    "yes",
    "no",
    "user",
    "assistant",
    "system",
    "hello",
    "world",
    "amelia",
    "ben",
    "sofa",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant :{% endif %}"
)


def build_tiny_llama(folder: Path, *, chat_template: str | None = CHAT_TEMPLATE, seed: int = 0) -> Path:
    """Save a 1-layer, 16-wide Llama and its tokenizer under ``folder``; returns ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for token in WORDS + [chr(c) for c in range(33, 127)]:
        vocab.setdefault(token, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="</s>"
    )
    if chat_template:
        tokenizer.chat_template = chat_template
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


VLM_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} :{% for c in m['content'] %}"
    "{% if c['type'] == 'text' %} {{ c['text'] }}{% elif c['type'] == 'image' %} <image>{% endif %}"
    "{% endfor %}\n{% endfor %}{% if add_generation_prompt %}assistant :{% endif %}"
)


def build_tiny_llava(folder: Path, *, seed: int = 0) -> Path:
    """Save a tiny random LLaVA (CLIP vision tower + Llama) with its processor under ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<image>": 3}
    for token in WORDS + [chr(c) for c in range(33, 127)]:
        vocab.setdefault(token, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="</s>",
        additional_special_tokens=["<image>"],
    )
    image_processor = CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        chat_template=VLM_TEMPLATE,
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    vision = CLIPVisionConfig(
        hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=14
    )
    text = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
    )
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_id=3, vision_feature_layer=-1)
    torch.manual_seed(seed)
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
