"""The AMemOps model as a memgym :class:`~memgym.core.protocols.Memory` (step form, state carried).

``observe(frame)`` pushes one feature frame ``(input_dim,) float32`` (or a ``(T, input_dim)``
block, or an :class:`~memgym.envs.audio_stream_env.AudioStreamEnv` observation dict with
``"features"`` and optional ``"valid"`` rows) through the model's step form and keeps the
per-layer states. Query frames are observed like any other frame (they update memory); the model's
answer to a query is its output at the query's last frame, so the memory keeps the gain and pan
probabilities of every frame whose query flag (input column ``input_dim - 3``) is set.
``retrieve()`` returns the answer at the latest frame; ``retrieve(use_observation)`` with the
env's ``start_frame``/``valid`` looks up the answer formed at that query's end. One memory is
registered per core: ``gdn2, kda, gdn, no_erase, mamba2, attention, attention_rope``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from memgym.core.protocols import Memory
from memgym.core.registry import register_memory
from memgym.memory.recurrent.mixers import CORES, LayerState
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig


class CoreMemory(Memory):
    """A (trained or fresh) :class:`AMemOpsModel` run one frame at a time.

    Args:
        model: the model to run; None builds a fresh one from ``config``.
        config: architecture when ``model`` is None (default: Table 1 with this class's core).
    """

    core: str = "gdn2"
    reads = frozenset({"audio"})

    def __init__(self, model: AMemOpsModel | None = None, config: ModelConfig | None = None) -> None:
        if model is None:
            model = AMemOpsModel(config or ModelConfig(core=self.core))
        self.model = model.eval()
        self.states: list[LayerState] | None = None
        self._last: dict[str, torch.Tensor] | None = None
        self.frames_seen = 0
        self.query_answers: dict[int, dict[str, torch.Tensor]] = {}

    def reset(self) -> None:
        self.states = None
        self._last = None
        self.frames_seen = 0
        self.query_answers = {}

    def _frames(self, observation: Any) -> torch.Tensor:
        if isinstance(observation, dict):
            if "features" not in observation:
                raise ValueError(f"observation dict needs a 'features' entry, got keys {sorted(observation)}")
            rows = np.asarray(observation["features"])
            if "valid" in observation:
                rows = rows[np.asarray(observation["valid"]) > 0.5]
            observation = rows
        x = torch.as_tensor(np.asarray(observation), dtype=torch.float32)
        if x.dim() == 1:
            x = x.unsqueeze(0)
        if x.dim() != 2 or x.shape[-1] != self.model.config.input_dim:
            raise ValueError(
                f"expected a frame ({self.model.config.input_dim},) or frames (T, {self.model.config.input_dim}), "
                f"got shape {tuple(x.shape)}"
            )
        return x.unsqueeze(0)

    @torch.no_grad()
    def observe(self, observation: Any) -> None:
        """Consume one frame (or a block of frames) with the step form."""
        x = self._frames(observation)
        if x.shape[1] == 0:
            return
        param = next(self.model.parameters())
        out = self.model(x.to(param.dtype), self.states, step=True)
        self.states = out["states"]
        self._last = {"gain": out["gain"][0, -1], "pan": out["pan"][0, -1]}
        flagged = (x[0, :, self.model.config.input_dim - 3] > 0.5).nonzero().flatten().tolist()
        for row in flagged:
            self.query_answers[self.frames_seen + row] = {"gain": out["gain"][0, row], "pan": out["pan"][0, row]}
        self.frames_seen += x.shape[1]

    def retrieve(self, query: Any = None) -> dict[str, np.ndarray | int]:
        """Gain/pan class probabilities (last class = none) and argmax predictions.

        Args:
            query: None for the latest frame; a use-phase observation dict (``start_frame`` and
                ``valid``) for the answer formed at that query's last frame during formation.
        """
        logits = self._last
        if isinstance(query, dict) and "start_frame" in query:
            n_valid = int((np.asarray(query.get("valid", np.ones(1))) > 0.5).sum())
            end = int(np.ravel(query["start_frame"])[0]) + n_valid - 1  # (1,) in the env; 0-d or int too
            if end not in self.query_answers:
                raise KeyError(f"no answer formed at frame {end}: the query was not observed during formation")
            logits = self.query_answers[end]
        if logits is None:
            raise RuntimeError("retrieve() before any frame was observed")
        gain = torch.softmax(logits["gain"].float(), -1).numpy()
        pan = torch.softmax(logits["pan"].float(), -1).numpy()
        return {"gain_probs": gain, "pan_probs": pan, "gain": int(gain.argmax()), "pan": int(pan.argmax())}

    def state_dict(self) -> dict[str, Any]:
        """Model weights, architecture and the carried per-layer states (tensors cloned)."""
        states = None if self.states is None else [{k: v.clone() for k, v in s.items()} for s in self.states]
        return {
            "config": dataclasses.asdict(self.model.config),
            "model": self.model.state_dict(),
            "states": states,
            "frames_seen": self.frames_seen,
            "last": None if self._last is None else {k: v.clone() for k, v in self._last.items()},
            "query_answers": {f: {k: v.clone() for k, v in a.items()} for f, a in self.query_answers.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        config = ModelConfig(**state["config"])
        if config != self.model.config:
            self.model = AMemOpsModel(config).eval()
        self.model.load_state_dict(state["model"])
        self.states = state["states"]
        self.frames_seen = state["frames_seen"]
        self._last = state["last"]
        self.query_answers = state.get("query_answers", {})


def _register(core: str) -> type[CoreMemory]:
    name = f"{core.title().replace('_', '')}Memory"
    cls = type(
        name,
        (CoreMemory,),
        {
            "core": core,
            "__doc__": f"Table 1 AMemOps model with the {core} core, one frame per observe() (step form).",
            "__module__": __name__,
            "__qualname__": name,
        },
    )
    return register_memory(core)(cls)


CORE_MEMORIES: dict[str, type[CoreMemory]] = {core: _register(core) for core in CORES}
_BY_CLASS_NAME = {cls.__name__: cls for cls in CORE_MEMORIES.values()}


def __getattr__(name: str) -> type[CoreMemory]:
    """The per-core classes by class name (``Gdn2Memory``, ...), for ``module:attr`` and pickling."""
    if name in _BY_CLASS_NAME:
        return _BY_CLASS_NAME[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
