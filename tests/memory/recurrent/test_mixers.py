"""The variant table as reductions between mixers, and step vs chunked agreement of whole models."""

from __future__ import annotations

import pytest
import torch

from memgym.memory.recurrent.mixers import CORES, MemoryMixer, MixerConfig
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig, parameter_count, query_loss

WIDTH, HEADS, DK = 16, 2, 8
SATURATE = 1000.0  # sigmoid(±1000) is exactly 1 / 0 in float64


def mixer(core: str, seed: int = 0) -> MemoryMixer:
    torch.manual_seed(seed)
    module = MemoryMixer(MixerConfig(core=core, width=WIDTH, heads=HEADS, head_dim=DK, chunk_size=16)).double()
    with torch.no_grad():  # make the gates depend on the input, not only their biases
        for name in ("decay_proj", "beta_proj", "erase_proj", "write_proj"):
            layer = getattr(module, name, None)
            if layer is not None:
                layer.weight.normal_(0, 0.3)
    return module


def copy_shared(src: MemoryMixer, dst: MemoryMixer) -> None:
    """Copy the projections, conv and output processing every variant shares."""
    with torch.no_grad():
        for name in ("q_proj", "k_proj", "v_proj", "conv", "gate_proj", "out_norm", "out_proj"):
            getattr(dst, name).load_state_dict(getattr(src, name).state_dict())


def per_channel_from_heads(dst: torch.nn.Linear, src: torch.nn.Linear, per_head: int) -> None:
    """Make a per-channel projection repeat a per-head (scalar) one over each head's channels."""
    with torch.no_grad():
        dst.weight.copy_(src.weight.repeat_interleave(per_head, dim=0))
        dst.bias.copy_(src.bias.repeat_interleave(per_head, dim=0))


def saturate(layer: torch.nn.Linear, value: float) -> None:
    with torch.no_grad():
        layer.weight.zero_()
        layer.bias.fill_(value)


def outputs(module: MemoryMixer, x: torch.Tensor):
    y, state, _ = module(x)
    return y, state["S"]


@pytest.fixture
def x():
    return torch.randn(2, 37, WIDTH, dtype=torch.float64, generator=torch.Generator().manual_seed(3))


def assert_same(a, b):
    for u, v in zip(a, b, strict=True):
        torch.testing.assert_close(u, v, rtol=1e-12, atol=1e-12)


def test_gdn2_with_tied_gates_is_kda(x):
    kda, gdn2 = mixer("kda"), mixer("gdn2", seed=1)
    copy_shared(kda, gdn2)
    gdn2.decay_proj.load_state_dict(kda.decay_proj.state_dict())
    per_channel_from_heads(gdn2.erase_proj, kda.beta_proj, DK)
    per_channel_from_heads(gdn2.write_proj, kda.beta_proj, DK)
    assert_same(outputs(gdn2, x), outputs(kda, x))


def test_kda_with_scalar_decay_is_gdn(x):
    gdn, kda = mixer("gdn"), mixer("kda", seed=1)
    copy_shared(gdn, kda)
    kda.beta_proj.load_state_dict(gdn.beta_proj.state_dict())
    per_channel_from_heads(kda.decay_proj, gdn.decay_proj, DK)
    assert_same(outputs(kda, x), outputs(gdn, x))


def test_gdn2_without_erase_is_no_erase(x):
    no_erase, gdn2 = mixer("no_erase"), mixer("gdn2", seed=1)
    copy_shared(no_erase, gdn2)
    gdn2.decay_proj.load_state_dict(no_erase.decay_proj.state_dict())
    gdn2.write_proj.load_state_dict(no_erase.write_proj.state_dict())
    saturate(gdn2.erase_proj, -SATURATE)
    assert_same(outputs(gdn2, x), outputs(no_erase, x))


def test_no_erase_with_unit_write_and_scalar_decay_is_mamba2(x):
    mamba2, no_erase = mixer("mamba2"), mixer("no_erase", seed=1)
    copy_shared(mamba2, no_erase)
    per_channel_from_heads(no_erase.decay_proj, mamba2.decay_proj, DK)
    saturate(no_erase.write_proj, SATURATE)
    assert_same(outputs(no_erase, x), outputs(mamba2, x))


def test_initialisation_follows_table_1():
    module = MemoryMixer(MixerConfig(core="gdn2"))
    rates = torch.nn.functional.softplus(module.decay_proj.bias)
    torch.testing.assert_close(rates.min(), torch.tensor(1e-3), rtol=1e-4, atol=0)
    torch.testing.assert_close(rates.max(), torch.tensor(1e-1), rtol=1e-4, atol=0)
    assert torch.all(module.erase_proj.bias == 1.0) and torch.all(module.write_proj.bias == 1.0)
    attention = MemoryMixer(MixerConfig(core="attention_rope"))
    assert torch.all(attention.qk_scale == 8.0)


def test_parameter_counts_match_the_paper():
    assert round(parameter_count(AMemOpsModel(ModelConfig(core="gdn2"))), -3) == 549_000
    assert round(parameter_count(AMemOpsModel(ModelConfig(core="attention"))), -3) == 450_000


