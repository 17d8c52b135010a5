"""The generalised gated delta rule shared by every recurrent AMemOps core, in three forms.

Notation and layout (used everywhere in :mod:`memgym.memory.recurrent`)
------------------------------------------------------------------------
Per batch element and head the state ``S`` is a ``(d_v, d_k)`` matrix that maps keys to values
(a key ``k`` reads ``S k``). One frame ``t`` updates it with::

    S̄_t = S_{t-1} D_t                                   D_t = diag(exp(g_t)), g_t <= 0
    S_t = S̄_t - (S̄_t (b_t ⊙ k_t)) k_tᵀ + (w_t ⊙ v_t) k_tᵀ
    o_t = S_t q_t / sqrt(d_k)

The decay scales the state's key columns; the erase reads the *decayed* state (as in the
published Gated DeltaNet-2). Tensors (``B`` batch, ``H`` heads, ``T`` frames):

=========  =====================  ==============================================
name       shape                  meaning
=========  =====================  ==============================================
q, k       (B, H, T, d_k)         queries and keys (L2-normalised by the model)
v          (B, H, T, d_v)         values
g          (B, H, T, d_k)         log decay per key channel (<= 0); a scalar decay
                                  is the same value repeated over d_k
b          (B, H, T, d_k)         erase gate (0 = additive memory); None means all
                                  zeros and lets the chunked form skip the UT solve
w          (B, H, T, d_v)         write gate
state      (B, H, d_v, d_k)       S_{t-1} before the first frame (zeros if None)
o          (B, H, T, d_v)         outputs
=========  =====================  ==============================================

Three implementations give the same numbers:

* :func:`reference_delta_rule` — the slow, obviously correct loop with explicit ``diag`` and
  outer-product matrices (tests only).
* :func:`step_delta_rule` — one frame at a time with the state carried (the env loop;
  :func:`delta_rule_loop` runs it over a stream).
* :func:`chunked_delta_rule` — the chunked parallel form for training on whole streams. Inside a
  chunk of ``C`` frames, with ``Γ_t = exp(Σ_{s<=t} g_s)`` (cumulative decay from the chunk start)
  and ``a_t = b_t ⊙ k_t``, the state is ``S_t = S_0 Γ_t + Σ_{s<=t} δ_s (k_s ⊙ Γ_t/Γ_s)ᵀ`` with
  "new values" ``δ`` solving the unit lower-triangular system (the UT / WY transform)::

      (I + A) Δ = U - (a ⊙ Γ) S_0ᵀ,    A_ts = Σ_i a_ti k_si Γ_ti/Γ_si  (s < t),   U_t = w_t ⊙ v_t

  so ``Δ = T U - T (a ⊙ Γ) S_0ᵀ`` with ``T = (I + A)⁻¹`` computed for all chunks at once; only
  the cheap state hand-over runs sequentially over chunks. Its backward pass is written out by
  hand (same structure, the chunks in reverse), which saves autograd's graph of per-chunk
  operations and most temporaries.

Numerical range of the chunked form: the ratios ``Γ_t/Γ_s`` are factored around the chunk's
middle frame, so each factor stays below ``exp(C/2 · max|g|)``. Callers keep ``g >= -MAX_LOG_DECAY``
(the model clamps its decay there); with ``C = 64`` that is ``exp(80)``, inside fp32 range.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

MAX_LOG_DECAY = 2.5
"""Largest per-frame decay magnitude ``-g`` the chunked form is guaranteed to handle at C = 64."""

DEFAULT_CHUNK = 64


def _check_shapes(q, k, v, g, b, w, state) -> tuple[int, int, int, int, int]:
    if q.dim() != 4:
        raise ValueError(f"q must be (B, H, T, d_k), got shape {tuple(q.shape)}")
    batch, heads, length, d_k = q.shape
    d_v = v.shape[-1]
    expected = {
        "k": (k, (batch, heads, length, d_k)),
        "v": (v, (batch, heads, length, d_v)),
        "g": (g, (batch, heads, length, d_k)),
        "b": (b, (batch, heads, length, d_k)),
        "w": (w, (batch, heads, length, d_v)),
    }
    for name, (tensor, shape) in expected.items():
        if tensor is not None and tuple(tensor.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(tensor.shape)}")
    if state is not None and tuple(state.shape) != (batch, heads, d_v, d_k):
        raise ValueError(f"state must have shape {(batch, heads, d_v, d_k)}, got {tuple(state.shape)}")
    return batch, heads, length, d_k, d_v


def _erase_or_zeros(b: torch.Tensor | None, k: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(k) if b is None else b


def _initial_state(q: torch.Tensor, v: torch.Tensor, state: torch.Tensor | None) -> torch.Tensor:
    if state is not None:
        return state
    batch, heads, _, d_k = q.shape
    return q.new_zeros(batch, heads, v.shape[-1], d_k)


def step_delta_rule(
    q_t: torch.Tensor,
    k_t: torch.Tensor,
    v_t: torch.Tensor,
    g_t: torch.Tensor,
    b_t: torch.Tensor,
    w_t: torch.Tensor,
    state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One frame of the recurrence.

    Args:
        q_t, k_t, g_t, b_t: ``(B, H, d_k)``; v_t, w_t: ``(B, H, d_v)``; state: ``(B, H, d_v, d_k)``.
    Returns:
        ``o_t`` ``(B, H, d_v)`` and the new state ``(B, H, d_v, d_k)``.
    """
    decayed = state * torch.exp(g_t).unsqueeze(-2)
    erased = torch.einsum("bhvk,bhk->bhv", decayed, b_t * k_t)
    new_state = decayed + torch.einsum("bhv,bhk->bhvk", w_t * v_t - erased, k_t)
    o_t = torch.einsum("bhvk,bhk->bhv", new_state, q_t) / math.sqrt(q_t.shape[-1])
    return o_t, new_state


