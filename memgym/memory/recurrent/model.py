"""The Table 1 AMemOps model: input projection, pre-norm memory blocks, gain and pan classifiers.

``x (B, T, input_dim) float32`` (stereo log-mel + query flags, 25 frames/s) -> optional fixed
standardisation of the leading ``standardised_inputs`` columns (the log-mel ones for audio:
``(x - input_mean) / input_std``, constants from the config, no parameters) -> ``Linear(input_dim, d)`` -> ``layers`` × [``x + Mixer(RMSNorm(x))``; ``x + MLP(RMSNorm(x))``] ->
``RMSNorm`` -> separate gain and pan classifiers ``(B, T, n_gain)`` and ``(B, T, n_pan)``
(class 0..n-2: attribute values, last class: "none"). The mixer is one of
:data:`~memgym.memory.recurrent.mixers.CORES`; the MLP is ``Linear(d, mlp_hidden)``, SiLU,
``Linear(mlp_hidden, d)``.

The model's carried state is a list with one :data:`~memgym.memory.recurrent.mixers.LayerState`
per layer; :meth:`AMemOpsModel.forward` takes and returns it so a stream can be processed in
pieces (chunked for training, one frame at a time in the env loop) with identical outputs.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from memgym.core.seeding import ADDED_FIELD
from memgym.datasets.amemops.config import IGNORE_INDEX
from memgym.memory.recurrent.mixers import CORES, LayerState, MemoryMixer, MixerConfig


@dataclasses.dataclass(frozen=True)
class ArchConfig:
    """Model sizes, the ``arch.*`` keys of ``memgym train amemops`` (Table 1 defaults; the symbolic
    controls use one layer and one head). :class:`ModelConfig` adds the core and the input and
    output sizes, which come from the data."""

    width: int = dataclasses.field(default=128, metadata={"help": "model width d"})
    layers: int = dataclasses.field(default=2, metadata={"help": "pre-norm blocks"})
    heads: int = dataclasses.field(default=2, metadata={"help": "memory heads per layer"})
    head_dim: int = dataclasses.field(default=64, metadata={"help": "d_k = d_v"})
    mlp_hidden: int = dataclasses.field(default=512, metadata={"help": "SiLU MLP width"})
    chunk_size: int = dataclasses.field(default=64, metadata={"help": "chunk of the parallel form"})
    conv_kernel: int = dataclasses.field(
        default=4,
        metadata={"help": "depthwise causal conv frames (0: no convolution, the ablation)", "min": 0, **ADDED_FIELD},
    )


@dataclasses.dataclass(frozen=True)
class ModelConfig(ArchConfig):
    """Architecture of the AMemOps model (defaults: Table 1): the sizes of :class:`ArchConfig`
    plus the memory core, the input and output sizes and the initialisation."""

    core: str = dataclasses.field(default="gdn2", metadata={"help": f"memory core: {', '.join(CORES)}"})
    input_dim: int = dataclasses.field(default=131, metadata={"help": "input features per frame"})
    n_gain: int = dataclasses.field(default=5, metadata={"help": "gain classes (values + none)"})
    n_pan: int = dataclasses.field(default=5, metadata={"help": "pan classes (values + none)"})
    decay_min: float = dataclasses.field(default=1e-3, metadata={"help": "smallest initial -log(alpha)"})
    decay_max: float = dataclasses.field(default=1e-1, metadata={"help": "largest initial -log(alpha)"})
    gate_init: float = dataclasses.field(default=1.0, metadata={"help": "erase/write gate bias (sigmoid(1))"})
    standardised_inputs: int = dataclasses.field(
        default=0, metadata={"help": "leading input columns standardised as (x - input_mean) / input_std"}
    )
    input_mean: float = dataclasses.field(default=0.0, metadata={"help": "mean subtracted from those columns"})
    input_std: float = dataclasses.field(default=1.0, metadata={"help": "spread they are divided by"})

    def __post_init__(self) -> None:
        if self.core not in CORES:
            raise ValueError(f"core '{self.core}' is not one of {', '.join(CORES)}")
        for name in ("input_dim", "width", "layers", "heads", "head_dim", "mlp_hidden", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.conv_kernel < 0:
            raise ValueError(f"conv_kernel must be >= 0 (0: no convolution), got {self.conv_kernel}")
        if not 0 <= self.standardised_inputs <= self.input_dim or self.input_std <= 0:
            raise ValueError(
                f"standardised_inputs must be in [0, input_dim] and input_std > 0, got "
                f"{self.standardised_inputs} and {self.input_std}"
            )
        if self.n_gain < 2 or self.n_pan < 2:
            raise ValueError("n_gain and n_pan need at least one value class plus 'none'")

    def mixer(self) -> MixerConfig:
        return MixerConfig(
            core=self.core,
            width=self.width,
            heads=self.heads,
            head_dim=self.head_dim,
            conv_kernel=self.conv_kernel,
            decay_min=self.decay_min,
            decay_max=self.decay_max,
            gate_init=self.gate_init,
            chunk_size=self.chunk_size,
        )


class Block(nn.Module):
    """Pre-norm block: memory mixer then SiLU MLP, each with a residual connection."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.mixer_norm = nn.RMSNorm(config.width)
        self.mixer = MemoryMixer(config.mixer())
        self.mlp_norm = nn.RMSNorm(config.width)
        self.mlp = nn.Sequential(
            nn.Linear(config.width, config.mlp_hidden), nn.SiLU(), nn.Linear(config.mlp_hidden, config.width)
        )

    def forward(self, x, state: LayerState | None, *, step: bool):
        mixed, new_state, keys = self.mixer(self.mixer_norm(x), state, step=step)
        x = x + mixed
        return x + self.mlp(self.mlp_norm(x)), new_state, keys


