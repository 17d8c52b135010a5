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
"""

from __future__ import annotations

import torch

from memgym.memory.recurrent.mixers import LayerState

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
