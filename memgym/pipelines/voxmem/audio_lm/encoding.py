"""Whisper features and the encoder run on a clip's own frames (for caching during training).

The Qwen2-Audio encoder always reads a 30 s window (3000 mel frames) and masks the padded frames
out of attention; its outputs for the clip's frames depend only on the clip's mel frames and the
two padding frames after them (the convolutions' reach). :func:`encode_frames` runs the
convolutions on exactly those frames and the transformer layers unmasked on the clip's frames,
which gives the same numbers as the full window for a fraction of the cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SAMPLE_RATE = 16000


def mel_features(extractor: Any, audio: np.ndarray) -> tuple[Any, int]:
    """``((80, 3000) float32 tensor, valid mel frames)`` of a 16 kHz clip, as the processor computes them."""
    import torch

    out = extractor(
        audio, sampling_rate=SAMPLE_RATE, return_attention_mask=True, padding="max_length", return_tensors="pt"
    )
    return out["input_features"][0].to(torch.float32), int(out["attention_mask"][0].sum())


def encoder_frames(mel_frames: int) -> int:
    """Encoder frames (50 per second) of a clip with ``mel_frames`` valid mel frames."""
    return (mel_frames - 1) // 2 + 1


def audio_tokens(mel_frames: int) -> int:
    """Audio tokens (25 per second, after pooling) of a clip with ``mel_frames`` valid mel frames."""
    return (encoder_frames(mel_frames) - 2) // 2 + 1


def encode_frames(encoder: Any, mel: Any, mel_frames: int, layers: int) -> Any:
    """Hidden states ``(T, d_model)`` of the clip's ``T`` encoder frames after the first ``layers`` layers.

    Args:
        encoder: a ``Qwen2AudioEncoder``.
        mel: ``(n_mels, 3000)`` features from :func:`mel_features`.
        mel_frames: the clip's valid mel frames.
        layers: how many encoder layers to run (0 = the embedded frames).
    """
    import torch.nn.functional as F

    frames = encoder_frames(mel_frames)
    x = mel[None, :, : mel_frames + 2].to(encoder.conv1.weight.dtype)
    x = F.gelu(encoder.conv2(F.gelu(encoder.conv1(x))))[0].T[:frames]
    hidden = (x + encoder.embed_positions.weight[:frames])[None]
    for layer in encoder.layers[:layers]:
        hidden = layer(hidden, None)
        hidden = hidden[0] if isinstance(hidden, tuple) else hidden
    return hidden[0]


def finish_encoding(encoder: Any, hidden: Any, start_layer: int) -> Any:
    """Audio features ``(audio_tokens, d_model)`` from :func:`encode_frames`'s output: layers from
    ``start_layer`` on, 2-frame average pooling, final layer norm."""
    import torch.nn.functional as F

    hidden = hidden[None]
    for layer in encoder.layers[start_layer:]:
        hidden = layer(hidden, None)
        hidden = hidden[0] if isinstance(hidden, tuple) else hidden
    pooled = F.avg_pool1d(hidden.transpose(1, 2), 2, 2).transpose(1, 2)
    return encoder.layer_norm(pooled)[0]
