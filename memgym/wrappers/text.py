"""Text observations as numbers: token ids (:class:`TokenizeText`) or unit vectors (:class:`EmbedText`).

Both replace the ``Text`` keys of a ``Dict`` observation (all of them unless ``keys`` names
some), so libraries that read only arrays (Stable-Baselines3, RLlib's default encoders) accept
the env. The tokenizer is deterministic and needs no vocabulary file: lower-cased words, digit
runs and single punctuation marks, each hashed (CRC-32) to an id in ``1 .. vocab_size - 1``; 0
pads. The default embedding is the same hashing into signed counts (a hashed bag of words,
L2-normalised); any sentence encoder (``texts -> (n, dim)`` array) can replace it.

>>> tokenizer = HashTokenizer(vocab_size=1000, max_tokens=8)
>>> tokenizer.tokens("Where is the red mug?")
['where', 'is', 'the', 'red', 'mug', '?']
>>> ids = tokenizer.encode("Where is the red mug?")
>>> ids.shape, int((ids > 0).sum()), bool((tokenizer.encode("where IS the red mug ?") == ids).all())
((8,), 6, True)
>>> vector = HashEmbedder(dim=64)(["the red mug", ""])
>>> vector.shape, round(float(np.linalg.norm(vector[0])), 6), float(np.linalg.norm(vector[1]))
((2, 64), 1.0, 0.0)
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from memgym.core.errors import MemgymError
from memgym.wrappers.base import ObservationWrapper

TOKEN_PATTERN = re.compile(r"[a-z]+|[0-9]+|[^\sa-z0-9]")
"""Tokens of lower-cased text: letter runs, digit runs, single other non-space characters."""

Encoder = Callable[[Sequence[str]], np.ndarray]
"""A text encoder: ``n`` texts -> ``(n, dim)`` vectors."""


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``(n, dim)`` rows scaled to unit length (all-zero rows stay zero), clipped to [-1, 1]."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.clip(vectors / np.maximum(norms, 1e-12), -1.0, 1.0).astype(np.float32)


def _hash(token: str) -> int:
    return zlib.crc32(token.encode("utf-8"))


class HashTokenizer:
    """Text -> ``(max_tokens,) int64`` ids by hashing (module docstring); the first ``max_tokens``
    tokens are kept, 0 pads.

    Args:
        vocab_size: ids are ``1 .. vocab_size - 1`` (0 is padding).
        max_tokens: length of every encoding.
    """

    def __init__(self, vocab_size: int = 4096, max_tokens: int = 64) -> None:
        if vocab_size < 2 or max_tokens < 1:
            raise MemgymError(
                f"HashTokenizer: need vocab_size >= 2 and max_tokens >= 1, got {vocab_size}, {max_tokens}"
            )
        self.vocab_size, self.max_tokens = vocab_size, max_tokens

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text``, in order."""
        return TOKEN_PATTERN.findall(text.lower())

    def encode(self, text: str) -> np.ndarray:
        """``(max_tokens,) int64`` ids of ``text``'s first tokens, zero-padded."""
        ids = np.zeros(self.max_tokens, np.int64)
        for position, token in enumerate(self.tokens(text)[: self.max_tokens]):
            ids[position] = 1 + _hash(token) % (self.vocab_size - 1)
        return ids


class HashEmbedder:
    """Texts -> ``(n, dim) float32`` L2-normalised signed hashed token counts (zeros for a text
    without tokens); an :data:`Encoder`."""

    def __init__(self, dim: int = 256) -> None:
        if dim < 1:
            raise MemgymError(f"HashEmbedder: dim must be >= 1, got {dim}")
        self.dim = dim
        self._tokenizer = HashTokenizer()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for token in self._tokenizer.tokens(text):
                code = _hash(token)
                out[row, code % self.dim] += 1.0 if (code >> 31) & 1 else -1.0
        return unit_rows(out)


def _text_keys(env: gymnasium.Env, keys: Sequence[str] | None, wrapper: str) -> list[str]:
    """The observation keys to replace: ``keys`` (each must be a ``Text`` key) or every ``Text`` key."""
    space = env.observation_space
    if not isinstance(space, spaces.Dict):
        raise MemgymError(f"{wrapper}: needs a Dict observation space, got {space}")
    texts = [k for k, s in space.spaces.items() if isinstance(s, spaces.Text)]
    if keys is None:
        return texts
    wrong = [k for k in keys if k not in texts]
    if wrong:
        raise MemgymError(f"{wrapper}: keys {wrong} are not Text keys of the observation (Text keys: {texts})")
    return list(keys)


def _replace(space: spaces.Dict, new: dict[str, spaces.Space]) -> spaces.Dict:
    """``space`` with the subspaces of ``new`` in place of the same keys (order kept)."""
    return spaces.Dict({k: new.get(k, s) for k, s in space.spaces.items()})


class TokenizeText(ObservationWrapper):
    """The ``Text`` keys of a ``Dict`` observation as token ids: ``Box(0, vocab_size - 1,
    (max_tokens,), int64)`` each (:class:`HashTokenizer`).

    Args:
        env: an env with a ``Dict`` observation space.
        keys: the ``Text`` keys to replace (default: all of them).
        vocab_size, max_tokens: of the :class:`HashTokenizer`.
    """

    def __init__(
        self, env: gymnasium.Env, keys: Sequence[str] | None = None, vocab_size: int = 4096, max_tokens: int = 64
    ) -> None:
        super().__init__(env)
        self.keys = _text_keys(env, keys, "TokenizeText")
        self.tokenizer = HashTokenizer(vocab_size, max_tokens)
        ids = spaces.Box(0, vocab_size - 1, (max_tokens,), np.int64)
        self.observation_space = _replace(env.observation_space, dict.fromkeys(self.keys, ids))

    def observation(self, observation: dict) -> dict:
        return {**observation, **{k: self.tokenizer.encode(str(observation[k])) for k in self.keys}}


class EmbedText(ObservationWrapper):
    """The ``Text`` keys of a ``Dict`` observation as unit vectors: ``Box(-1, 1, (dim,), float32)``
    each (zeros for empty text).

    Args:
        env: an env with a ``Dict`` observation space.
        keys: the ``Text`` keys to replace (default: all of them).
        encoder: texts -> ``(n, dim)`` vectors, normalised here (default :class:`HashEmbedder`);
            e.g. a sentence encoder's ``encode`` method, or the text tower of a local CLIP-like
            model: ``memgym.memory.embodied.encoders.build_encoder(FOLDER).encode_texts``.
    """

    def __init__(self, env: gymnasium.Env, keys: Sequence[str] | None = None, encoder: Encoder | None = None) -> None:
        super().__init__(env)
        self.keys = _text_keys(env, keys, "EmbedText")
        self.encoder = encoder if encoder is not None else HashEmbedder()
        self.dim = int(np.asarray(self.encoder(["dimension probe"])).shape[-1])
        vector = spaces.Box(-1.0, 1.0, (self.dim,), np.float32)
        self.observation_space = _replace(env.observation_space, dict.fromkeys(self.keys, vector))

    def observation(self, observation: dict) -> dict:
        texts = [str(observation[k]) for k in self.keys]
        vectors = unit_rows(np.asarray(self.encoder(texts), np.float32).reshape(len(texts), self.dim))
        return {**observation, **{k: vectors[i] for i, k in enumerate(self.keys)}}
