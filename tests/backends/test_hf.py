"""The transformers reasoner on a tiny random Llama built in a temporary folder."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_hf_models import build_tiny_llama

from memgym.backends.config import ReasonerConfig, build_reasoner
from memgym.backends.errors import ReasonerError
from memgym.backends.hf import HFReasoner
from memgym.core.chat import ImagePart, Message, TextPart
from memgym.core.errors import ConfigError

MESSAGES = [Message.text("system", "answer briefly"), Message.text("user", "who owns the red mug")]


def test_greedy_generation_is_deterministic_across_loads(tiny_llama_dir):
    first = HFReasoner(str(tiny_llama_dir)).generate(MESSAGES, max_new_tokens=6)
    again = build_reasoner(ReasonerConfig(backend="hf", model=str(tiny_llama_dir))).generate(MESSAGES, max_new_tokens=6)
    assert isinstance(first, str) and first
    assert first == again


def test_prompt_goes_through_the_chat_template(tiny_llama_dir):
    reasoner = HFReasoner(str(tiny_llama_dir))
    encoded = reasoner._encode(MESSAGES)
    text = reasoner.tokenizer.decode(encoded["input_ids"][0])
    assert text.split()[:2] == ["system", ":"]
    assert text.split()[-2:] == ["assistant", ":"]


def test_model_without_chat_template_uses_a_plain_transcript(tmp_path):
    folder = build_tiny_llama(tmp_path / "plain", chat_template=None)
    reasoner = HFReasoner(str(folder))
    text = reasoner.tokenizer.decode(reasoner._encode(MESSAGES)["input_ids"][0])
    assert "user : who owns the red mug" in text
    assert reasoner.generate(MESSAGES, max_new_tokens=3) == reasoner.generate(MESSAGES, max_new_tokens=3)


def test_text_model_refuses_images(tiny_llama_dir):
    reasoner = HFReasoner(str(tiny_llama_dir))
    image = Message("user", (TextPart("what"), ImagePart(np.zeros((2, 2, 3), np.uint8))))
    with pytest.raises(ReasonerError, match="text model"):
        reasoner.generate([image])


def test_missing_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot load model"):
        HFReasoner(str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="'model'"):
        HFReasoner("")


def test_vision_language_model_takes_images_through_its_processor(tmp_path):
    from tiny_hf_models import build_tiny_llava

    folder = build_tiny_llava(tmp_path / "llava")
    reasoner = HFReasoner(str(folder))
    assert reasoner.processor is not None
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (40, 56, 3), dtype=np.uint8)
    messages = [Message("user", (ImagePart(image), TextPart("what is it")))]
    encoded = reasoner._encode(messages)
    assert encoded["pixel_values"].shape == (1, 3, 28, 28)
    assert (encoded["input_ids"] == 3).sum() == 4  # the image token expanded to its patch count
    reply = reasoner.generate(messages, max_new_tokens=4)
    assert isinstance(reply, str) and reply == reasoner.generate(messages, max_new_tokens=4)
    other = rng.integers(0, 255, (40, 56, 3), dtype=np.uint8)
    logits = [
        reasoner.model(**reasoner._encode([Message("user", (ImagePart(i), TextPart("what is it")))])).logits
        for i in (image, other)
    ]
    assert not np.allclose(logits[0].detach().numpy(), logits[1].detach().numpy())  # the image is seen


def test_generation_failures_become_reasoner_errors(tiny_llama_dir, monkeypatch):
    reasoner = HFReasoner(str(tiny_llama_dir))

    def out_of_memory(**kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(reasoner.model, "generate", out_of_memory)
    with pytest.raises(ReasonerError, match=r"generation failed for a \d+-token prompt: CUDA out of memory"):
        reasoner.generate(MESSAGES, max_new_tokens=8)


def test_a_prompt_over_the_context_limit_is_over_context_not_cut(tiny_llama_dir):
    from memgym.backends.errors import OverContextError

    reasoner = HFReasoner(str(tiny_llama_dir))  # max_position_embeddings = 256
    length = int(reasoner._encode(MESSAGES)["input_ids"].shape[1])
    assert reasoner.generate(MESSAGES, max_new_tokens=256 - length)  # exactly fits
    with pytest.raises(OverContextError, match="context limit 256") as error:
        reasoner.generate(MESSAGES, max_new_tokens=257 - length)
    assert (error.value.tokens, error.value.limit) == (257, 256)


def test_chat_templates_that_refuse_a_message_become_reasoner_errors(tmp_path):
    no_system = (
        "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
        "{% endif %}{{ m['role'] }} : {{ m['content'] }}\n{% endfor %}"
    )
    reasoner = HFReasoner(str(build_tiny_llama(tmp_path / "strict", chat_template=no_system)))
    with pytest.raises(ReasonerError, match="System role not supported"):
        reasoner.generate(MESSAGES)
    assert reasoner.generate(MESSAGES[1:], max_new_tokens=2) is not None


def test_replies_count_prompt_and_generated_tokens_and_seconds(tiny_llama_dir):
    reasoner = HFReasoner(str(tiny_llama_dir))
    prompt = int(reasoner._encode(MESSAGES)["input_ids"].shape[1])
    reasoner.generate(MESSAGES, max_new_tokens=2)
    reasoner.generate(MESSAGES, max_new_tokens=8)  # the random model ends this reply with </s> as token 3
    stats = reasoner.throughput.to_dict()
    assert stats["replies"] == 2 and stats["prompt_tokens"] == 2 * prompt
    assert stats["generated_tokens"] == 2 + 3
    assert stats["prompt_seconds"] > 0 and stats["generation_seconds"] > 0
    assert stats["prompt_tokens_per_s"] > 0 and stats["generation_tokens_per_s"] > 0


def test_generate_line_stops_decoding_at_the_first_line_end(tiny_llama_dir, monkeypatch):
    """A tokenizer that reads the second generated token as a line break: the one-line reply is
    the text before it, and decoding stopped there (2 tokens, not the 3 of the full reply)."""
    reasoner = HFReasoner(str(tiny_llama_dir))
    full = reasoner.generate(MESSAGES, max_new_tokens=8)
    prompt = int(reasoner._encode(MESSAGES)["input_ids"].shape[1])
    ids = reasoner.tokenizer(full, add_special_tokens=False)["input_ids"]
    assert len(ids) == 2 and reasoner.throughput.generated_tokens == 3 and ids[0] != ids[1]
    decode = reasoner.tokenizer.decode

    def with_break(tokens, **kwargs):
        return " ".join("\n" if int(t) == ids[1] else decode([int(t)], **kwargs) for t in tokens)

    monkeypatch.setattr(reasoner.tokenizer, "decode", with_break)
    reasoner.throughput.clear()
    assert reasoner.generate_line(MESSAGES, max_new_tokens=8) == with_break(ids[:1]) != ""
    assert reasoner.throughput.generated_tokens == 2 and reasoner.throughput.prompt_tokens == prompt
    reasoner.throughput.clear()  # without the line stop: the same text (a trailing break), one more token
    assert reasoner.generate(MESSAGES, max_new_tokens=8) == with_break(ids[:1])
    assert reasoner.throughput.generated_tokens == 3


def test_threads_apply_while_generating_and_are_restored(tiny_llama_dir, monkeypatch):
    import torch

    reasoner = build_reasoner(ReasonerConfig(backend="hf", model=str(tiny_llama_dir), threads=1))
    before, seen = torch.get_num_threads(), []
    generate = reasoner.model.generate

    def counting(**kwargs):
        seen.append(torch.get_num_threads())
        return generate(**kwargs)

    monkeypatch.setattr(reasoner.model, "generate", counting)
    assert reasoner.generate(MESSAGES, max_new_tokens=2) == HFReasoner(str(tiny_llama_dir)).generate(
        MESSAGES, max_new_tokens=2
    )
    assert seen == [1] and torch.get_num_threads() == before
