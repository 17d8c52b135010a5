"""Causal softmax attention matched to the recurrent cores (same head layout), with optional RoPE.

Queries and keys arrive L2-normalised ``(B, H, T, d_k)``; the logits are ``scale_h · q·k`` with a
learned per-head scale (initialised at ``sqrt(d_k) = 8``), so attention and the delta-rule cores
read the same normalised keys. Rotary position embeddings (RoPE) rotate channel pairs by
``position · base^(-2i/d_k)`` radians; positions are frame indices from the stream start.

The step form keeps a key/value cache: the cache is the attention "state" ``{"k": (B, H, P, d_k),
"v": (B, H, P, d_v)}`` after ``P`` frames.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

ROPE_BASE = 10000.0


def rotary(x: torch.Tensor, positions: torch.Tensor, base: float = ROPE_BASE) -> torch.Tensor:
    """Rotate ``x`` ``(B, H, T, d)`` (``d`` even) by the RoPE angles of ``positions`` ``(T,)``."""
    half = x.shape[-1] // 2
    inv_freq = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) / half)
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def causal_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: torch.Tensor,
    cache: dict[str, torch.Tensor] | None = None,
    *,
    rope: bool,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Causal softmax attention of new frames over the cache plus themselves.

    Args:
        q, k: ``(B, H, T, d_k)`` L2-normalised; v: ``(B, H, T, d_v)``.
        scale: ``(H,)`` logit scale per head.
        cache: keys/values of the ``P`` earlier frames (already rotated), or None.
        rope: apply rotary embeddings at positions ``P .. P+T-1``.
    Returns:
        outputs ``(B, H, T, d_v)`` and the cache extended by these frames.
    """
    past = 0 if cache is None else cache["k"].shape[2]
    length = q.shape[2]
    if rope:
        positions = torch.arange(past, past + length, device=q.device)
        q, k = rotary(q, positions), rotary(k, positions)
    if cache is not None:
        k = torch.cat([cache["k"], k], dim=2)
        v = torch.cat([cache["v"], v], dim=2)
    q = q * scale.view(1, -1, 1, 1).to(q.dtype)
    if past == 0:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0)
    else:
        rows = torch.arange(past, past + length, device=q.device)[:, None]
        mask = torch.arange(past + length, device=q.device)[None, :] <= rows
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
    return out, {"k": k, "v": v}
