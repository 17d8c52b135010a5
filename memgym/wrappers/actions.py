"""Actions RL libraries can emit, mapped to the answers memgym's envs read.

:class:`AnswerChoices` lets a policy pick one of a fixed list of text answers (``Discrete``);
:class:`FlattenAction` turns a ``Dict`` action of ``Box`` and ``Discrete`` parts into one ``Box``
(a ``Discrete(n)`` part becomes ``n`` scores in [-1, 1], the largest of which is the choice), the
form of DialogMem's ``{"text", "position"}`` answer a continuous-action policy can give.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from memgym.core.errors import MemgymError
from memgym.wrappers.base import ActionWrapper


class AnswerChoices(ActionWrapper):
    """A ``Text`` action (or the ``Text`` entry ``key`` of a ``Dict`` action) as
    ``Discrete(len(answers))``: action ``i`` answers ``answers[i]``.

    Args:
        env: the env.
        answers: the answers to choose from (at least one).
        key: for a ``Dict`` action space, its ``Text`` entry (default: the only one).
    """

    def __init__(self, env: gymnasium.Env, answers: Sequence[str], key: str | None = None) -> None:
        super().__init__(env)
        if not answers:
            raise MemgymError("AnswerChoices: answers must name at least one answer")
        self.answers = [str(a) for a in answers]
        choice = spaces.Discrete(len(self.answers))
        space = env.action_space
        if isinstance(space, spaces.Text) and key is None:
            self.key = None
            self.action_space = choice
            return
        texts = (
            [k for k, s in space.spaces.items() if isinstance(s, spaces.Text)] if isinstance(space, spaces.Dict) else []
        )
        if key is None and len(texts) == 1:
            key = texts[0]
        if key not in texts:
            raise MemgymError(
                f"AnswerChoices: needs a Text action space or a Dict action with Text key {key!r}, got {space}"
            )
        self.key = key
        self.action_space = spaces.Dict({k: choice if k == key else s for k, s in space.spaces.items()})

    def action(self, action: Any) -> Any:
        if self.key is None:
            return self.answers[int(action)]
        return {**action, self.key: self.answers[int(action[self.key])]}


class FlattenAction(ActionWrapper):
    """A ``Dict`` action of ``Box`` and ``Discrete`` entries as one ``Box(float32)``: in key order,
    each ``Box`` entry's values (its own bounds), each ``Discrete(n)`` entry's ``n`` scores in
    [-1, 1] (the entry is the largest one's index, plus its ``start``)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if not isinstance(space, spaces.Dict):
            raise MemgymError(f"FlattenAction: needs a Dict action space, got {space}")
        lows, highs, self._parts = [], [], []
        for key, part in space.spaces.items():
            if isinstance(part, spaces.Box):
                size = int(np.prod(part.shape))
                lows.append(np.broadcast_to(part.low, part.shape).reshape(-1))
                highs.append(np.broadcast_to(part.high, part.shape).reshape(-1))
            elif isinstance(part, spaces.Discrete):
                size = int(part.n)
                lows.append(-np.ones(size))
                highs.append(np.ones(size))
            else:
                raise MemgymError(f"FlattenAction: entry {key!r} is {part}; only Box and Discrete entries flatten")
            self._parts.append((key, part, size))
        self.action_space = spaces.Box(
            np.concatenate(lows).astype(np.float32), np.concatenate(highs).astype(np.float32), dtype=np.float32
        )

    def action(self, action: Any) -> dict[str, Any]:
        flat = np.asarray(action, np.float32).reshape(-1)
        out, offset = {}, 0
        for key, part, size in self._parts:
            values = flat[offset : offset + size]
            if isinstance(part, spaces.Box):
                out[key] = np.clip(values.reshape(part.shape), part.low, part.high).astype(part.dtype)
            else:
                out[key] = int(part.start) + int(np.argmax(values))
            offset += size
        return out