def delta_rule_loop(q, k, v, g, b, w, state=None) -> tuple[torch.Tensor, torch.Tensor]:
    """The step form run frame by frame over a stream; same arguments and returns as the chunked form."""
    _check_shapes(q, k, v, g, b, w, state)
    current = _initial_state(q, v, state)
    b = _erase_or_zeros(b, k)
    outputs = []
    for frame in zip(*(x.unbind(dim=2) for x in (q, k, v, g, b, w)), strict=True):
        o_t, current = step_delta_rule(*frame, current)
        outputs.append(o_t)
    return torch.stack(outputs, dim=2), current


def reference_delta_rule(q, k, v, g, b, w, state=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Slow, literal transcription of the recurrence (explicit matrices, one batch/head at a time)."""
    batch, heads, length, d_k, d_v = _check_shapes(q, k, v, g, b, w, state)
    current = _initial_state(q, v, state).clone()
    b = _erase_or_zeros(b, k)
    out = q.new_zeros(batch, heads, length, d_v)
    final = torch.empty_like(current)
    for i in range(batch):
        for h in range(heads):
            s = current[i, h]
            for t in range(length):
                decay = torch.diag(torch.exp(g[i, h, t]))
                s_bar = s @ decay
                kt = k[i, h, t].unsqueeze(1)  # (d_k, 1)
                s = (
                    s_bar
                    - (s_bar @ (b[i, h, t].unsqueeze(1) * kt)) @ kt.T
                    + (w[i, h, t] * v[i, h, t]).unsqueeze(1) @ kt.T
                )
                out[i, h, t] = s @ q[i, h, t] / math.sqrt(d_k)
            final[i, h] = s
    return out, final


def chunked_delta_rule(q, k, v, g, b, w, state=None, *, chunk_size: int = DEFAULT_CHUNK):
    """Chunked parallel (UT-transform) form of the recurrence; see the module docstring.

    Args:
        q, k, v, g, b, w, state: as in the module table.
        chunk_size: frames per chunk ``C``; the stream is zero-padded to a multiple of it
            (padded frames have ``k = 0`` and ``g = 0`` and leave the state unchanged).

    With ``b=None`` (additive memory) ``A = 0`` and ``T = I``: the new values are the writes
    ``U`` themselves and the triangular solve is skipped. The backward pass is written out by
    hand (:class:`_ChunkedDeltaRule`); it is not twice differentiable.
    Returns:
        ``o`` ``(B, H, T, d_v)`` and the final state ``(B, H, d_v, d_k)``.
    """
    batch, heads, length, d_k, d_v = _check_shapes(q, k, v, g, b, w, state)
    current = _initial_state(q, v, state)
    pad = (-length) % chunk_size
    n_chunks = (length + pad) // chunk_size

    def chunks(x: torch.Tensor | None) -> torch.Tensor | None:
        if x is None:
            return None
        if pad:
            x = F.pad(x, (0, 0, 0, pad))
        return x.reshape(batch, heads, n_chunks, chunk_size, x.shape[-1])

    out, final = _ChunkedDeltaRule.apply(*(chunks(x) for x in (q, k, v, g, b, w)), current)
    return out.reshape(batch, heads, length + pad, d_v)[:, :, :length], final


def _chunk_products(q, k, v, g, b, w):
    """The state-independent quantities of every chunk at once (all ``(B, H, N, C, ·)``).

    ``q`` comes pre-scaled by ``1/sqrt(d_k)``. Returns a dict: ``scores`` (C x C, inclusive lower
    triangle of ``(q ⊙ Γ_t/Γ_r)(k ⊙ Γ_r/Γ_s)ᵀ`` with ``r`` the middle frame), ``q_state``
    ``q ⊙ Γ``, ``keys_end`` ``k ⊙ Γ_C/Γ``, ``gamma_end`` ``Γ_C`` ``(B, H, N, 1, d_k)``, the new
    values ``u_new = T U`` and, when erasing, the UT inverse ``ut``, ``w_new = T (a ⊙ Γ)`` and the
    intermediate products the backward pass reuses.
    """
    size = q.shape[3]
    cum = g.cumsum(dim=3)  # log Γ_t from the chunk start
    ref = cum[:, :, :, size // 2 : size // 2 + 1]  # factor Γ_t/Γ_s around the middle frame
    last = cum[:, :, :, -1:]
    to_ref = (cum - ref).exp_()
    from_ref = (ref - cum).exp_()
    gamma = torch.exp(cum)
    end_over = (last - cum).exp_()
    keys_in = k * from_ref
    q_ref = q * to_ref
    saved = {
        "to_ref": to_ref,
        "from_ref": from_ref,
        "gamma": gamma,
        "end_over": end_over,
        "keys_in": keys_in,
        "q_ref": q_ref,
        "scores": (q_ref @ keys_in.mT).tril_(),
        "q_state": q * gamma,
        "keys_end": k * end_over,
        "gamma_end": torch.exp(last),
    }
    if b is None:
        saved["u_new"] = w * v
        return saved
    d_v = v.shape[-1]
    rhs = torch.empty(*v.shape[:-1], d_v + k.shape[-1], dtype=v.dtype, device=v.device)  # [U | a ⊙ Γ]
    erase_keys = b * k  # a_t
    erase_ref = erase_keys * to_ref
    a_mat = (erase_ref @ keys_in.mT).tril_(-1)
    eye = torch.eye(size, dtype=q.dtype, device=q.device)
    # unitriangular: the zero diagonal of a_mat is read as ones, i.e. (I + A)
    ut = torch.linalg.solve_triangular(a_mat, eye.expand_as(a_mat), upper=False, unitriangular=True)
    torch.mul(w, v, out=rhs[..., :d_v])
    erase_state = torch.mul(erase_keys, gamma, out=rhs[..., d_v:])
    new = ut @ rhs
    saved.update(
        erase_ref=erase_ref,
        erase_state=erase_state,
        ut=ut,
        new=new,
        u_new=new[..., :d_v],
        w_new=new[..., d_v:],
    )
    return saved


class _ChunkedDeltaRule(torch.autograd.Function):
    """Forward and hand-written backward of the chunked form on chunked inputs ``(B, H, N, C, ·)``.

    Only the hand-over of the state between chunks runs sequentially (two small matrix products
    per chunk each way); everything else is batched over all chunks. The backward uses
    ``log Γ``'s chunk-middle reference as a constant: the outputs do not depend on it.
    """

    @staticmethod
    def forward(ctx, q, k, v, g, b, w, state):
        scale = 1.0 / math.sqrt(q.shape[-1])
        q = q * scale
        p = _chunk_products(q, k, v, g, b, w)
        erasing = b is not None
        starts, deltas = [], []
        current = state
        per_chunk = zip(p["u_new"].unbind(2), p["keys_end"].unbind(2), p["gamma_end"].unbind(2), strict=True)
        w_new = p["w_new"].unbind(2) if erasing else None
        for n, (u_n, keys_end_n, gamma_end_n) in enumerate(per_chunk):
            starts.append(current)
            delta = u_n - w_new[n] @ current.mT if erasing else u_n
            deltas.append(delta)
            current = torch.addcmul(delta.mT @ keys_end_n, current, gamma_end_n)
        starts = torch.stack(starts, dim=2)  # S at each chunk's start, (B, H, N, d_v, d_k)
        deltas = torch.stack(deltas, dim=2) if erasing else p["u_new"]
        out = torch.matmul(p["q_state"], starts.mT).add_(p["scores"] @ deltas)
        ctx.erasing = erasing
        ctx.scale = scale
        ctx.save_for_backward(k, v, b, w, starts, deltas, current, *p.values())
        ctx.keys = list(p)
        return out, current

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out, grad_final):
        k, v, b, w, starts, deltas, final, *values = ctx.saved_tensors
        p = dict(zip(ctx.keys, values, strict=True))
        erasing = ctx.erasing
        grad_out = grad_out.contiguous() if grad_out is not None else torch.zeros_like(deltas)
        grad_state = grad_final if grad_final is not None else torch.zeros_like(final)
        from_out = p["scores"].mT @ grad_out  # dΔ from the intra-chunk outputs
        reads = grad_out.mT @ p["q_state"]  # dS from the state reads
        ends, grad_deltas = [], []
        gamma_end = p["gamma_end"].unbind(2)
        keys_end = p["keys_end"].unbind(2)
        w_new = p["w_new"].unbind(2) if erasing else None
        from_out_n, reads_n = from_out.unbind(2), reads.unbind(2)
        for n in reversed(range(len(gamma_end))):
            ends.append(grad_state)  # dS at the end of chunk n
            if erasing:
                grad_delta = from_out_n[n] + keys_end[n] @ grad_state.mT
                grad_deltas.append(grad_delta)
                grad_state = torch.addcmul(reads_n[n] - grad_delta.mT @ w_new[n], grad_state, gamma_end[n])
            else:
                grad_state = torch.addcmul(reads_n[n], grad_state, gamma_end[n])
        ends = torch.stack(ends[::-1], dim=2)
        if erasing:
            grad_deltas = torch.stack(grad_deltas[::-1], dim=2)
        else:
            grad_deltas = from_out + p["keys_end"] @ ends.mT
        grad_keys_end = deltas @ ends
        grad_gamma_end = (ends * starts).sum(dim=3, keepdim=True)
        grad_q_state = grad_out @ starts
        grad_scores = (grad_out @ deltas.mT).tril_()
        grad_q_ref = grad_scores @ p["keys_in"]
        grad_keys_in = grad_scores.mT @ p["q_ref"]
        # every grad_* below is a fresh tensor: accumulate in place
        grad_cum = (grad_q_ref * p["q_ref"]).addcmul_(grad_q_state, p["q_state"])
        grad_cum.addcmul_(grad_keys_end, p["keys_end"], value=-1.0)
        if erasing:
            d_v = v.shape[-1]
            grad_new = torch.empty_like(p["new"])
            grad_new[..., :d_v] = grad_deltas
            torch.matmul(grad_deltas, starts, out=grad_new[..., d_v:]).neg_()
            grad_rhs = p["ut"].mT @ grad_new
            grad_a = (grad_rhs @ p["new"].mT).tril_(-1).neg_()
            grad_writes, grad_erase_state = grad_rhs[..., :d_v], grad_rhs[..., d_v:]
            grad_erase_ref = grad_a @ p["keys_in"]
            grad_keys_in.flatten(0, 2).baddbmm_(grad_a.flatten(0, 2).mT, p["erase_ref"].flatten(0, 2))
            grad_cum.addcmul_(grad_erase_ref, p["erase_ref"]).addcmul_(grad_erase_state, p["erase_state"])
            grad_erase_keys = grad_erase_ref.mul_(p["to_ref"]).addcmul_(grad_erase_state, p["gamma"])
            grad_b = grad_erase_keys * k
        else:
            grad_writes = grad_deltas
            grad_b = None
        grad_cum.addcmul_(grad_keys_in, p["keys_in"], value=-1.0)
        grad_k = grad_keys_in.mul_(p["from_ref"]).addcmul_(grad_keys_end, p["end_over"])
        if erasing:
            grad_k.addcmul_(grad_erase_keys, b)
        grad_last = (grad_keys_end * p["keys_end"]).sum(dim=3, keepdim=True) + grad_gamma_end * p["gamma_end"]
        grad_cum[:, :, :, -1:] += grad_last
        grad_g = grad_cum.cumsum(dim=3).neg_().add_(grad_cum).add_(grad_cum.sum(dim=3, keepdim=True))  # Σ_{s>=t}
        grad_q = grad_q_ref.mul_(p["to_ref"]).addcmul_(grad_q_state, p["gamma"]).mul_(ctx.scale)
        return grad_q, grad_k, grad_writes * w, grad_g, grad_b, grad_writes * v, grad_state
