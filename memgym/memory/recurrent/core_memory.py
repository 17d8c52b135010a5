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

from memgym.core.errors import ConfigError
from memgym.core.protocols import Memory
from memgym.core.registry import register_memory
from memgym.memory.recurrent.mixers import CORES, LayerState
from memgym.memory.recurrent.model import AMemOpsModel, ModelConfig


def observation_rows(observation: Any, input_dim: int) -> np.ndarray:
    """The valid frames of an observation (a frame ``(input_dim,)``, frames ``(T, input_dim)`` or
    an env observation dict with ``"features"`` and optional ``"valid"``) as ``(T, input_dim)``
    float32 (a view where possible).

    Raises:
        ValueError: a dict without ``"features"``, or frames of another width.
    """
    if isinstance(observation, dict):
        if "features" not in observation:
            raise ValueError(f"observation dict needs a 'features' entry, got keys {sorted(observation)}")
        rows = np.asarray(observation["features"], dtype=np.float32)
        if "valid" in observation:
            valid = np.asarray(observation["valid"]) > 0.5
            rows = rows if valid.all() else rows[valid]
    else:
        rows = np.asarray(observation, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None]
    if rows.ndim != 2 or rows.shape[-1] != input_dim:
        raise ValueError(f"expected a frame ({input_dim},) or frames (T, {input_dim}), got shape {tuple(rows.shape)}")
    return rows


