"""Audio LM adapters: each family's chat format against its template, tiny-model generation, context."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_audio_lms import CHUNK_S, QWEN_OMNI_TEMPLATE, build_tiny_qwen2_audio, qwen_tokenizer

from memgym.backends.errors import OverContextError, ReasonerError
from memgym.backends.hf_audio import AUDIO_FORMATS, HFAudioReasoner, to_audio_chat
from memgym.core.chat import AudioPart, ImagePart, Message, TextPart

RATE = 16000


def _tone(seconds: float, hz: float = 220.0, rate: int = RATE) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def history(seconds: float = 1.0) -> list[Message]:
    """Two audio user turns (one at 8 kHz), an assistant text turn, then the question."""
    return [
        Message("user", (TextPart("Session 1 - 2025-01-06 09:00\n"), AudioPart(_tone(seconds), RATE))),
        Message.text("assistant", "yes"),
        Message("user", (AudioPart(_tone(seconds / 2, 330.0, 8000), 8000),)),
        Message.text("user", "Question: Monday?"),
    ]


@pytest.fixture(scope="module")
def qwen2_audio(tmp_path_factory):
    return HFAudioReasoner(str(build_tiny_qwen2_audio(tmp_path_factory.mktemp("q2a"))))


def test_conversion_keeps_order_and_resamples():
    chat, audios = to_audio_chat(history(), AUDIO_FORMATS["qwen2_audio"])
    assert [m["role"] for m in chat] == ["user", "assistant", "user", "user"]
    assert chat[0]["content"][1] == {"type": "audio", "audio_url": "audio-0"}
    assert chat[2]["content"] == [{"type": "audio", "audio_url": "audio-1"}]
    assert [a.size for a in audios] == [RATE, RATE // 2] and all(a.dtype == np.float32 for a in audios)
    with pytest.raises(ReasonerError, match="not images"):
        to_audio_chat([Message("user", (ImagePart(np.zeros((2, 2, 3), np.uint8)),))], AUDIO_FORMATS["qwen2_audio"])


def test_qwen2_audio_template_and_features(qwen2_audio):
    """The processor's own template shows one numbered audio placeholder per turn, in order, and the
    features carry one window per audio part."""
    chat, _ = to_audio_chat(history(), qwen2_audio.format)
    prompt = qwen2_audio.processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert prompt.count("<|audio_bos|><|AUDIO|><|audio_eos|>") == 2
    assert prompt.index("Audio 1:") < prompt.index("<|im_start|>assistant\nyes") < prompt.index("Audio 2:")
    assert prompt.endswith("Question: Monday?<|im_end|>\n<|im_start|>assistant\n")
    encoded = qwen2_audio.encode(history())
    assert tuple(encoded["input_features"].shape)[:1] == (2,)
    audio_id = qwen2_audio.tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    # 100 frames/s, then two stride-2 stages: 1 s -> (99 // 2 + 1 - 2) // 2 + 1 = 25, 0.5 s -> 12
    assert int((encoded["input_ids"] == audio_id).sum()) == 25 + 12


def test_qwen2_audio_generates_deterministically(qwen2_audio):
    first = qwen2_audio.generate(history(), max_new_tokens=4)
    assert isinstance(first, str) and first == qwen2_audio.generate(history(), max_new_tokens=4)


def test_over_context_is_an_error_not_a_cut(qwen2_audio):
    with pytest.raises(OverContextError, match="longer than the encoder"):
        qwen2_audio.encode(history(seconds=CHUNK_S + 0.5))
    many = [m for _ in range(12) for m in history()[:3]] + history()[3:]
    with pytest.raises(OverContextError) as caught:
        qwen2_audio.encode(many, max_new_tokens=16)
    assert caught.value.limit == 512 and caught.value.tokens > 512


def test_qwen2_5_omni_format_against_its_template_layout():
    """Qwen2.5-Omni's processor needs torchvision (absent here), so the format is checked against the
    published template layout rendered by a tokenizer with the Omni special tokens."""
    tokenizer = qwen_tokenizer()
    tokenizer.chat_template = QWEN_OMNI_TEMPLATE
    chat, audios = to_audio_chat(history(), AUDIO_FORMATS["qwen2_5_omni"])
    prompt = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert prompt.count("<|audio_bos|><|AUDIO|><|audio_eos|>") == len(audios) == 2
    assert "Session 1 - 2025-01-06 09:00\n<|audio_bos|>" in prompt
    assert AUDIO_FORMATS["qwen2_5_omni"].model_class == "Qwen2_5OmniThinkerForConditionalGeneration"


def test_unknown_family_is_a_config_error(tmp_path):
    from memgym.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown family"):
        HFAudioReasoner(str(tmp_path), family="voxtral")
