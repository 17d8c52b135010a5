"""ASR backends: OpenAI-compatible transcription against a fake server; transformers Whisper."""

from __future__ import annotations

import numpy as np
import pytest
from fake_openai import FakeEndpoint

from memgym.backends.errors import ReasonerError
from memgym.backends.openai_transcribe import OpenAITranscriber
from memgym.core.chat import decode_wav


@pytest.fixture
def endpoint():
    server = FakeEndpoint()
    yield server
    server.close()


def test_transcription_request_and_reply(endpoint):
    endpoint.script = [("raw", b'{"text": " hello there "}')]
    asr = OpenAITranscriber("whisper-1", endpoint.base_url, api_key="k", sleep=lambda s: None)
    audio = (0.1 * np.sin(np.arange(1600) / 5)).astype(np.float32)
    assert asr.transcribe(audio, 16000) == "hello there"
    body = endpoint.requests[0]
    assert endpoint.paths == ["/v1/audio/transcriptions"]
    assert b'name="model"\r\n\r\nwhisper-1' in body and b'name="temperature"\r\n\r\n0' in body
    wav = body[body.index(b"RIFF") : body.rindex(b"\r\n--memgym-")]
    decoded, rate = decode_wav(wav)
    assert rate == 16000 and np.allclose(decoded, audio, atol=1e-4)


def test_transcription_errors_are_reasoner_errors(endpoint):
    endpoint.script = [("raw", b'{"no_text": 1}'), ("status", 401)]
    asr = OpenAITranscriber("whisper-1", endpoint.base_url, sleep=lambda s: None)
    with pytest.raises(ReasonerError, match="not a transcription"):
        asr.transcribe(np.zeros(160, np.float32), 16000)
    with pytest.raises(ReasonerError, match="HTTP 401"):
        asr.transcribe(np.zeros(160, np.float32), 16000)


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizerFast,
    )

    folder = tmp_path_factory.mktemp("whisper")
    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|notimestamps|>", "<|transcribe|>"]
    vocab = {t: i for i, t in enumerate(specials + ["hello", "there", "<unk>"])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>").save_pretrained(folder)
    tokenizer = WhisperTokenizerFast.from_pretrained(folder, unk_token="<unk>", eos_token="<|endoftext|>")
    config = WhisperConfig(
        vocab_size=len(vocab), num_mel_bins=80, encoder_layers=1, decoder_layers=1, d_model=16,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_source_positions=1500, max_target_positions=64, decoder_start_token_id=1, eos_token_id=0,
        pad_token_id=0, bos_token_id=0, suppress_tokens=[], begin_suppress_tokens=[],
    )  # fmt: skip
    torch.manual_seed(0)
    WhisperForConditionalGeneration(config).save_pretrained(folder)
    WhisperProcessor(WhisperFeatureExtractor(feature_size=80), tokenizer).save_pretrained(folder)
    return folder


def test_whisper_transcriber_runs_greedy_and_deterministic(tiny_whisper):
    from memgym.backends.whisper_hf import WhisperTranscriber

    asr = WhisperTranscriber(str(tiny_whisper), max_new_tokens=4)
    audio = (0.2 * np.sin(np.arange(8000) / 3)).astype(np.float32)
    text = asr.transcribe(audio, 8000)
    assert isinstance(text, str) and text == asr.transcribe(audio, 8000)
    assert "whisper-hf" in asr.identity()
