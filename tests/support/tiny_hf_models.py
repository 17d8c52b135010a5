"""Tiny randomly initialised Hugging Face models (Llama, LLaVA, OWLv2, CLIP) built offline (no downloads)."""

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


def _char_clip_tokenizer():
    """A CLIP tokenizer over single lower-case characters (no merges), built offline."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import CLIPTokenizerFast

    vocab = {"<unk>": 0, "<|startoftext|>": 1, "<|endoftext|>": 2}  # OWL reads id 0 as query padding
    for c in "abcdefghijklmnopqrstuvwxyz0123456789":
        vocab.setdefault(c, len(vocab))
        vocab.setdefault(c + "</w>", len(vocab))
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", end_of_word_suffix="</w>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = CLIPTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        bos_token="<|startoftext|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    return tokenizer, len(vocab)


def _tiny_text_vision(vocab_size: int, image_size: int) -> tuple[dict, dict]:
    text = {
        "vocab_size": vocab_size,
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "max_position_embeddings": 64,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "pad_token_id": 2,
    }
    vision = {
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "image_size": image_size,
        "patch_size": 8,
    }
    return text, vision


def build_tiny_owlv2(folder: Path, *, seed: int = 0) -> Path:
    """Save a tiny random OWLv2 zero-shot detector (32 px input, 16 patches) and its processor."""
    import torch
    from transformers import Owlv2Config, Owlv2ForObjectDetection, Owlv2ImageProcessorPil, Owlv2Processor

    tokenizer, vocab_size = _char_clip_tokenizer()
    text, vision = _tiny_text_vision(vocab_size, 32)
    torch.manual_seed(seed)
    model = Owlv2ForObjectDetection(Owlv2Config(text_config=text, vision_config=vision, projection_dim=16))
    model.save_pretrained(folder)
    processor = Owlv2Processor(
        image_processor=Owlv2ImageProcessorPil(size={"height": 32, "width": 32}), tokenizer=tokenizer
    )
    processor.save_pretrained(folder)
    return folder


def build_tiny_clip(folder: Path, *, seed: int = 0) -> Path:
    """Save a tiny random CLIP (32 px images) and its processor."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel, CLIPProcessor

    tokenizer, vocab_size = _char_clip_tokenizer()
    text, vision = _tiny_text_vision(vocab_size, 32)
    torch.manual_seed(seed)
    CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)).save_pretrained(folder)
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder
