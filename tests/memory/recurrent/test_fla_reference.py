"""Cross-check against flash-linear-attention's own naive GDN-2 references (CPU, no Triton).

fla-core's package ``__init__`` imports Triton, so its pure-PyTorch ``ops/gdn2/naive.py`` is
loaded by file path. fla stores the state keys-first ``(K, V)``; ours is its transpose, and fla
lays tensors out ``(B, T, H, ·)`` where ours are ``(B, H, T, ·)``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from memgym.memory.recurrent.delta_rule import chunked_delta_rule, delta_rule_loop


def _fla_gdn2_naive():
    spec = importlib.util.find_spec("fla")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("fla-core is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "ops" / "gdn2" / "naive.py"
    if not path.is_file():
        pytest.skip(f"{path} not found in this fla-core version")
    module_spec = importlib.util.spec_from_file_location("fla_gdn2_naive", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("length", [63, 100])
def test_matches_fla_naive_gdn2(length):
    fla = _fla_gdn2_naive()
    gen = torch.Generator().manual_seed(0)
    batch, heads, d_k, d_v = 2, 2, 16, 8
    q = F.normalize(torch.randn(batch, heads, length, d_k, generator=gen), dim=-1)
    k = F.normalize(torch.randn(batch, heads, length, d_k, generator=gen), dim=-1)
    v = torch.randn(batch, heads, length, d_v, generator=gen)
    g = -0.3 * torch.rand(batch, heads, length, d_k, generator=gen)
    b = torch.rand(batch, heads, length, d_k, generator=gen)
    w = torch.rand(batch, heads, length, d_v, generator=gen)
    state = torch.randn(batch, heads, d_v, d_k, generator=gen)
    ours, ours_state = chunked_delta_rule(q, k, v, g, b, w, state)

    def fla_layout(x):
        return x.transpose(1, 2).contiguous()

    args = [fla_layout(x) for x in (q, k, v, g, b, w)]
    for name in ("naive_recurrent_gdn2", "naive_chunk_gdn2"):
        out, final = getattr(fla, name)(*args, initial_state=state.transpose(-1, -2), output_final_state=True)
        rel = ((out.transpose(1, 2) - ours).pow(2).mean().sqrt() / ours.pow(2).mean().sqrt()).item()
        assert rel < 1e-5, name
        torch.testing.assert_close(final.transpose(-1, -2), ours_state, rtol=1e-4, atol=1e-4)
    loop, _ = delta_rule_loop(q, k, v, g, b, w, state)
    torch.testing.assert_close(loop, ours, rtol=1e-4, atol=1e-5)
