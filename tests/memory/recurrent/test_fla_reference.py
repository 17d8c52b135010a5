"""Cross-check against flash-linear-attention's own naive references (CPU, no Triton).

fla-core's package ``__init__`` imports Triton, so its pure-PyTorch ``ops/<op>/naive.py`` files
are loaded by file path (:func:`load_fla_naive`); skipped where fla-core is not installed. fla
stores the state keys-first ``(K, V)``; ours is its transpose, and fla lays tensors out
``(B, T, H, ·)`` where ours are ``(B, H, T, ·)``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from closeness import rel_rms

from memgym.memory.recurrent.delta_rule import chunked_delta_rule, delta_rule_loop
from memgym.memory.recurrent.fla_reference import load_fla_naive


def _naive(op: str):
    try:
        return load_fla_naive(op)
    except ImportError as error:
        pytest.skip(str(error))


def _fla_layout(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(1, 2).contiguous()


def _inputs(length: int, *, scalar_gates: bool):
    gen = torch.Generator().manual_seed(0)
    batch, heads, d_k, d_v = 2, 2, 16, 8
    q = F.normalize(torch.randn(batch, heads, length, d_k, generator=gen), dim=-1)
    k = F.normalize(torch.randn(batch, heads, length, d_k, generator=gen), dim=-1)
    v = torch.randn(batch, heads, length, d_v, generator=gen)
    if scalar_gates:  # one decay and one beta per head and frame (GDN)
        g = -0.3 * torch.rand(batch, heads, length, 1, generator=gen)
        beta = torch.rand(batch, heads, length, 1, generator=gen)
        g, b, w = g.expand(-1, -1, -1, d_k), beta.expand(-1, -1, -1, d_k), beta.expand(-1, -1, -1, d_v)
    else:
        g = -0.3 * torch.rand(batch, heads, length, d_k, generator=gen)
        b = torch.rand(batch, heads, length, d_k, generator=gen)
        w = torch.rand(batch, heads, length, d_v, generator=gen)
    state = torch.randn(batch, heads, d_v, d_k, generator=gen)
    return q, k, v, g, b, w, state


@pytest.mark.parametrize("length", [63, 100])
def test_matches_fla_naive_gdn2(length):
    fla = _naive("gdn2")
    q, k, v, g, b, w, state = _inputs(length, scalar_gates=False)
    ours, ours_state = chunked_delta_rule(q, k, v, g, b, w, state)
    args = [_fla_layout(x) for x in (q, k, v, g, b, w)]
    for name in ("naive_recurrent_gdn2", "naive_chunk_gdn2"):
        out, final = getattr(fla, name)(*args, initial_state=state.transpose(-1, -2), output_final_state=True)
        assert rel_rms(out.transpose(1, 2), ours) < 1e-5, name
        torch.testing.assert_close(final.transpose(-1, -2), ours_state, rtol=1e-4, atol=1e-4)
    loop, _ = delta_rule_loop(q, k, v, g, b, w, state)
    torch.testing.assert_close(loop, ours, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("length", [63, 130])
def test_matches_fla_naive_chunk_gated_delta_rule(length):
    """GDN (scalar decay, erase = write = β) against fla's chunked gated delta rule, outputs,
    final state and the gradients of every input."""
    fla = _naive("gated_delta_rule")
    q, k, v, g, b, w, state = _inputs(length, scalar_gates=True)
    leaves = [x.clone().requires_grad_() for x in (q, k, v, g[..., :1], b[..., :1])]
    lq, lk, lv, lg, lbeta = leaves
    ours, ours_state = chunked_delta_rule(lq, lk, lv, lg.expand_as(g), lbeta.expand_as(b), lbeta.expand_as(w), state)
    (ours.square().sum() + ours_state.square().sum()).backward()
    ours_grads = [x.grad for x in leaves]
    fla_leaves = [x.detach().clone().requires_grad_() for x in leaves]
    fq, fk, fv, fg, fbeta = (_fla_layout(x) for x in fla_leaves)
    out, final = fla.naive_chunk_gated_delta_rule(
        fq, fk, fv, fg[..., 0], fbeta[..., 0], initial_state=state.transpose(-1, -2), output_final_state=True
    )
    out, final = out.transpose(1, 2), final.transpose(-1, -2)
    assert rel_rms(out, ours.detach()) < 1e-5
    assert rel_rms(final, ours_state.detach()) < 1e-5
    (out.square().sum() + final.square().sum()).backward()
    for name, mine, theirs in zip(["q", "k", "v", "g", "beta"], ours_grads, (x.grad for x in fla_leaves), strict=True):
        assert rel_rms(mine, theirs) < 1e-4, name
