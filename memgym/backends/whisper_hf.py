"""Speech-to-text with a ``transformers`` Whisper model (a local folder; greedy decoding).

:class:`WhisperTranscriber` turns one turn's waveform into words: 16 kHz log-mel features from the
folder's processor, ``generate`` with ``do_sample=False`` and the language/task forced when the
model is multilingual. A turn longer than the model's 30 s window is transcribed with the
processor's long-form path (no cut: Whisper's sequential decoding over the whole input).
"""

from __future__ import annotations

import numpy as np

from memgym.core.chat import mono_at
from memgym.core.errors import ConfigError

SAMPLE_RATE = 16000


class WhisperTranscriber:
    """A Whisper checkpoint as an ASR backend with ``transcribe(audio, sample_rate) -> str``.

    Args:
        model: local folder (or hub id) with a Whisper model and processor.
        device: torch device.
        language: spoken language for multilingual checkpoints (ignored by ``.en`` models).
        max_new_tokens: longest transcript per window, in tokens.
    """

    def __init__(self, model: str, *, device: str = "cpu", language: str = "en", max_new_tokens: int = 128) -> None:
        import transformers

        try:
            self.processor = transformers.WhisperProcessor.from_pretrained(model)
            self.model = transformers.WhisperForConditionalGeneration.from_pretrained(model).to(device).eval()
        except (OSError, ValueError) as exc:
            raise ConfigError(f"whisper: cannot load '{model}': {str(exc).splitlines()[0]}") from None
        self.model_id = model
        self.device = device
        self.language = language
        self.max_new_tokens = max_new_tokens

    def identity(self) -> str:
        """Names the checkpoint and decoding (for transcript caches)."""
        return f"whisper-hf:{self.model_id}:{self.language}:greedy:{self.max_new_tokens}"

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        """The words of ``audio`` (``(N,)`` float32 in [-1, 1]) at ``sample_rate`` Hz."""
        import torch

        mono = mono_at(np.asarray(audio, dtype=np.float32).reshape(-1), sample_rate, SAMPLE_RATE)
        long_form = mono.size > self.processor.feature_extractor.n_samples
        features = self.processor(
            mono,
            sampling_rate=SAMPLE_RATE,
            return_tensors="pt",
            **({"truncation": False, "padding": "longest", "return_attention_mask": True} if long_form else {}),
        )
        kwargs = {"do_sample": False, "max_new_tokens": self.max_new_tokens}
        if getattr(self.model.generation_config, "is_multilingual", False):
            kwargs.update(language=self.language, task="transcribe")
        inputs = {k: v.to(self.device) for k, v in features.items()}
        with torch.inference_mode():
            ids = self.model.generate(**inputs, **kwargs)
        return self.processor.batch_decode(ids, skip_special_tokens=True)[0].strip()
