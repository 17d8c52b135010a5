"""A ``Dict`` observation of array-valued keys as one ``float32`` vector."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from memgym.core.errors import MemgymError
from memgym.wrappers.base import ObservationWrapper

FLATTENABLE = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
"""Subspaces :class:`FlattenObservation` takes (``Text`` and ``Sequence`` keys are converted first)."""


class FlattenObservation(ObservationWrapper):
    """``Dict`` observation -> ``Box(float32)``: the keys in order, each flattened as
    ``gymnasium.spaces.flatten`` does (a ``Discrete`` key one-hot), cast to ``float32`` (so an
    MLP policy reads it; ``int64`` token ids and ``uint8`` pixels are exact in ``float32``)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, spaces.Dict):
            raise MemgymError(f"FlattenObservation: needs a Dict observation space, got {space}")
        wrong = {k: s for k, s in space.spaces.items() if not isinstance(s, FLATTENABLE)}
        if wrong:
            raise MemgymError(
                f"FlattenObservation: keys {sorted(wrong)} are not arrays; wrap with TokenizeText/EmbedText "
                "(Text) or AudioFeatures/PadAudio (audio) first"
            )
        flat = spaces.flatten_space(space)
        self.observation_space = spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), dtype=np.float32)

    def observation(self, observation: dict) -> np.ndarray:
        return spaces.flatten(self.env.observation_space, observation).astype(np.float32)