def _small(core: str) -> AMemOpsModel:
    torch.manual_seed(0)
    config = ModelConfig(core=core, input_dim=11, width=16, heads=2, head_dim=8, mlp_hidden=32, chunk_size=16)
    return AMemOpsModel(config).double()


@pytest.mark.parametrize("core", CORES)
def test_model_step_form_matches_chunked_form(core):
    model = _small(core)
    x = torch.randn(2, 45, 11, dtype=torch.float64)
    whole = model(x)
    states, gains = None, []
    for t in range(45):
        out = model(x[:, t : t + 1], states, step=True)
        states, gains = out["states"], [*gains, out["gain"]]
    torch.testing.assert_close(torch.cat(gains, 1), whole["gain"], rtol=1e-10, atol=1e-10)
    first = model(x[:, :20])
    second = model(x[:, 20:], first["states"])
    torch.testing.assert_close(torch.cat([first["pan"], second["pan"]], 1), whole["pan"], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("core", CORES)
def test_model_is_causal(core):
    model = _small(core)
    x = torch.randn(1, 40, 11, dtype=torch.float64)
    changed = x.clone()
    changed[:, 25:] = torch.randn(1, 15, 11, dtype=torch.float64)
    a, b = model(x)["gain"], model(changed)["gain"]
    torch.testing.assert_close(a[:, :25], b[:, :25], rtol=0, atol=1e-13)
    assert not torch.allclose(a[:, 25:], b[:, 25:])


def test_query_loss_uses_only_labelled_frames():
    model = _small("gdn2")
    x = torch.randn(2, 10, 11, dtype=torch.float64)
    out = model(x)
    gain = torch.full((2, 10), -100)
    pan = torch.full((2, 10), -100)
    gain[0, 9], pan[1, 4] = 2, 4
    expected = (
        torch.nn.functional.cross_entropy(out["gain"][0, 9:10], gain[0, 9:10])
        + torch.nn.functional.cross_entropy(out["pan"][1, 4:5], pan[1, 4:5])
    ) / 2
    torch.testing.assert_close(query_loss(out, gain, pan), expected)


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="core 'lstm'"):
        ModelConfig(core="lstm")


def test_causal_conv_equals_grouped_conv1d_with_gradients():
    from memgym.memory.recurrent.mixers import _DepthwiseShiftConv

    gen = torch.Generator().manual_seed(0)
    full = torch.randn(2, 10, 5, generator=gen, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(5, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    reference = torch.nn.functional.conv1d(full.transpose(1, 2), weight.unsqueeze(1), groups=5).transpose(1, 2)
    assert torch.allclose(_DepthwiseShiftConv.apply(full, weight), reference, atol=1e-12)
    assert torch.autograd.gradcheck(_DepthwiseShiftConv.apply, (full, weight))


def test_input_standardisation_is_fixed_and_adds_no_parameters():
    plain = ModelConfig(core="gdn2", width=16, heads=1, head_dim=8, mlp_hidden=16, layers=1)
    standardised = ModelConfig(**{**plain.__dict__, "standardised_inputs": 128, "input_mean": -11.1, "input_std": 3.3})
    torch.manual_seed(0)
    reference = AMemOpsModel(plain)
    torch.manual_seed(0)
    model = AMemOpsModel(standardised)
    assert parameter_count(model) == parameter_count(reference)
    assert set(model.state_dict()) == set(reference.state_dict())  # checkpoints unchanged
    x = torch.randn(2, 20, 131) * 3.3 - 11.1
    by_hand = torch.cat([(x[..., :128] + 11.1) / 3.3, x[..., 128:]], dim=-1)
    assert torch.allclose(model(x)["gain"], reference(by_hand)["gain"], atol=1e-6)
    with pytest.raises(ValueError, match="standardised_inputs"):
        ModelConfig(standardised_inputs=200)


@pytest.mark.parametrize("core", ["gdn2", "attention_rope"])
def test_without_convolution_the_step_form_still_matches_and_conv_parameters_are_gone(core):
    torch.manual_seed(0)
    sizes = dict(core=core, input_dim=11, width=16, heads=2, head_dim=8, mlp_hidden=32, chunk_size=16)
    plain = AMemOpsModel(ModelConfig(**sizes, conv_kernel=0)).double()
    with_conv = AMemOpsModel(ModelConfig(**sizes))
    conv_parameters = 2 * 3 * 2 * 8 * (4 + 1)  # layers x (q, k, v channels) x (4 taps + bias)
    assert parameter_count(with_conv) - parameter_count(plain) == conv_parameters
    assert not any("conv" in name for name, _ in plain.named_parameters())
    x = torch.randn(1, 30, 11, dtype=torch.float64)
    whole = plain(x)
    states, gains = None, []
    for t in range(30):
        out = plain(x[:, t : t + 1], states, step=True)
        states, gains = out["states"], [*gains, out["gain"]]
    torch.testing.assert_close(torch.cat(gains, 1), whole["gain"], rtol=1e-10, atol=1e-10)


def test_negative_conv_kernels_are_refused():
    with pytest.raises(ValueError, match="conv_kernel must be >= 0"):
        ModelConfig(conv_kernel=-1)
