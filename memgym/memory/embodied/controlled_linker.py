"""``controlled``: a ground-truth linker that sets link quality directly (DialogMem's sweep).

It reads the bound episode's annotations (which objects each turn refers to, which objects
each snapshot shows; :mod:`memgym.memory.embodied.ground_truth`). Of the *linkable* turns (those
referring to an object some snapshot contains), exactly ``round(quality / 100 * n)`` (half up),
chosen by a generator seeded from ``seed`` and the episode id, are linked to every snapshot
containing an object they refer to. Every other turn is, by ``mode``:

* ``missing`` -- left unlinked;
* ``wrong`` -- linked to one snapshot (drawn by the same generator) that contains none of the
  objects it refers to; a turn for which every snapshot contains one stays unlinked.

So its link quality (:func:`~memgym.memory.embodied.ground_truth.link_counts`) is the requested
level up to that rounding.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.core.errors import ConfigError, MemgymError
from memgym.core.registry import register_linker
from memgym.memory.embodied.ground_truth import (
    SceneTruth,
    correct_snapshots,
    match_instances,
    snapshot_contents,
    turn_references,
)
from memgym.memory.embodied.linking import Linker, LinkInputs

MODES = ("missing", "wrong")


@register_linker("controlled")
class ControlledLinker(Linker):
    """Links a chosen share of turns correctly, the rest missing or wrong (module docstring).

    Args:
        quality: percent of linkable turns linked correctly, 0-100.
        mode: ``"missing"`` or ``"wrong"``.
        seed: seed of the choice of turns and wrong snapshots.
    """

    def __init__(self, quality: float = 100.0, mode: str = "missing", seed: int = 0) -> None:
        if not 0.0 <= quality <= 100.0:
            raise ConfigError(f"controlled linker: quality must be within 0..100, got {quality}")
        if mode not in MODES:
            raise ConfigError(f"controlled linker: mode must be one of {MODES}, got {mode!r}")
        self.quality, self.mode, self.seed = float(quality), mode, int(seed)
        self.episode: Any = None
        self._truth: SceneTruth | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, Any], device: str = "cpu") -> ControlledLinker:
        return cls(
            float(options.get("quality", 100.0)), str(options.get("mode", "missing")), int(options.get("seed", 0))
        )

    def bind_episode(self, episode: Any, truth: SceneTruth | None = None) -> None:
        """The episode whose annotations drive the links (its scene truth is read unless given)."""
        self.episode = episode
        self._truth = truth

    def link(self, inputs: LinkInputs) -> dict[str, list[int]]:
        if self.episode is None:
            raise MemgymError("the controlled linker reads the episode's annotations: call bind_episode(episode) first")
        if self._truth is None:
            self._truth = SceneTruth.of(self.episode)
        references = turn_references(self.episode, inputs.turns)
        contents = snapshot_contents(inputs.snapshots, match_instances(self._truth, inputs.instances))
        good = [correct_snapshots(refs, contents) for refs in references]
        linkable = [t for t, g in enumerate(good) if g]
        digest = hashlib.sha256(f"{self.episode.episode_id}|{self.quality}|{self.mode}".encode()).digest()
        rng = np.random.default_rng([self.seed, int.from_bytes(digest[:8], "little")])
        count = math.floor(self.quality / 100.0 * len(linkable) + 0.5)
        chosen = {linkable[i] for i in rng.permutation(len(linkable))[:count]}
        links: dict[str, list[int]] = {}
        for t, refs in enumerate(references):
            if t in chosen:
                targets = good[t]
            elif self.mode == "wrong":
                wrong = [s for s, objects in contents.items() if not objects & set(refs)]
                targets = [wrong[int(rng.integers(len(wrong)))]] if wrong else []
            else:
                targets = []
            for snapshot_id in targets:
                links.setdefault(snapshot_id, []).append(t)
        return links
