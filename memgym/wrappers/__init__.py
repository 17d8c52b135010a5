"""Gymnasium wrappers that make memgym's envs readable by RL libraries (Stable-Baselines3 and
others that take only arrays). One job each:

* :class:`TokenizeText` / :class:`EmbedText` -- ``Text`` observation keys as token ids or unit
  vectors (a deterministic hashing tokenizer / embedder, or any sentence encoder);
* :class:`AudioFeatures` / :class:`PadAudio` -- VoxMem's turn-sized ``audio`` as pooled log-mel
  statistics or a fixed-length waveform;
* :class:`AnswerChoices` -- a ``Text`` answer as a choice among fixed answers (``Discrete``);
* :class:`FlattenAction` -- a ``Dict`` action (DialogMem's text + position) as one ``Box``;
* :class:`FlattenObservation` -- a ``Dict`` observation as one ``float32`` vector.

:func:`sb3_ready` stacks the ones an env needs. Every wrapper keeps ``formation_action()``
callable (observation wrappers forward it; action wrappers give an element of their own space);
through Gymnasium's own wrappers use ``env.get_wrapper_attr("formation_action")()``.

Example: DialogMem (a tiny generated episode), checked by Stable-Baselines3:

>>> import gymnasium as gym
>>> import memgym
>>> from memgym.wrappers import sb3_ready
>>> config = {"house_seed": 2, "house": {"min_rooms": 3, "max_rooms": 3},
...           "traversal": {"min_goals": 2, "max_goals": 2}, "camera": {"width": 16, "height": 12}}
>>> env = sb3_ready(gym.make("memgym/DialogMem-v0", config=config), answers=["yes", "no"], flatten=True)
>>> env.observation_space.shape, env.action_space.shape  # 12x16 RGB-D, pose, 64 token ids; 3 + 2 scores
((839,), (5,))
>>> from stable_baselines3.common.env_checker import check_env
>>> check_env(env, warn=False)
>>> obs, info = env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.step(env.formation_action())  # ignored in formation
>>> info["phase"]
'formation'
>>> actions = env.env  # FlattenAction, over AnswerChoices: a policy's Box action as the env reads it
>>> actions.env.action(actions.action([0, 0, 0, 0.2, 0.9]))
{'position': array([0., 0., 0.], dtype=float32), 'text': 'no'}
>>> env.close()
"""

from memgym.wrappers.actions import AnswerChoices, FlattenAction
from memgym.wrappers.audio import AudioFeatures, PadAudio
from memgym.wrappers.flatten import FlattenObservation
from memgym.wrappers.sb3 import sb3_ready
from memgym.wrappers.text import EmbedText, HashEmbedder, HashTokenizer, TokenizeText

__all__ = [
    "AnswerChoices",
    "AudioFeatures",
    "EmbedText",
    "FlattenAction",
    "FlattenObservation",
    "HashEmbedder",
    "HashTokenizer",
    "PadAudio",
    "TokenizeText",
    "sb3_ready",
]
