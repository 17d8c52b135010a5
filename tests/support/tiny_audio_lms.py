"""Tiny randomly initialised audio language models with their processors, built offline.

Each builder saves a model folder (weights, config, tokenizer, feature extractor, processor and chat
template) that ``transformers.AutoProcessor`` and the model class load like a downloaded one. The
encoders read 2 s windows (``chunk_length=2``) so tests stay fast; the word-level tokenizers know
the chat-template markup and a few words.
"""

from __future__ import annotations

from pathlib import Path

QWEN_SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>",
    "<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>",
]  # fmt: skip
WORDS = ["system", "user", "assistant", "Session", "Question", "Audio", "you", "yes", "no", "Monday", "the"]
CHUNK_S = 2
"""Encoder window of the tiny models, seconds."""


def qwen_tokenizer(extra: dict[str, str] | None = None):
    """A word-level fast tokenizer with the Qwen chat and audio special tokens."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {}
    for token in QWEN_SPECIALS + WORDS + [chr(c) for c in range(33, 127)] + ["<unk>"]:
        vocab.setdefault(token, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in QWEN_SPECIALS])
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=extra or {},
    )


def _whisper_extractor(mels: int):
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(feature_size=mels, chunk_length=CHUNK_S, sampling_rate=16000)


def build_tiny_qwen2_audio(folder: Path, *, seed: int = 0, max_positions: int = 512) -> Path:
    """Save a 1-layer Qwen2-Audio (Whisper-style encoder + Qwen2) with its processor under ``folder``."""
    import torch
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioEncoderConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        Qwen2Config,
    )

    tokenizer = qwen_tokenizer()
    mels = 16
    audio = Qwen2AudioEncoderConfig(
        num_mel_bins=mels, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32, d_model=16,
        max_source_positions=CHUNK_S * 50,
    )  # fmt: skip
    text = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=max_positions,
    )  # fmt: skip
    config = Qwen2AudioConfig(
        audio_config=audio, text_config=text, audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    )
    torch.manual_seed(seed)
    Qwen2AudioForConditionalGeneration(config).save_pretrained(folder)
    Qwen2AudioProcessor(feature_extractor=_whisper_extractor(mels), tokenizer=tokenizer).save_pretrained(folder)
    return folder


QWEN_OMNI_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The layout of the published Qwen2.5-Omni chat template (system turn, ``<|audio_bos|><|AUDIO|>
<|audio_eos|>`` per audio part); model folders bring their own. (Qwen2.5-Omni's processor cannot be
built here: its video processor needs torchvision.)"""
