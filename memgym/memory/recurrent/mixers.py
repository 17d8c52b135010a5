"""Memory layers (token mixers) of the Table 1 model: five delta-rule variants and matched attention.

Every mixer shares the input and output processing of Table 1 (``d`` model width, ``H`` heads of
``d_k = d_v`` channels):

* q, k, v projections ``d -> H·d_k``, a four-frame depthwise causal convolution + SiLU over them,
  and per-head L2 normalisation of q and k;
* a memory: the gated delta rule of :mod:`~memgym.memory.recurrent.delta_rule` with the variant's
  gates (table below), or causal softmax attention (:mod:`~memgym.memory.recurrent.attention`);
* per-head output RMSNorm, a SiLU output gate ``silu(x W_g)`` and an output projection ``H·d_v -> d``.

=========  ================  =================  ==================
variant    decay D_t         erase b_t          write w_t
=========  ================  =================  ==================
gdn2       per key channel   sigmoid, R^{d_k}   sigmoid, R^{d_v}
kda        per key channel   β_t·1              β_t·1
gdn        scalar            β_t·1              β_t·1
no_erase   per key channel   0                  sigmoid, R^{d_v}
mamba2     scalar            0                  1
=========  ================  =================  ==================

Decay ``-log α_t = softplus(x W_α + c)`` with ``c`` set so the initial rates are log-spaced in
``[decay_min, decay_max]`` (over heads × key channels, or over heads for a scalar decay), clamped
at :data:`~memgym.memory.recurrent.delta_rule.MAX_LOG_DECAY`. Erase, write and β gates are
``sigmoid(x W + 1)``, i.e. ``sigmoid(1)`` at initialisation.

A layer's carried state is a dict: ``{"conv": (B, K-1, 3·H·d_k)`` last conv inputs, and
``"S": (B, H, d_v, d_k)`` for the delta rule or ``"k", "v": (B, H, P, ·)`` for attention}``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from memgym.memory.recurrent.attention import causal_attention
from memgym.memory.recurrent.delta_rule import MAX_LOG_DECAY, chunked_delta_rule, delta_rule_loop

LayerState = dict[str, torch.Tensor]


@dataclasses.dataclass(frozen=True)
class CoreSpec:
    """How a delta-rule variant parameterises its gates."""

    decay: Literal["channel", "scalar"]
    erase: Literal["gate", "beta", "none"]
    write: Literal["gate", "beta", "one"]


DELTA_VARIANTS: dict[str, CoreSpec] = {
    "gdn2": CoreSpec("channel", "gate", "gate"),
    "kda": CoreSpec("channel", "beta", "beta"),
    "gdn": CoreSpec("scalar", "beta", "beta"),
    "no_erase": CoreSpec("channel", "none", "gate"),
    "mamba2": CoreSpec("scalar", "none", "one"),
}
"""Delta-rule variants by name (``attention`` and ``attention_rope`` are the softmax mixers)."""

ATTENTION_VARIANTS: dict[str, bool] = {"attention": False, "attention_rope": True}
"""Softmax attention mixers by name -> whether they use RoPE."""

CORES: tuple[str, ...] = (*DELTA_VARIANTS, *ATTENTION_VARIANTS)


@dataclasses.dataclass(frozen=True)
class MixerConfig:
    """Sizes and initialisation of one memory layer."""

    core: str = "gdn2"
    width: int = 128
    heads: int = 2
    head_dim: int = 64
    conv_kernel: int = 4
    decay_min: float = 1e-3
    decay_max: float = 1e-1
    gate_init: float = 1.0
    chunk_size: int = 64


def _inverse_softplus(x: torch.Tensor) -> torch.Tensor:
    return x + torch.log(-torch.expm1(-x))


class _DepthwiseShiftConv(torch.autograd.Function):
    """``y[:, t] = Σ_j full[:, t + j] ⊙ weight[:, j]`` for ``full`` ``(B, T + K - 1, C)``, weight ``(C, K)``.

    The same numbers as a grouped ``conv1d``, written as ``K`` in-place multiply-adds whose
    backward scatters into one gradient buffer (autograd's slicing backward would allocate and
    add a full-size zero tensor per tap).
    """

    @staticmethod
    def forward(ctx, full: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        kernel = weight.shape[1]
        length = full.shape[1] - kernel + 1
        y = full[:, :length] * weight[:, 0]
        for j in range(1, kernel):
            y.addcmul_(full[:, j : j + length], weight[:, j])
        ctx.save_for_backward(full, weight)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        full, weight = ctx.saved_tensors
        kernel = weight.shape[1]
        length = grad.shape[1]
        grad_full = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_full = torch.zeros_like(full)
            for j in range(kernel):
                grad_full[:, j : j + length].addcmul_(grad, weight[:, j])
        if ctx.needs_input_grad[1]:
            flat = grad.reshape(-1, grad.shape[-1])
            grad_weight = torch.stack(
                [(full[:, j : j + length].reshape(-1, flat.shape[-1]) * flat).sum(0) for j in range(kernel)], dim=1
            )
        return grad_full, grad_weight


class CausalConv(nn.Module):
    """Depthwise causal convolution over time + SiLU; carries its last ``K-1`` inputs as state.

    ``kernel=0`` is the convolution ablation: SiLU only, no parameters, an empty history.
    """

    def __init__(self, channels: int, kernel: int) -> None:
        super().__init__()
        self.kernel = kernel
        if kernel > 0:
            self.weight = nn.Parameter(torch.empty(channels, 1, kernel))
            self.bias = nn.Parameter(torch.zeros(channels))
            nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    def forward(self, x: torch.Tensor, history: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` ``(B, T, C)``, history ``(B, K-1, C)`` or None -> ``(B, T, C)`` and the new history."""
        if self.kernel == 0:
            return F.silu(x), x[:, :0]
        if history is None:
            history = x.new_zeros(x.shape[0], self.kernel - 1, x.shape[2])
        full = torch.cat([history, x], dim=1)
        # K shifted multiply-adds: same result as a grouped conv1d, several times faster on CPU
        y = _DepthwiseShiftConv.apply(full, self.weight[:, 0]) + self.bias
        return F.silu(y), full[:, full.shape[1] - (self.kernel - 1) :]


