"""State interventions: projected subspaces read zero, controls are norm-matched."""

from __future__ import annotations

import pytest
import torch

from memgym.memory.recurrent.intervention import (
    edit_states,
    key_subspace,
    most_overlapping,
    random_subspace,
    subspace_overlap,
)
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig


@pytest.fixture
def run():
    torch.manual_seed(0)
    model = AMemOpsModel(ModelConfig(core="gdn2")).eval()
    x = torch.randn(2, 80, 131)
    with torch.no_grad():
        out = model(x)
    return model, x, out


def target_bases(out, frames=slice(60, 70)):
    # keys of the target's final occurrence (frames 60-69 of stream 0), per layer (H, d_k, 3)
    return [key_subspace(keys[0, :, frames]) for keys in out["keys"]]


def test_key_subspace_spans_the_dominant_key_directions():
    gen = torch.Generator().manual_seed(0)
    basis = torch.linalg.qr(torch.randn(16, 3, generator=gen, dtype=torch.float64))[0]
    keys = torch.randn(20, 3, generator=gen, dtype=torch.float64) @ basis.T + 1e-6 * torch.randn(
        20, 16, generator=gen, dtype=torch.float64
    )
    found = key_subspace(keys)
    assert found.shape == (16, 3)
    torch.testing.assert_close(found.T @ found, torch.eye(3, dtype=torch.float64), atol=1e-12, rtol=0)
    assert subspace_overlap([found], [basis]) == pytest.approx(3.0, abs=1e-8)
    with pytest.raises(ValueError, match="at least 3 key frames"):
        key_subspace(keys[:2])


def test_projected_subspace_reads_zero_in_both_layers(run):
    _, _, out = run
    bases = target_bases(out)
    edited, norms = edit_states(out["states"], bases)
    for layer, basis, norm in zip(edited, bases, norms, strict=True):
        reads = layer["S"] @ basis.unsqueeze(0)  # (B, H, d_v, 3)
        assert reads.abs().max() < 1e-5 * layer["S"].abs().max()
        assert torch.all(norm > 0)


def test_orthogonal_keys_untouched_by_the_edit(run):
    _, _, out = run
    bases = target_bases(out)
    edited, _ = edit_states(out["states"], bases)
    for before, after, basis in zip(out["states"], edited, bases, strict=True):
        complement = torch.eye(64) - basis @ basis.transpose(-1, -2)
        torch.testing.assert_close(after["S"] @ complement, before["S"] @ complement, atol=1e-5, rtol=1e-5)


def test_controls_are_rescaled_to_the_target_edit_norm(run):
    _, _, out = run
    _, target_norms = edit_states(out["states"], target_bases(out))
    gen = torch.Generator().manual_seed(1)
    controls = [random_subspace(2, 64, generator=gen) for _ in out["states"]]
    _, control_norms = edit_states(out["states"], controls, match_norms=target_norms)
    for got, want in zip(control_norms, target_norms, strict=True):
        assert torch.all((got - want).abs() / want < 1e-6)


def test_most_overlapping_picks_the_closest_source(run):
    _, _, out = run
    target = target_bases(out, slice(60, 70))
    near = target_bases(out, slice(61, 71))
    far = [random_subspace(2, 64, generator=torch.Generator().manual_seed(5)) for _ in target]
    assert most_overlapping(target, [far, near]) == 1


def test_edit_then_continue_the_stream(run):
    model, x, _ = run
    with torch.no_grad():
        first = model(x[:, :70])
        edited, _ = edit_states(first["states"], target_bases(first))
        after = model(x[:, 70:], edited)
        untouched = model(x[:, 70:], first["states"])
    assert after["gain"].shape == (2, 10, 5)
    assert not torch.allclose(after["gain"], untouched["gain"])


def test_attention_states_cannot_be_edited():
    model = AMemOpsModel(ModelConfig(core="attention"))
    with torch.no_grad():
        out = model(torch.randn(1, 10, 131))
    with pytest.raises(ValueError, match="attention caches"):
        edit_states(out["states"], [random_subspace(2, 64) for _ in out["states"]])


def test_state_edit_memory_answers_each_edit_between_its_frames():
    """Observed in env-like blocks, the unedited continuation answers what one pass over the whole
    stream answers; an edit's answers follow its edited state; frames outside an edit are refused."""
    import numpy as np

    from memgym.memory.recurrent.intervention import StateEdit, StateEditMemory

    torch.manual_seed(0)
    model = AMemOpsModel(ModelConfig(core="gdn2", width=16, heads=2, head_dim=8, mlp_hidden=16)).eval()
    frames = torch.randn(60, 131)
    zeroed = lambda states, keys: {"none": states, "zero": [{**s, "S": torch.zeros_like(s["S"])} for s in states]}  # noqa: E731
    memory = StateEditMemory(model, [StateEdit(frame=20, until=49, build=zeroed)])
    for start in range(0, 60, 16):
        memory.observe({"features": frames[start : start + 16].numpy(), "valid": np.ones(min(16, 60 - start))})
    with pytest.raises(RuntimeError, match="select"):
        memory.retrieve({"start_frame": np.array([30])})
    with torch.no_grad():
        whole = model(frames[None])
        zero_states = [{**s, "S": torch.zeros_like(s["S"])} for s in model(frames[None, :20])["states"]]
        edited = model(frames[None, 20:50], zero_states)
    memory.select(0, "none")
    answer = memory.retrieve({"start_frame": np.array([30]), "valid": np.ones(12)})  # ends at frame 41
    assert answer == {head: int(whole[head][0, 41].argmax()) for head in ("gain", "pan")}
    memory.select(0, "zero")
    assert memory.retrieve({"start_frame": 49}) == {head: int(edited[head][0, 29].argmax()) for head in ("gain", "pan")}
    with pytest.raises(KeyError, match="frames 20..49"):
        memory.retrieve({"start_frame": 50})