def query_end_frame(query: dict[str, Any]) -> int:
    """The stream frame a use-phase observation's query ends at: ``start_frame`` (``(1,)`` in the
    env; 0-d or int too) plus its valid rows, minus one."""
    valid, start = query.get("valid"), query["start_frame"]
    n_valid = 1 if valid is None else int(np.count_nonzero(np.greater(valid, 0.5)))
    if isinstance(start, np.ndarray):
        start = start.flat[0]
    elif not isinstance(start, int | np.integer):
        start = np.ravel(start)[0]
    return int(start) + n_valid - 1


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
        """The memory of an evaluation: ``options.model`` run in ``options.form``.

        Raises:
            ConfigError: ``options`` is not a :class:`CoreMemoryOptions`, or its model has another core.
        """
        if not isinstance(options, CoreMemoryOptions):
            raise ConfigError(
                f"memory '{cls.core}' builds from CoreMemoryOptions (a model and its form), got {type(options).__name__}"
            )
        if options.model.config.core != cls.core:
            raise ConfigError(f"{cls.__name__} runs '{cls.core}' models, got a '{options.model.config.core}' model")
        return cls(options.model, form=options.form)

    def reset(self) -> None:
        self.states: list[LayerState] | None = None
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # (gain, pan) logits at the latest frame
        self.frames_seen = 0
        self._answers: list[tuple[np.ndarray, ...]] = []  # gain, pan logits and probabilities at query frames
        self._answer_at: dict[int, tuple[int, int]] = {}  # stream frame -> (entry of _answers, row)
        self._pending: list[np.ndarray] = []  # chunked form: frames observed since the last run
        self._frames: list[np.ndarray] = []  # chunked form: every frame run so far

    def observe(self, observation: Any) -> None:
        """Consume one frame (or a block of frames): the step form now, or kept for the chunked form."""
        rows = observation_rows(observation, self.model.config.input_dim)
        if len(rows) == 0:
            return
        if self.form == "chunked":
            self._pending.append(rows)
            return
        param = next(self.model.parameters())
        x = torch.from_numpy(np.array(rows))[None]  # a writable copy (env blocks are read-only views)
        with torch.inference_mode():  # no autograd bookkeeping; the same kernels as no_grad
            out = self.model(x.to(param), self.states, step=True)
        self.states = out["states"]
        self._keep(rows, out, first=0)

    def _keep(self, frames: np.ndarray, out: dict[str, Any], first: int) -> None:
        """Record the outputs ``out`` of ``frames`` ``(T, D)`` from row ``first`` on (the frames
        before it were recorded already): the last frame's logits, and the logits and class
        probabilities at query frames (float32 numpy, converted once per model run)."""
        gain, pan = (out[k][0].detach().to("cpu", torch.float32).numpy() for k in ("gain", "pan"))
        self._last = (gain[-1], pan[-1])
        rows = first + np.flatnonzero(frames[first:, self.model.config.input_dim - 3] > 0.5)
        if len(rows):
            segment, gain, pan = len(self._answers), gain[rows], pan[rows]
            self._answers.append((gain, pan, _softmax(gain), _softmax(pan)))
            at = (rows - first + self.frames_seen).tolist()
            self._answer_at.update(zip(at, zip(itertools.repeat(segment), range(len(at)))))
        self.frames_seen += len(frames) - first

    @property
    def query_answers(self) -> dict[int, dict[str, torch.Tensor]]:
        """Gain/pan logits formed at every query frame observed, by stream frame."""
        return {f: {k: torch.tensor(v) for k, v in zip(("gain", "pan"), self._answer(f))} for f in self._answer_at}

    def _answer(self, frame: int) -> tuple[np.ndarray, ...]:
        """Gain logits, pan logits, gain and pan probabilities formed at query frame ``frame``."""
        segment, row = self._answer_at[frame]
        return tuple(values[row] for values in self._answers[segment])

    @torch.inference_mode()
    def _run_chunked(self) -> None:
        """Chunked form over every frame kept (causal: earlier answers do not change)."""
        self._frames += self._pending
        self._pending = []
        frames = np.concatenate(self._frames)
        param = next(self.model.parameters())
        out = self.model(torch.from_numpy(frames)[None].to(param.device), None)
        self._keep(frames, out, first=self.frames_seen)

    def retrieve(self, query: Any = None) -> dict[str, np.ndarray | int]:
        """Gain/pan class probabilities (last class = none) and argmax predictions.

        Args:
            query: None for the latest frame; a use-phase observation dict (``start_frame`` and
                ``valid``) for the answer formed at that query's last frame during formation.
        """
        if self._pending:  # chunked form, frames observed since the last run
            self._run_chunked()
        if isinstance(query, dict) and "start_frame" in query:
            end = query_end_frame(query)
            if end not in self._answer_at:
                raise KeyError(f"no answer formed at frame {end}: the query was not observed during formation")
            gain, pan, gain_probs, pan_probs = self._answer(end)
        elif self._last is None:
            raise RuntimeError("retrieve() before any frame was observed")
        else:
            gain, pan = self._last
            gain_probs, pan_probs = _softmax(gain), _softmax(pan)
        # classes are the argmax of the logits themselves: softmax can round near-equal logits to one value
        return {
            "gain_probs": gain_probs.copy(),
            "pan_probs": pan_probs.copy(),
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
            "last": None if self._last is None else {k: torch.tensor(v) for k, v in zip(("gain", "pan"), self._last)},
            "query_answers": {f: {k: v.clone() for k, v in a.items()} for f, a in self.query_answers.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        config = ModelConfig(**state["config"])
        if config != self.model.config:
            self.model = AMemOpsModel(config).eval()
        self.model.load_state_dict(state["model"])
        self.states = state["states"]
        self.frames_seen = state["frames_seen"]
        last = state["last"]
        self._last = None if last is None else (_logits(last["gain"]), _logits(last["pan"]))
        saved = state.get("query_answers", {})
        self._answers = []
        for answer in saved.values():
            gain, pan = _logits(answer["gain"])[None], _logits(answer["pan"])[None]
            self._answers.append((gain, pan, _softmax(gain), _softmax(pan)))
        self._answer_at = {frame: (i, 0) for i, frame in enumerate(saved)}


def _logits(value: torch.Tensor) -> np.ndarray:
    """Saved logits as the float32 numpy row the memory keeps."""
    return value.detach().float().cpu().numpy()


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of class logits ``(..., C)`` (numpy: cheaper than torch's
    dispatch for short rows; row by row the same values as one row alone)."""
    e = logits - logits.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


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
