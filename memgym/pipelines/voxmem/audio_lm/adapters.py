"""Low-rank adapters (LoRA) on the language model's attention projections, merged into its weights to save.

The language model stays frozen; each attention projection ``W`` (query, key, value, output) of every
layer gets a trained low-rank update ``W + B A`` (``A``: ``(rank, in)``, random; ``B``: ``(out, rank)``,
zero at the start, so training starts from the unchanged LM). :func:`merge_adapters` folds ``B A``
into ``W`` and puts the plain linear layers back, so the saved checkpoint has the original layout
(``from_pretrained`` needs nothing new) and computes what the adapted model computed.
"""

from __future__ import annotations

import math

import torch

PROJECTIONS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")


class LowRankLinear(torch.nn.Module):
    """``base(x) + x A^T B^T``: a frozen linear layer with a trained rank-``rank`` update.

    Args:
        base: the frozen ``nn.Linear`` (``in_features -> out_features``).
        rank: the update's rank.
        generator: draws ``A`` (``B`` starts at zero).
    """

    def __init__(self, base: torch.nn.Linear, rank: int, generator: torch.Generator) -> None:
        super().__init__()
        self.base = base
        scale = 1.0 / math.sqrt(base.in_features)
        self.down = torch.nn.Parameter(torch.randn(rank, base.in_features, generator=generator) * scale)
        self.up = torch.nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., in_features) -> (..., out_features)``."""
        return self.base(x) + (x @ self.down.T) @ self.up.T

    def merged(self) -> torch.nn.Linear:
        """The base layer with ``B A`` added to its weight (frozen again)."""
        with torch.no_grad():
            self.base.weight += self.up @ self.down
        return self.base


def attach_adapters(language_model: torch.nn.Module, rank: int, seed: int) -> list[torch.nn.Parameter]:
    """Wrap every attention projection of ``language_model`` (a Llama-style ``.layers`` stack) in a
    :class:`LowRankLinear`; returns the new trained parameters."""
    generator = torch.Generator().manual_seed(seed)
    params: list[torch.nn.Parameter] = []
    for layer in language_model.layers:
        for name in PROJECTIONS:
            wrapped = LowRankLinear(getattr(layer.self_attn, name), rank, generator)
            setattr(layer.self_attn, name, wrapped)
            params += [wrapped.down, wrapped.up]
    return params


def merge_adapters(language_model: torch.nn.Module) -> None:
    """Fold every :class:`LowRankLinear` of ``language_model`` into its base layer (in place)."""
    for layer in language_model.layers:
        for name in PROJECTIONS:
            module = getattr(layer.self_attn, name)
            if isinstance(module, LowRankLinear):
                setattr(layer.self_attn, name, module.merged())