class HeadRMSNorm(nn.Module):
    """RMSNorm over each head's ``d_v`` channels with one learned gain shared by the heads."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MemoryMixer(nn.Module):
    """One memory layer; ``forward`` runs the chunked (parallel) or the step form."""

    def __init__(self, config: MixerConfig) -> None:
        super().__init__()
        if config.core not in CORES:
            raise ValueError(f"unknown core '{config.core}'; choose one of {', '.join(CORES)}")
        self.config = config
        d, h, dk = config.width, config.heads, config.head_dim
        inner = h * dk
        self.q_proj = nn.Linear(d, inner, bias=False)
        self.k_proj = nn.Linear(d, inner, bias=False)
        self.v_proj = nn.Linear(d, inner, bias=False)
        self.conv = CausalConv(3 * inner, config.conv_kernel)
        self.gate_proj = nn.Linear(d, inner, bias=False)
        self.out_norm = HeadRMSNorm(dk)
        self.out_proj = nn.Linear(inner, d, bias=False)
        self.spec = DELTA_VARIANTS.get(config.core)
        if self.spec is None:
            self.rope = ATTENTION_VARIANTS[config.core]
            self.qk_scale = nn.Parameter(torch.full((h,), math.sqrt(dk)))
            return
        n_decay = inner if self.spec.decay == "channel" else h
        self.decay_proj = self._gate(n_decay, 0.0)
        rates = torch.logspace(math.log10(config.decay_min), math.log10(config.decay_max), n_decay)
        with torch.no_grad():
            self.decay_proj.bias.copy_(_inverse_softplus(rates))
        self.beta_proj = self._gate(h, config.gate_init) if "beta" in (self.spec.erase, self.spec.write) else None
        self.erase_proj = self._gate(inner, config.gate_init) if self.spec.erase == "gate" else None
        self.write_proj = self._gate(inner, config.gate_init) if self.spec.write == "gate" else None

    def _gate(self, n_out: int, bias: float) -> nn.Linear:
        layer = nn.Linear(self.config.width, n_out)
        nn.init.normal_(layer.weight, std=0.02)
        nn.init.constant_(layer.bias, bias)
        return layer

    @property
    def is_attention(self) -> bool:
        return self.spec is None

    def _heads(self, x: torch.Tensor, per_head: int) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, -1, per_head).transpose(1, 2)

    def gates(self, x: torch.Tensor) -> dict[str, torch.Tensor | None]:
        """Decay, erase and write gates ``(B, H, T, ·)`` of a delta-rule variant for ``x`` ``(B, T, d)``.

        ``b`` is None for the additive variants (no erase).
        """
        cfg, spec = self.config, self.spec
        batch, length, _ = x.shape
        h, dk = cfg.heads, cfg.head_dim
        log_decay = -F.softplus(self.decay_proj(x)).clamp(max=MAX_LOG_DECAY)
        if spec.decay == "channel":
            g = self._heads(log_decay, dk)
        else:
            g = log_decay.transpose(1, 2).unsqueeze(-1).expand(batch, h, length, dk)
        beta = None
        if self.beta_proj is not None:
            beta = torch.sigmoid(self.beta_proj(x)).transpose(1, 2).unsqueeze(-1)  # (B, H, T, 1)
        if spec.erase == "gate":
            b = self._heads(torch.sigmoid(self.erase_proj(x)), dk)
        elif spec.erase == "beta":
            b = beta.expand(batch, h, length, dk)
        else:
            b = None  # additive memory: the chunked form skips the UT solve
        if spec.write == "gate":
            w = self._heads(torch.sigmoid(self.write_proj(x)), dk)
        elif spec.write == "beta":
            w = beta.expand(batch, h, length, dk)
        else:
            w = x.new_ones(batch, h, length, dk)
        return {"g": g, "b": b, "w": w}

    def forward(
        self, x: torch.Tensor, state: LayerState | None = None, *, step: bool = False
    ) -> tuple[torch.Tensor, LayerState, torch.Tensor]:
        """Mix ``x`` ``(B, T, d)`` (after the block's pre-norm).

        Args:
            state: carried layer state (see module docstring) or None for a fresh stream.
            step: run the recurrence frame by frame (the step form) instead of chunked.
        Returns:
            ``(B, T, d)`` output, the new state, and the keys ``(B, H, T, d_k)`` the memory used.
        """
        cfg = self.config
        dk = cfg.head_dim
        qkv, conv_state = self.conv(
            torch.cat([self.q_proj(x), self.k_proj(x), self.v_proj(x)], dim=-1),
            None if state is None else state["conv"],
        )
        q, k, v = (self._heads(part, dk) for part in qkv.chunk(3, dim=-1))
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        if self.is_attention:
            cache = None if state is None or "k" not in state else {"k": state["k"], "v": state["v"]}
            out, new = causal_attention(q, k, v, self.qk_scale, cache, rope=self.rope)
            new_state = {"conv": conv_state, **new}
        else:
            gates = self.gates(x)
            memory = None if state is None else state.get("S")
            run = delta_rule_loop if step else chunked_delta_rule
            kwargs = {} if step else {"chunk_size": cfg.chunk_size}
            out, final = run(q, k, v, gates["g"], gates["b"], gates["w"], memory, **kwargs)
            new_state = {"conv": conv_state, "S": final}
        out = self.out_norm(out).transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
        return self.out_proj(out * F.silu(self.gate_proj(x))), new_state, k
