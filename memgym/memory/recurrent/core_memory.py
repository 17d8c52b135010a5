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

``form="chunked"`` keeps the observed frames instead and runs the model's chunked (parallel) form
over all of them at the first ``retrieve`` after new frames: the model is causal, so its output at
a query's end depends only on the frames up to it, and over a whole stream the answers are those of
one chunked call on the stream (what training optimises; ``memgym eval amemops`` uses it).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Literal

import numpy as np
import torch

from memgym.core.protocols import Memory
from memgym.core.registry import register_memory
from memgym.memory.recurrent.mixers import CORES, LayerState
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig


@dataclasses.dataclass(frozen=True)
class CoreMemoryOptions:
    """What an evaluation gives a core memory to build itself (:meth:`CoreMemory.from_options`)."""

    model: AMemOpsModel
    """the trained model (its ``config.core`` is the memory's core)"""
    form: Literal["step", "chunked"] = "chunked"
    """``memgym eval amemops form=``: the chunked or the step form"""


class CoreMemory(Memory):
    """A (trained or fresh) :class:`AMemOpsModel` run one frame at a time.

    Args:
        model: the model to run; None builds a fresh one from ``config``.
        config: architecture when ``model`` is None (default: Table 1 with this class's core).
        form: ``"step"`` (each observation through the step form, state carried) or ``"chunked"``
            (frames kept, the chunked form run over all of them when answers are read).
    """

    core: str = "gdn2"
    reads = frozenset({"audio"})

    def __init__(
        self,
        model: AMemOpsModel | None = None,
        config: ModelConfig | None = None,
        form: Literal["step", "chunked"] = "step",
    ) -> None:
        if form not in ("step", "chunked"):
            raise ValueError(f"form must be 'step' or 'chunked', got '{form}'")
        if model is None:
            model = AMemOpsModel(config or ModelConfig(core=self.core))
        self.model = model.eval()
        self.form = form
        self.reset()

    reads: frozenset[str] = frozenset({"audio"})
    """What it observes: the env's feature blocks (audio log-mel or the symbolic controls)."""

    @classmethod
    def from_options(cls, options: CoreMemoryOptions) -> CoreMemory:
        """The memory of an evaluation: ``options.model`` run in ``options.form``."""
        if options.model.config.core != cls.core:
            raise ValueError(f"{cls.__name__} runs '{cls.core}' models, got a '{options.model.config.core}' model")
        return cls(options.model, form=options.form)

    def reset(self) -> None:
        self.states: list[LayerState] | None = None
        self._last: dict[str, torch.Tensor] | None = None
        self.frames_seen = 0
        self._answers: list[tuple[torch.Tensor, torch.Tensor]] = []  # (gain, pan) logits at query frames
        self._answer_at: dict[int, tuple[int, int]] = {}  # stream frame -> (entry of _answers, row)
        self._pending: list[np.ndarray] = []  # chunked form: frames observed since the last run
        self._frames: list[np.ndarray] = []  # chunked form: every frame run so far

    def _rows(self, observation: Any) -> np.ndarray:
        """The valid frames of an observation as ``(T, input_dim)`` float32 (a view where possible)."""
        if isinstance(observation, dict):
            if "features" not in observation:
                raise ValueError(f"observation dict needs a 'features' entry, got keys {sorted(observation)}")
            rows = np.asarray(observation["features"], dtype=np.float32)
            valid = np.asarray(observation.get("valid", 1.0)) > 0.5
            observation = rows if valid.all() else rows[valid]
        rows = np.asarray(observation, dtype=np.float32)
        if rows.ndim == 1:
            rows = rows[None]
        if rows.ndim != 2 or rows.shape[-1] != self.model.config.input_dim:
            raise ValueError(
                f"expected a frame ({self.model.config.input_dim},) or frames (T, {self.model.config.input_dim}), "
                f"got shape {tuple(rows.shape)}"
            )
        return rows

    def observe(self, observation: Any) -> None:
        """Consume one frame (or a block of frames): the step form now, or kept for the chunked form."""
        rows = self._rows(observation)
        if len(rows) == 0:
            return
        if self.form == "chunked":
            self._pending.append(rows)
            return
        param = next(self.model.parameters())
        x = torch.from_numpy(np.ascontiguousarray(rows))[None]
        with torch.no_grad():
            out = self.model(x.to(param), self.states, step=True)
        self.states = out["states"]
        self._keep(x, out, first=0)

    def _keep(self, x: torch.Tensor, out: dict[str, Any], first: int) -> None:
        """Record the outputs ``out`` of frames ``x`` ``(1, T, D)`` from row ``first`` on (the
        frames before it were recorded already): the last frame's answer and those at query frames."""
        self._last = {"gain": out["gain"][0, -1], "pan": out["pan"][0, -1]}
        rows = (x[0, first:, self.model.config.input_dim - 3] > 0.5).nonzero().flatten()
        if len(rows):
            segment = len(self._answers)
            self._answers.append((out["gain"][0, first + rows], out["pan"][0, first + rows]))
            frames = (rows + self.frames_seen).tolist()
            self._answer_at.update(zip(frames, zip(itertools.repeat(segment), range(len(frames)))))
        self.frames_seen += x.shape[1] - first

    @property
    def query_answers(self) -> dict[int, dict[str, torch.Tensor]]:
        """Gain/pan logits formed at every query frame observed, by stream frame."""
        return {f: self._answer(f) for f in self._answer_at}

    def _answer(self, frame: int) -> dict[str, torch.Tensor]:
        segment, row = self._answer_at[frame]
        gain, pan = self._answers[segment]
        return {"gain": gain[row], "pan": pan[row]}

    @torch.no_grad()
    def _run_chunked(self) -> None:
        """Chunked form over every frame kept (causal: earlier answers do not change)."""
        self._frames += self._pending
        self._pending = []
        x = torch.from_numpy(np.concatenate(self._frames))[None]
        param = next(self.model.parameters())
        out = self.model(x.to(param.device), None)
        self._keep(x, out, first=self.frames_seen)

    def retrieve(self, query: Any = None) -> dict[str, np.ndarray | int]:
        """Gain/pan class probabilities (last class = none) and argmax predictions.

        Args:
            query: None for the latest frame; a use-phase observation dict (``start_frame`` and
                ``valid``) for the answer formed at that query's last frame during formation.
        """
        if self._pending:  # chunked form, frames observed since the last run
            self._run_chunked()
        logits = self._last
        if isinstance(query, dict) and "start_frame" in query:
            n_valid = int((np.asarray(query.get("valid", np.ones(1))) > 0.5).sum())
            end = int(np.ravel(query["start_frame"])[0]) + n_valid - 1  # (1,) in the env; 0-d or int too
            if end not in self._answer_at:
                raise KeyError(f"no answer formed at frame {end}: the query was not observed during formation")
            logits = self._answer(end)
        if logits is None:
            raise RuntimeError("retrieve() before any frame was observed")
        gain, pan = (logits[k].detach().float().cpu().numpy() for k in ("gain", "pan"))
        # classes are the argmax of the logits themselves: softmax can round near-equal logits to one value
        return {
            "gain_probs": _softmax(gain),
            "pan_probs": _softmax(pan),
            "gain": int(gain.argmax()),
            "pan": int(pan.argmax()),
        }

    def state_dict(self) -> dict[str, Any]:
        """Model weights, architecture and the carried per-layer states (tensors cloned; the
        chunked form runs over the frames it kept first, and saves no per-layer states)."""
        if self._pending:
            self._run_chunked()
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
        saved = state.get("query_answers", {})
        self._answers = [(a["gain"][None], a["pan"][None]) for a in saved.values()]
        self._answer_at = {frame: (i, 0) for i, frame in enumerate(saved)}


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax of a class-logit vector (numpy: cheaper than torch's dispatch for one short row)."""
    e = np.exp(logits - logits.max())
    return e / e.sum()


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
