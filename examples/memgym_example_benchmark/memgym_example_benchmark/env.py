"""``memgym_example/Digits-v0``: formation says ``length`` digits, one text line per step; each
use step asks for the digit at a position (``"digit 3?"``), answered as text and scored by the
registered scorer ``task_scorers["qa"]`` names (``exact_match`` by default)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from memgym.core.episode import Episode, TaskItem
from memgym.envs.two_phase import TwoPhaseEnv

ENV_ID = "memgym_example/Digits-v0"


def digits_episode(rng: np.random.Generator, index: int, length: int, questions: int) -> Episode:
    """Episode ``index``: ``length`` random digits (annotation ``digits``) and ``questions`` items
    asking for the digit at random positions (1-based; annotation ``position``)."""
    digits = [int(d) for d in rng.integers(0, 10, size=length)]
    positions = sorted(int(p) for p in rng.choice(length, size=min(questions, length), replace=False) + 1)
    items = tuple(
        TaskItem(
            item_id=f"q{k}",
            task="qa",
            prompt=f"digit {p}?",
            answer=str(digits[p - 1]),
            annotations={"position": p, "from_end": length - p},
        )
        for k, p in enumerate(positions)
    )
    return Episode(episode_id=f"digits-{index}", benchmark="digits", items=items, annotations={"digits": digits})


class DigitsEnv(TwoPhaseEnv):
    """Digits (module docstring). Observations: ``{"line": text}``, a digit in formation and the
    question in use; actions: the answer text."""

    observation_space = spaces.Dict({"line": spaces.Text(max_length=32)})
    action_space = spaces.Text(max_length=32)

    def __init__(self, length: int = 8, task_scorers: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(task_scorers=task_scorers or {"qa": "exact_match"}, **kwargs)
        self.length = length

    def _build_episode(self, rng: np.random.Generator, options: dict[str, Any]) -> Episode:
        return digits_episode(rng, 0, self.length, questions=3)

    def _begin(self, episode: Episode) -> int:
        self.digits = list(episode.annotations["digits"])
        return len(self.digits)

    def _formation_observation(self, step: int) -> dict[str, Any]:
        return {"line": str(self.digits[step])}

    def _use_observation(self, item: TaskItem, index: int) -> dict[str, Any]:
        return {"line": item.prompt}