class AMemOpsModel(nn.Module):
    """Table 1 model; see the module docstring."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        shift, scale = torch.zeros(config.input_dim), torch.ones(config.input_dim)
        shift[: config.standardised_inputs] = config.input_mean
        scale[: config.standardised_inputs] = config.input_std
        self.register_buffer("input_shift", shift, persistent=False)  # from the config, not the checkpoint
        self.register_buffer("input_scale", scale, persistent=False)
        self.input_proj = nn.Linear(config.input_dim, config.width)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.final_norm = nn.RMSNorm(config.width)
        self.gain_head = nn.Linear(config.width, config.n_gain)
        self.pan_head = nn.Linear(config.width, config.n_pan)

    def forward(
        self,
        x: torch.Tensor,
        states: list[LayerState] | None = None,
        *,
        step: bool = False,
    ) -> dict[str, object]:
        """Run ``x`` ``(B, T, input_dim)`` from ``states`` (None: a fresh stream).

        Returns:
            ``{"gain": (B, T, n_gain), "pan": (B, T, n_pan)`` logits, ``"states"``: new per-layer
            states, ``"keys"``: per-layer keys ``(B, H, T, d_k)``}.
        """
        if x.dim() != 3 or x.shape[-1] != self.config.input_dim:
            raise ValueError(f"expected inputs (B, T, {self.config.input_dim}), got {tuple(x.shape)}")
        if self.config.standardised_inputs:
            x = (x - self.input_shift) / self.input_scale
        h = self.input_proj(x)
        new_states, keys = [], []
        for i, block in enumerate(self.blocks):
            h, layer_state, layer_keys = block(h, None if states is None else states[i], step=step)
            new_states.append(layer_state)
            keys.append(layer_keys)
        h = self.final_norm(h)
        return {"gain": self.gain_head(h), "pan": self.pan_head(h), "states": new_states, "keys": keys}


def query_loss(outputs: dict[str, object], gain_labels: torch.Tensor, pan_labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over labelled frames of both heads (labels ``(B, T)`` int64, -100 = none)."""
    gain = outputs["gain"]
    pan = outputs["pan"]
    losses = []
    unused = gain.sum() * 0.0 + pan.sum() * 0.0  # keeps both heads in the graph (DDP needs every gradient)
    for logits, labels in ((gain, gain_labels), (pan, pan_labels)):
        if (labels != IGNORE_INDEX).any():
            losses.append(
                F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)
            )
    if not losses:
        return unused
    return torch.stack(losses).mean() + unused


def parameter_count(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
