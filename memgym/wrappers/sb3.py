"""One call that stacks the wrappers Stable-Baselines3 needs on any memgym env."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import gymnasium
from gymnasium import spaces

from memgym.wrappers.actions import AnswerChoices, FlattenAction
from memgym.wrappers.audio import AudioFeatures
from memgym.wrappers.flatten import FlattenObservation
from memgym.wrappers.text import EmbedText, Encoder, TokenizeText

DEFAULT_ANSWERS = ("", "I don't know.")
"""Answers a policy chooses among when none are given (enough to run; a task needs its own)."""


def sb3_ready(
    env: gymnasium.Env,
    answers: Sequence[str] = DEFAULT_ANSWERS,
    *,
    text: Literal["tokens", "embedding"] = "tokens",
    encoder: Encoder | None = None,
    flatten: bool = False,
) -> gymnasium.Env:
    """``env`` wrapped so that Stable-Baselines3 (``check_env``, ``MultiInputPolicy`` /
    ``MultiInputLstmPolicy``, or with ``flatten`` the ``Mlp`` policies) accepts it:

    1. ``Text`` observation keys -> :class:`TokenizeText` (``text="tokens"``) or
       :class:`EmbedText` (``"embedding"``, with ``encoder`` or the hashed bag of words);
    2. ``Sequence`` audio (``audio`` + ``audio_length``, VoxMem) -> :class:`AudioFeatures`;
    3. a ``Text`` action, or the ``Text`` entry of a ``Dict`` action -> :class:`AnswerChoices`
       over ``answers``;
    4. a ``Dict`` action -> :class:`FlattenAction` (one ``Box``);
    5. with ``flatten``, the ``Dict`` observation -> :class:`FlattenObservation` (one ``Box``).

    Steps that do not apply are skipped (AMemOps needs none). ``formation_action()`` stays
    reachable: ``env.get_wrapper_attr("formation_action")()``.
    """
    fields = env.observation_space.spaces if isinstance(env.observation_space, spaces.Dict) else {}
    if any(isinstance(s, spaces.Text) for s in fields.values()):
        env = TokenizeText(env) if text == "tokens" else EmbedText(env, encoder=encoder)
    if isinstance(fields.get("audio"), spaces.Sequence) and "audio_length" in fields:
        env = AudioFeatures(env)
    action = env.action_space
    if isinstance(action, spaces.Text) or (
        isinstance(action, spaces.Dict) and any(isinstance(s, spaces.Text) for s in action.spaces.values())
    ):
        env = AnswerChoices(env, answers)
    if isinstance(env.action_space, spaces.Dict):
        env = FlattenAction(env)
    if flatten:
        env = FlattenObservation(env)
    return env
