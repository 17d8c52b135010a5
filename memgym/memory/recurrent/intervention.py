"""State interventions: project a source's key subspace out of the recurrent states.

In this package's layout a head's state ``S`` ``(d_v, d_k)`` maps keys to values, so the paper's
edit ``S <- S - P_k S`` (states stored keys-first) is ``S <- S - S P_k`` here, with
``P_k = V Vᵀ`` for an orthonormal key basis ``V`` ``(d_k, r)``. After the edit every key in the
subspace reads zero: ``S (V c) = 0``.

* :func:`key_subspace` — top-``r`` (default 3) right singular vectors of a source's keys at its
  final occurrence, ``(n_frames, d_k) -> (d_k, r)``, per head and layer.
* :func:`random_subspace` — the random-subspace control (Haar-random orthonormal basis).
* :func:`most_overlapping` — the most-overlapping other-source control: the candidate whose
  subspace overlaps the target's most (``‖V_aᵀ V_b‖_F²`` summed over heads and layers).
* :func:`edit_states` — apply per-layer, per-head projections to model states, optionally
  rescaling each layer's edit (over both heads together) to a given Frobenius norm so controls
  remove exactly as much state as the target edit.

Bases for a model are ``list`` (one per layer) of ``(H, d_k, r)`` tensors; states are the model's
per-layer state dicts (only ``"S"`` is edited; attention caches cannot be edited this way).

:class:`StateEditMemory` is the memory that plays an edited model through the env: it keeps the
stream's frames, runs the model up to each :class:`StateEdit`'s frame, edits the state there and
continues every edited state in one batch; :meth:`StateEditMemory.select` picks the edit whose
answers the use phase reads (``memgym eval amemops intervention=true`` rewinds the use phase once
per edit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from memgym.core.protocols import Memory
from memgym.memory.recurrent.core_memory import observation_rows, query_end_frame
from memgym.memory.recurrent.mixers import LayerState
from memgym.memory.recurrent.model import AMemOpsModel

SUBSPACE_RANK = 3


def key_subspace(keys: torch.Tensor, rank: int = SUBSPACE_RANK) -> torch.Tensor:
    """Orthonormal basis ``(..., d_k, rank)`` of the top right singular vectors of ``keys`` ``(..., n, d_k)``.

    Raises:
        ValueError: fewer key frames than ``rank``.
    """
    if keys.shape[-2] < rank:
        raise ValueError(f"need at least {rank} key frames for a rank-{rank} subspace, got {keys.shape[-2]}")
    _, _, vh = torch.linalg.svd(keys, full_matrices=False)
    return vh[..., :rank, :].transpose(-1, -2)


def random_subspace(
    heads: int, d_k: int, rank: int = SUBSPACE_RANK, *, generator: torch.Generator | None = None, dtype=torch.float32
) -> torch.Tensor:
    """Haar-random orthonormal bases ``(heads, d_k, rank)`` (QR of a Gaussian matrix, signs fixed)."""
    gaussian = torch.randn(heads, d_k, rank, generator=generator, dtype=torch.float64)
    q, r = torch.linalg.qr(gaussian)
    q = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)
    return q.to(dtype)


def subspace_overlap(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """Summed squared overlap ``Σ_layers,heads ‖V_aᵀ V_b‖_F²`` of two per-layer basis lists."""
    return float(sum((x.transpose(-1, -2) @ y).pow(2).sum() for x, y in zip(a, b, strict=True)))


def most_overlapping(target: list[torch.Tensor], candidates: list[list[torch.Tensor]]) -> int:
    """Index of the candidate basis list that overlaps ``target`` most."""
    if not candidates:
        raise ValueError("no other-source subspaces to choose a control from")
    scores = [subspace_overlap(target, c) for c in candidates]
    return max(range(len(scores)), key=scores.__getitem__)


def projection_edit(state: torch.Tensor, basis: torch.Tensor) -> torch.Tensor:
    """The part ``S P_k`` ``(B, H, d_v, d_k)`` of ``state`` that reads the subspace ``basis`` ``(H, d_k, r)``."""
    basis = basis.to(state.dtype)
    projector = basis @ basis.transpose(-1, -2)  # (H, d_k, d_k)
    return state @ projector.unsqueeze(0)


def edit_states(
    states: list[LayerState],
    bases: list[torch.Tensor],
    *,
    match_norms: list[torch.Tensor] | None = None,
) -> tuple[list[LayerState], list[torch.Tensor]]:
    """Remove each layer's key subspaces from its delta-rule state.

    Args:
        states: per-layer states with ``"S"`` ``(B, H, d_v, d_k)``.
        bases: per-layer ``(H, d_k, r)`` orthonormal bases.
        match_norms: per-layer ``(B,)`` Frobenius norms (over both heads) to rescale each layer's
            edit to (controls); None applies the plain projection.
    Returns:
        the edited states (new dicts; other entries shared) and the per-layer ``(B,)`` norms of
        the edits actually removed.
    """
    if len(states) != len(bases):
        raise ValueError(f"got {len(bases)} bases for {len(states)} layers")
    edited, norms = [], []
    for i, (state, basis) in enumerate(zip(states, bases, strict=True)):
        if "S" not in state:
            raise ValueError("state interventions need delta-rule states; attention caches have no 'S'")
        edit = projection_edit(state["S"], basis)
        norm = edit.double().flatten(1).norm(dim=1)
        if match_norms is not None:
            scale = match_norms[i].double() / norm.clamp_min(torch.finfo(torch.float64).tiny)
            edit = edit * scale.to(edit.dtype).view(-1, 1, 1, 1)
            norm = edit.double().flatten(1).norm(dim=1)
        edited.append({**state, "S": state["S"] - edit})
        norms.append(norm)
    return edited, norms


def stack_states(per_edit: list[list[LayerState]]) -> list[LayerState]:
    """Concatenate batch-1 per-layer states of several edits along the batch dimension."""
    return [
        {k: torch.cat([s[layer][k] for s in per_edit]) for k in per_edit[0][layer]} for layer in range(len(per_edit[0]))
    ]


EditBuilder = Callable[[list[LayerState], list[torch.Tensor]], dict[str, list[LayerState]]]
"""``(per-layer states, per-layer keys (1, H, T, d_k))`` at an edit frame -> edit name -> edited
batch-1 states (in the order their answers are batched)."""


@dataclasses.dataclass(frozen=True)
class StateEdit:
    """One edit point of a stream: the state after frames ``0 .. frame-1`` is edited by ``build``
    and every edit is continued over frames ``frame .. until`` (the answers read there)."""

    frame: int
    until: int
    build: EditBuilder


class StateEditMemory(Memory):
    """A trained recurrent core answering with its state edited mid-stream (not registered: the
    intervention job builds it per stream with that stream's edits).

    ``observe`` keeps the valid frames of each formation block. The first ``retrieve`` runs, per
    :class:`StateEdit`, the chunked model on frames ``0 .. frame-1``, hands the states and keys to
    ``build``, and runs the model from every edited state over frames ``frame .. until`` in one
    batch; ``retrieve(use_observation)`` then returns the classes of the selected edit
    (:meth:`select`) at the query's last frame.

    Args:
        model: a model with a recurrent core (its states carry ``"S"``).
        edits: the stream's edit points.
    """

    reads = frozenset({"audio"})

    def __init__(self, model: AMemOpsModel, edits: Sequence[StateEdit]) -> None:
        self.model = model.eval()
        self.edits = list(edits)
        self.selected: tuple[int, str] | None = None
        self.reset()

    def reset(self) -> None:
        self._frames: list[np.ndarray] = []
        self._classes: list[dict[str, dict[str, np.ndarray]]] | None = None  # per edit point: name -> head -> (L,)

    def observe(self, observation: Any) -> None:
        rows = observation_rows(observation, self.model.config.input_dim)
        if len(rows):
            self._frames.append(rows)
            self._classes = None

    def select(self, edit: int, name: str) -> None:
        """Answer with edit ``name`` of edit point ``edit`` (an index of ``edits``)."""
        self.selected = (edit, name)

    @torch.no_grad()
    def _run(self) -> None:
        param = next(self.model.parameters())
        frames = torch.from_numpy(np.concatenate(self._frames)).to(param.device)
        self._classes = []
        for edit in self.edits:
            prefix = self.model(frames[None, : edit.frame])
            edited = edit.build(prefix["states"], prefix["keys"])
            rest = frames[None, edit.frame : edit.until + 1].expand(len(edited), -1, -1)
            out = self.model(rest, stack_states(list(edited.values())))
            classes = {head: out[head].argmax(dim=-1).cpu().numpy() for head in ("gain", "pan")}
            self._classes.append({name: {h: c[b] for h, c in classes.items()} for b, name in enumerate(edited)})

    def retrieve(self, query: dict[str, Any]) -> dict[str, int]:
        """``{"gain": class, "pan": class}`` of the selected edit at the query's last frame.

        Raises:
            KeyError: the query ends outside the selected edit's frames ``frame .. until``.
        """
        if self.selected is None:
            raise RuntimeError("select() an edit before retrieve()")
        if self._classes is None:
            self._run()
        index, name = self.selected
        edit, end = self.edits[index], query_end_frame(query)
        if not edit.frame <= end <= edit.until:
            raise KeyError(f"no answer at frame {end}: edit {index} answers frames {edit.frame}..{edit.until}")
        classes = self._classes[index][name]
        return {head: int(classes[head][end - edit.frame]) for head in ("gain", "pan")}

    def state_dict(self) -> dict[str, Any]:
        """The frames observed and the edit selected (the model and edits are the job's)."""
        return {"frames": [f.copy() for f in self._frames], "selected": self.selected}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.reset()
        self._frames = [np.asarray(f, dtype=np.float32) for f in state["frames"]]
        self.selected = state["selected"]
