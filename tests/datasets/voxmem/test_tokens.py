"""Context-budget token counting: Whisper-encoder audio tokens and named text tokenizers."""

from __future__ import annotations

import pytest

from memgym.datasets.voxmem.tokens import TokenCounter, audio_tokens


def test_token_counting():
    assert audio_tokens(1.0) == 50 and audio_tokens(0.01) == 1 and audio_tokens(30) == 1500
    counter = TokenCounter()
    assert counter.count("Hello, world!") == 4  # 'Hello' ',' ' world' '!'
    assert counter.count("") == 0 and counter.count("antidisestablishmentarianism") == 7


def test_token_counter_reads_a_local_hf_tokenizer(tmp_path):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import PreTrainedTokenizerFast

    model = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    model.pre_tokenizer = Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=model, unk_token="[UNK]").save_pretrained(tmp_path)
    counter = TokenCounter(f"hf:{tmp_path}")
    assert counter.count("hello world, hello") == 4 and counter.name == f"hf:{tmp_path}"


def test_token_counter_errors(tmp_path):
    from memgym.core.errors import MemgymError

    with pytest.raises(MemgymError, match="unknown"):
        TokenCounter("tiktoken")
    with pytest.raises(MemgymError, match="not a folder"):
        TokenCounter(f"hf:{tmp_path / 'missing'}")
