"""Image/text embeddings (CLIP) for association and retrieval by the visual memories.

:class:`ImageTextEncoder` loads a CLIP model from a local folder or hub id through
transformers (``CLIPModel`` + its processor; no torchvision needed) or, for ``open_clip:NAME``
specs, through open-clip-torch when it is installed. Embeddings are L2-normalised ``float32``.
:func:`build_encoder` returns None when no model is configured and says so once: the memories
then associate and retrieve by labels only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from memgym.core.errors import ConfigError

log = logging.getLogger(__name__)
_warned = False


class ImageTextEncoder:
    """CLIP image and text embeddings.

    Args:
        model: a local folder or hub id of a transformers CLIP model, or ``open_clip:ARCH/PRETRAINED``.
        device: torch device.
    """

    def __init__(self, model: str, device: str = "cpu") -> None:
        import torch

        self.model_id = model
        self.device = device
        self._torch = torch
        if model.startswith("open_clip:"):
            try:
                import open_clip
            except ImportError as exc:
                raise ConfigError(f"encoder '{model}' needs open-clip-torch, which is not importable: {exc}") from exc
            arch, _, pretrained = model.removeprefix("open_clip:").partition("/")
            self._model, _, self._preprocess = open_clip.create_model_and_transforms(
                arch, pretrained=pretrained or None
            )
            self._tokenizer = open_clip.get_tokenizer(arch)
            self._kind = "open_clip"
        else:
            from transformers import AutoProcessor, CLIPModel

            try:
                self._model = CLIPModel.from_pretrained(model)
                self._processor = AutoProcessor.from_pretrained(model)
            except OSError as exc:
                raise ConfigError(f"encoder model '{model}' could not be loaded as a CLIP model: {exc}") from exc
            self._kind = "hf"
        self._model.eval().to(device)

    def encode_images(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """``(N, D) float32`` unit embeddings of ``(h, w, 3) uint8`` images."""
        from PIL import Image

        pictures = [Image.fromarray(np.asarray(i, np.uint8)) for i in images]
        with self._torch.no_grad():
            if self._kind == "hf":
                inputs = self._processor(images=pictures, return_tensors="pt").to(self.device)
                features = self._model.get_image_features(**inputs)
            else:
                batch = self._torch.stack([self._preprocess(p) for p in pictures]).to(self.device)
                features = self._model.encode_image(batch)
        return _unit(features)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """``(N, D) float32`` unit embeddings of ``texts`` (cut to the text tower's length)."""
        with self._torch.no_grad():
            if self._kind == "hf":
                limit = self._model.config.text_config.max_position_embeddings  # CLIP: 77 tokens
                inputs = self._processor(
                    text=list(texts), return_tensors="pt", padding=True, truncation=True, max_length=limit
                ).to(self.device)
                features = self._model.get_text_features(**inputs)
            else:
                features = self._model.encode_text(self._tokenizer(list(texts)).to(self.device))
        return _unit(features)


def _unit(features) -> np.ndarray:
    if not isinstance(features, np.ndarray) and hasattr(features, "pooler_output"):
        features = features.pooler_output  # transformers 5 may return a model output
    array = np.asarray(features.detach().float().cpu().numpy() if hasattr(features, "detach") else features)
    return (array / np.maximum(np.linalg.norm(array, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def build_encoder(model: str | None, device: str = "cpu") -> ImageTextEncoder | None:
    """The encoder for ``model``; None (logged once per process) when no model is configured."""
    global _warned
    if model:
        return ImageTextEncoder(model, device)
    if not _warned:
        _warned = True
        log.warning(
            "no CLIP encoder configured (encoder_model unset): visual memories associate and retrieve by labels only"
        )
    return None
