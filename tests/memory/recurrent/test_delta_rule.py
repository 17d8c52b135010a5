"""Numerical references for the gated delta rule: step loop vs chunked form vs literal loop."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from closeness import rel_rms

from memgym.memory.recurrent.delta_rule import chunked_delta_rule, delta_rule_loop, reference_delta_rule


def make_inputs(length: int, *, dtype=torch.float64, batch=2, heads=2, d_k=16, d_v=8, scalar_decay=False, seed=0):
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=dtype)

    q = F.normalize(randn(batch, heads, length, d_k), dim=-1)
    k = F.normalize(randn(batch, heads, length, d_k), dim=-1)
    v = randn(batch, heads, length, d_v)
    g = -0.3 * torch.rand(batch, heads, length, 1 if scalar_decay else d_k, generator=gen, dtype=dtype)
    g = g.expand(batch, heads, length, d_k).contiguous()
    b = torch.rand(batch, heads, length, d_k, generator=gen, dtype=dtype)
    w = torch.rand(batch, heads, length, d_v, generator=gen, dtype=dtype)
    state = randn(batch, heads, d_v, d_k)
    return q, k, v, g, b, w, state


@pytest.mark.parametrize("length", [63, 100, 200])
@pytest.mark.parametrize(("dtype", "tol"), [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_chunked_matches_step_loop(length, dtype, tol):
    inputs = make_inputs(length, dtype=dtype)
    o_step, s_step = delta_rule_loop(*inputs)
    o_chunk, s_chunk = chunked_delta_rule(*inputs, chunk_size=64)
    assert rel_rms(o_chunk, o_step) < tol
    assert rel_rms(s_chunk, s_step) < tol


@pytest.mark.parametrize("chunk_size", [1, 16, 64, 256])
def test_chunk_size_does_not_change_result(chunk_size):
    inputs = make_inputs(100, batch=1, heads=1)
    o_ref, s_ref = delta_rule_loop(*inputs)
    o, s = chunked_delta_rule(*inputs, chunk_size=chunk_size)
    assert rel_rms(o, o_ref) < 1e-10 and rel_rms(s, s_ref) < 1e-10


@pytest.mark.parametrize("length", [63, 100])
def test_no_erase_shortcut_equals_zero_erase_gate(length):
    """``b=None`` (additive memory, no UT solve) gives the numbers of an explicit all-zero erase gate."""
    q, k, v, g, b, w, state = make_inputs(length)
    zeros = torch.zeros_like(b)
    o_ref, s_ref = reference_delta_rule(
        q[:1, :1], k[:1, :1], v[:1, :1], g[:1, :1], zeros[:1, :1], w[:1, :1], state[:1, :1]
    )
    o_none, s_none = chunked_delta_rule(q, k, v, g, None, w, state)
    o_zero, s_zero = chunked_delta_rule(q, k, v, g, zeros, w, state)
    o_loop, s_loop = delta_rule_loop(q, k, v, g, None, w, state)
    assert rel_rms(o_none, o_zero) < 1e-12 and rel_rms(s_none, s_zero) < 1e-12
    assert rel_rms(o_loop, o_zero) < 1e-10 and rel_rms(s_loop, s_zero) < 1e-10
    assert rel_rms(o_none[:1, :1], o_ref) < 1e-10 and rel_rms(s_none[:1, :1], s_ref) < 1e-10


def test_step_loop_matches_literal_reference():
    inputs = make_inputs(20, batch=1, heads=2)
    o_ref, s_ref = reference_delta_rule(*inputs)
    o, s = delta_rule_loop(*inputs)
    assert rel_rms(o, o_ref) < 1e-12 and rel_rms(s, s_ref) < 1e-12


def test_strong_decay_stays_finite_in_float32():
    q, k, v, g, b, w, state = make_inputs(128, dtype=torch.float32)
    g = torch.full_like(g, -2.5)  # the model's clamp
    o_step, _ = delta_rule_loop(q, k, v, g, b, w, state)
    o_chunk, _ = chunked_delta_rule(q, k, v, g, b, w, state)
    assert torch.isfinite(o_chunk).all()
    assert rel_rms(o_chunk, o_step) < 1e-5


@pytest.mark.parametrize("form", ["chunked", "step"])
def test_gradcheck(form):
    inputs = [x.detach().requires_grad_() for x in make_inputs(7, batch=1, heads=1, d_k=3, d_v=2)]
    if form == "chunked":
        fn = lambda *xs: chunked_delta_rule(*xs, chunk_size=4)  # noqa: E731
    else:
        fn = delta_rule_loop
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6)


def test_gradients_of_forms_agree():
    def grads(fn):
        inputs = [x.detach().requires_grad_() for x in make_inputs(70)]
        o, s = fn(*inputs)
        (o.pow(2).sum() + s.sum()).backward()
        return [x.grad for x in inputs]

    for a, b in zip(grads(delta_rule_loop), grads(lambda *x: chunked_delta_rule(*x, chunk_size=32)), strict=True):
        assert rel_rms(b, a) < 1e-10


def _unit_writes(erase: float):
    """No decay, unit key e1: write v1 then v2, then read with q = e1; also key e2 written first."""
    d_k, d_v = 4, 3
    keys = torch.tensor([[0.0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], dtype=torch.float64)
    values = torch.tensor([[5.0, 5, 5], [1, 2, 3], [10, 20, 30]], dtype=torch.float64)
    q = keys.clone()
    shape = (1, 1, 3)
    inputs = (
        q.view(*shape, d_k),
        keys.view(*shape, d_k),
        values.view(*shape, d_v),
        torch.zeros(*shape, d_k, dtype=torch.float64),
        torch.full((*shape, d_k), erase, dtype=torch.float64),
        torch.ones(*shape, d_v, dtype=torch.float64),
    )
    return inputs, values


@pytest.mark.parametrize("form", [delta_rule_loop, chunked_delta_rule])
def test_erasing_memory_reads_latest_value(form):
    inputs, values = _unit_writes(erase=1.0)
    o, state = form(*inputs)
    assert torch.allclose(o[0, 0, 2] * math.sqrt(4), values[2])
    # the orthogonal key e2 still reads what was written under it
    assert torch.allclose(state[0, 0] @ torch.tensor([0.0, 1, 0, 0], dtype=torch.float64), values[0])


@pytest.mark.parametrize("form", [delta_rule_loop, chunked_delta_rule])
def test_additive_memory_reads_sum(form):
    inputs, values = _unit_writes(erase=0.0)
    o, state = form(*inputs)
    assert torch.allclose(o[0, 0, 2] * math.sqrt(4), values[1] + values[2])
    assert torch.allclose(state[0, 0] @ torch.tensor([0.0, 1, 0, 0], dtype=torch.float64), values[0])


def test_causality():
    inputs = make_inputs(90)
    o, _ = chunked_delta_rule(*inputs, chunk_size=32)
    later = make_inputs(90, seed=1)
    changed = [x.clone() for x in inputs]
    for x, y in zip(changed[:6], later[:6], strict=True):  # every per-frame input from frame 50 on
        x[:, :, 50:] = y[:, :, 50:]
    o2, _ = chunked_delta_rule(*changed, chunk_size=32)
    assert torch.equal(o[:, :, :50], o2[:, :, :50])
    assert not torch.allclose(o[:, :, 50:], o2[:, :, 50:])


def test_bad_shapes_are_named():
    q, k, v, g, b, w, state = make_inputs(5)
    with pytest.raises(ValueError, match="^w must have shape"):
        chunked_delta_rule(q, k, v, g, b, w[..., :2], state)
    with pytest.raises(ValueError, match="^state must have shape"):
        delta_rule_loop(q, k, v, g, b, w, state[:, :1])
