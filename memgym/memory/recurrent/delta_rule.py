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
  the cheap state hand-over runs sequentially over chunks.

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
    ``U`` themselves and the triangular solve is skipped.
    Returns:
        ``o`` ``(B, H, T, d_v)`` and the final state ``(B, H, d_v, d_k)``.
    """
    batch, heads, length, d_k, d_v = _check_shapes(q, k, v, g, b, w, state)
    current = _initial_state(q, v, state)
    size = chunk_size
    pad = (-length) % size
    erasing = b is not None
    inputs = (q, k, v, g, w, b) if erasing else (q, k, v, g, w)
    if pad:
        inputs = tuple(F.pad(x, (0, 0, 0, pad)) for x in inputs)
    n_chunks = (length + pad) // size
    q, k, v, g, w, *erase = (x.reshape(batch, heads, n_chunks, size, x.shape[-1]) for x in inputs)
    cum = g.cumsum(dim=3)  # log Γ_t, (B, H, N, C, d_k)
    ref = cum[:, :, :, size // 2 : size // 2 + 1]  # factor Γ_t/Γ_s around the middle frame
    gamma_t = torch.exp(cum - ref)
    gamma_s_inv = torch.exp(ref - cum)
    gamma_from_start = torch.exp(cum)  # Γ_t
    keys_out = k * gamma_s_inv  # k_s / Γ_s (scaled)
    inclusive = torch.tril(torch.ones(size, size, dtype=torch.bool, device=q.device))
    if erasing:
        erase_keys = erase[0] * k  # a_t
        strict = torch.tril(torch.ones(size, size, dtype=torch.bool, device=q.device), diagonal=-1)
        a_mat = ((erase_keys * gamma_t) @ keys_out.transpose(-1, -2)).masked_fill(~strict, 0.0)
        eye = torch.eye(size, dtype=q.dtype, device=q.device)
        ut = torch.linalg.solve_triangular(eye + a_mat, eye.expand_as(a_mat), upper=False, unitriangular=True)
        u_new = ut @ (w * v)  # T U, (B, H, N, C, d_v)
        w_state = ut @ (erase_keys * gamma_from_start)  # T (a ⊙ Γ), (B, H, N, C, d_k)
    else:
        u_new = w * v
    scores = ((q * gamma_t) @ keys_out.transpose(-1, -2)).masked_fill(~inclusive, 0.0)
    q_state = q * gamma_from_start
    gamma_end = torch.exp(cum[:, :, :, -1:])  # (B, H, N, 1, d_k)
    keys_end = keys_out * torch.exp(cum[:, :, :, -1:] - ref)  # k_s ⊙ Γ_C/Γ_s
    scale = 1.0 / math.sqrt(d_k)
    outputs = []
    # unbind once: indexing chunk n inside the loop would make backward build a full-size zero
    # gradient per chunk (quadratic in the number of chunks)
    per_chunk = zip(*(x.unbind(dim=2) for x in (u_new, q_state, scores, gamma_end, keys_end)), strict=True)
    state_reads = w_state.unbind(dim=2) if erasing else (None,) * n_chunks
    for (u_n, q_n, scores_n, gamma_end_n, keys_end_n), w_n in zip(per_chunk, state_reads, strict=True):
        delta = u_n if w_n is None else u_n - w_n @ current.transpose(-1, -2)  # (B, H, C, d_v)
        outputs.append((q_n @ current.transpose(-1, -2) + scores_n @ delta) * scale)
        current = current * gamma_end_n + delta.transpose(-1, -2) @ keys_end_n
    out = torch.cat(outputs, dim=2)[:, :, :length]
    return out, current
