"""``AudioStreamEnv`` (``memgym/AMemOps-v0``): AMemOps streams as a two-phase Gymnasium environment.

The manual is the class docstring (``help(AudioStreamEnv)``); its examples are run as doctests.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
from gymnasium import spaces

from memgym.core.config import as_config
from memgym.core.episode import Episode, TaskItem
from memgym.core.errors import MemgymError
from memgym.core.protocols import Scorer
from memgym.core.registry import register_env
from memgym.core.scoring import ScorerFactory
from memgym.datasets.amemops.audio import StreamRenderer
from memgym.datasets.amemops.config import StreamConfig
from memgym.datasets.amemops.features import N_FEATURES, stream_features
from memgym.datasets.amemops.generator import StreamGenerator
from memgym.datasets.amemops.records import AMemOpsStream
from memgym.datasets.amemops.symbolic import symbolic_input_dim, symbolic_stream
from memgym.datasets.sources.factory import LibraryConfig, open_library
from memgym.datasets.sources.library import SourceLibrary
from memgym.envs.two_phase import TwoPhaseEnv

MAX_FRAME = 10**7
FEATURE_LOW, FEATURE_HIGH = -24.0, 40.0
TASK_SCORERS = {"attribute_query": "attribute_query"}
"""The default ``task_scorers``: queries are scored by the registered ``attribute_query`` scorer."""
"""Bounds of the features box: log-mel >= log(1e-10) ~ -23.03; far above any 0 dB stream."""


@register_env("amemops")
class AudioStreamEnv(TwoPhaseEnv):
    """AMemOps streams: formation = frame blocks, use = one query per step.

    ## Description
    One episode is one AMemOps stream (paper section 2): by default 2,048 frames at 25 Hz
    (81.92 s) of stereo 16 kHz audio holding sound events with their own gain and pan,
    distractors, and 12-frame *queries* that ask for a source's latest gain or pan (or "none" if
    the source never occurred). ``inputs="symbolic"`` plays the same streams as the paper's
    symbolic controls (one-hot identities and N-value attributes instead of audio).

    ## Formation phase
    The stream is shown in blocks of ``block_frames`` frames (default 32 = 1.28 s), 64 steps for a
    2,048-frame stream. Query frames are part of the stream, flagged in the features, exactly as a
    model sees them in training: a memory should produce its answer when a query ends. Actions are
    ignored (send ``env.unwrapped.formation_action()``); the reward is 0.

    ## Use phase
    One step per query, in time order: the observation repeats the query's 12 frames (rows 0-11
    of ``features``, ``valid`` marks them) and ``start_frame`` its onset, so an agent can look up
    the answer it formed at that time or answer afresh. The action answers both heads.

    ## Observation space
    ``Dict``:

    | key | space | meaning |
    | --- | --- | --- |
    | ``features`` | ``Box(-24, 40, (block_frames, D), float32)`` | audio (D = 131): log-mel L (0-63), R (64-127) in natural-log power, then query / gain-request / pan-request flags (128-130); symbolic: identity one-hot, gain one-hot, pan one-hot, the same three flags |
    | ``valid`` | ``Box(0, 1, (block_frames,), float32)`` | 1 for rows holding real frames |
    | ``start_frame`` | ``Box(0, 10**7, (1,), int64)`` | stream frame of row 0 |

    A full block's ``features`` is a read-only view of the stream's inputs (no copy per step; the
    env never writes them, so kept observations stay valid); copy it to change it.

    ## Action space
    ``MultiDiscrete([N + 1, N + 1])``: (gain class, pan class), ``N = config.attribute_values``;
    audio: classes 0-3 are -18/-12/-6/0 dB and pans 0/⅓/⅔/1, class 4 is "none". Only the
    requested head is scored.

    ## Rewards
    0 in formation; in use the ``reward`` of the query's scorer: by default the registered
    ``attribute_query`` scorer, 1.0 if the requested head's class is right, else 0.0.

    ## Episode end
    ``terminated`` after the last query is answered; never truncated by the env
    (``gymnasium.make`` adds a ``TimeLimit`` of :meth:`episode_step_bound`, 90 steps at the
    default configuration: it never cuts a generated stream short).

    ## Info
    ``phase`` (``"formation"`` / ``"use"``), ``step`` (index within the phase), ``episode_id``;
    in use ``item_id`` and ``task`` of the query asked; after an answer ``score``: the scorer's
    metrics; ``attribute_query`` gives :func:`~memgym.tasks.amemops.scoring.score_query`'s ``reward``, ``correct``, ``predicted``,
    ``answer``, ``previous_value`` (the answer was the superseded value of an updated attribute)
    and the query's ``type``, ``operation``, ``attribute``, ``delay_s``, ``load``, ``earlier``.
    ``env.unwrapped.scores`` lists every answered query's score with its ``item_id``.

    ## Arguments
    ``config`` (:class:`~memgym.datasets.amemops.config.StreamConfig`, a nested mapping of its keys
    or a YAML file path; audio needs ``attribute_values`` 4, the physical gains and pans),
    ``library`` (a :class:`~memgym.datasets.sources.library.SourceLibrary` or library kind name),
    ``seed`` (run seed mixed with the reset seed), ``block_frames``, ``render_mode``
    (``"rgb_array"``), ``indexed_streams`` (``True``: ``reset(seed=i)`` plays stream ``i`` of run
    seed ``seed``, the stream ``memgym train amemops`` draws at index ``i`` with
    ``data.stream_seed=seed``; a reset without a seed still draws one from the env's RNG),
    ``inputs`` (``"audio"`` or ``"symbolic"``), ``task_scorers`` (task -> registered scorer name,
    over ``{"attribute_query": "attribute_query"}``; any scorer of ``attribute_query`` items,
    ``memgym list scorers``), ``scorers`` (task -> a :class:`~memgym.core.protocols.Scorer` or a
    factory ``(ScorerContext) -> Scorer``, used instead of the named one).
    ``reset(options={"episode": stream})`` plays a given :class:`AMemOpsStream` (e.g. a
    matched-history stream) whose library fingerprint must match the env's library;
    ``options={"features": array}`` hands in its ``(frames, D)`` inputs when already computed
    (``memgym eval amemops`` does, once per stream for all models).

    ## Example
    A short stream of harmonic tones (fast to synthesise), played with a fixed answer:

    >>> import gymnasium as gym
    >>> import memgym  # registers the memgym/ env ids
    >>> stream = {"frames": 128, "n_initial": 2, "n_update": 0, "n_interference": 0, "n_absent": 1,
    ...           "distractors": [0], "library": {"kind": "tones"}}
    >>> env = gym.make("memgym/AMemOps-v0", config=stream, seed=0)
    >>> env.action_space
    MultiDiscrete([5 5])
    >>> obs, info = env.reset(seed=0)
    >>> info["phase"], obs["features"].shape, obs["start_frame"]
    ('formation', (32, 131), array([0]))
    >>> while info["phase"] == "formation":  # 4 blocks of 32 frames
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.formation_action())
    >>> info["phase"], int(obs["valid"].sum())  # the first query's 12 frames
    ('use', 12)
    >>> while not terminated:
    ...     obs, reward, terminated, truncated, info = env.step([4, 4])  # always "none"
    >>> sorted(info["score"])[:4]
    ['answer', 'attribute', 'correct', 'delay_s']
    >>> len(env.unwrapped.scores) == len(env.unwrapped.episode.items)
    True
    >>> env.close()

    Vector envs step several streams at once (``"async"`` runs each in its own process):

    >>> envs = gym.make_vec("memgym/AMemOps-v0", num_envs=2, vectorization_mode="sync", config=stream)
    >>> obs, infos = envs.reset(seed=0)
    >>> obs["features"].shape, list(infos["phase"])
    ((2, 32, 131), ['formation', 'formation'])
    >>> envs.close()
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    config_class = StreamConfig

    def __init__(
        self,
        config: StreamConfig | Mapping[str, Any] | str | Path | None = None,
        *,
        library: SourceLibrary | str | None = None,
        seed: int = 0,
        block_frames: int = 32,
        render_mode: str | None = None,
        indexed_streams: bool = False,
        inputs: Literal["audio", "symbolic"] = "audio",
        task_scorers: Mapping[str, str] | None = None,
        scorers: Mapping[str, Scorer | ScorerFactory] | None = None,
    ) -> None:
        task_scorers = {**TASK_SCORERS, **(task_scorers or {})}
        super().__init__(render_mode=render_mode, task_scorers=task_scorers, scorers=scorers)
        self.config = as_config(StreamConfig, config, where="AudioStreamEnv config")
        if inputs not in ("audio", "symbolic"):
            raise MemgymError(f"inputs must be 'audio' or 'symbolic', got '{inputs}'")
        if inputs == "audio":
            self.config.require_audio("config")
        if isinstance(library, str):
            library = open_library(LibraryConfig(kind=library))  # type: ignore[arg-type]
        self.library = library if library is not None else open_library(self.config.library)
        self.run_seed = seed
        self._fingerprint = self.library.fingerprint()
        if block_frames < self.config.query_frames:
            raise MemgymError(
                f"block_frames={block_frames} must hold a whole query ({self.config.query_frames} frames)"
            )
        self.block_frames = block_frames
        self.indexed_streams = indexed_streams
        self._reset_seed: int | None = None
        self._generator: StreamGenerator | None = None
        self._renderer = StreamRenderer(self.library)
        self.inputs = inputs
        self.identities = self.library.identities() if inputs == "symbolic" else []
        self.input_dim = (
            symbolic_input_dim(len(self.identities), self.config.attribute_values) if self.identities else N_FEATURES
        )
        self._given_features: np.ndarray | None = None
        self.observation_space = spaces.Dict(
            {
                "features": spaces.Box(FEATURE_LOW, FEATURE_HIGH, (block_frames, self.input_dim), np.float32),
                "valid": spaces.Box(0.0, 1.0, (block_frames,), np.float32),
                "start_frame": spaces.Box(0, MAX_FRAME, (1,), np.int64),
            }
        )
        classes = self.config.attribute_values + 1  # values, then none
        self.action_space = spaces.MultiDiscrete([classes, classes])
        self.features: np.ndarray | None = None

    def episode_step_bound(self) -> int:
        """``ceil(frames / block_frames)`` formation steps plus one use step per query, at most one
        per proposal (``n_initial + n_update + n_interference + n_absent``; an update proposal asked
        both ways counts for two of ``n_update``): 64 + 26 = 90 with the defaults."""
        cfg = self.config
        return -(-cfg.frames // self.block_frames) + cfg.n_initial + cfg.n_update + cfg.n_interference + cfg.n_absent

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._reset_seed = seed
        options = dict(options or {})
        self._given_features = options.pop("features", None)
        return super().reset(seed=seed, options=options)

    # ----- hooks ------------------------------------------------------------------------------
    def _build_episode(self, rng: np.random.Generator, options: dict[str, Any]) -> Episode:
        if self._generator is None:
            self._generator = StreamGenerator(self.config, self.library)
        if self.indexed_streams and self._reset_seed is not None:
            return self._generator.generate(self.run_seed, int(self._reset_seed))
        return self._generator.generate(self.run_seed, int(rng.integers(2**31)))

    def _begin(self, episode: Episode) -> int:
        if not isinstance(episode, AMemOpsStream):
            raise MemgymError(f"AudioStreamEnv plays AMemOpsStream episodes, got {type(episode).__name__}")
        if episode.library != self._fingerprint:
            raise MemgymError(
                f"stream {episode.episode_id} was built from library '{episode.library}', "
                f"but this env uses '{self.library.fingerprint()}'"
            )
        self.features = self._episode_features(episode)
        self.features.flags.writeable = False  # full blocks are views of it (see _block)
        return -(-episode.frames // self.block_frames)

    def _episode_features(self, episode: AMemOpsStream) -> np.ndarray:
        """``(T, input_dim)`` float32 inputs of ``episode`` within the observation bounds (they never
        bind on real features): ``reset(options={"features": ...})`` when given (a cache of the same
        features; copied, never modified), else rendered (audio; ``self.audio`` keeps the waveform)
        or written from the record (symbolic)."""
        given, self._given_features = self._given_features, None
        if given is not None:
            given = np.array(given, dtype=np.float32)  # a copy: clipped in place below
            if given.shape != (episode.frames, self.input_dim):
                raise MemgymError(
                    f"options['features'] of stream {episode.episode_id} must have shape "
                    f"({episode.frames}, {self.input_dim}), got {given.shape}"
                )
        elif self.inputs == "symbolic":
            given = symbolic_stream(episode, self.identities)[0]
        else:
            self.audio = self._renderer.render(episode)
            given = stream_features(episode, self.audio)
        return np.clip(given, FEATURE_LOW, FEATURE_HIGH, out=given)

    def _block(self, start: int, stop: int) -> dict[str, Any]:
        """The observation of frames ``start .. stop-1``; a full block's ``features`` is a read-only
        view of the stream's inputs (never written: a new episode makes new inputs)."""
        rows = self.features[start:stop]
        if len(rows) == self.block_frames:
            features, valid = rows, np.ones(self.block_frames, dtype=np.float32)
        else:  # a short last block or query: zero rows after the real ones
            features = np.zeros((self.block_frames, self.input_dim), dtype=np.float32)
            valid = np.zeros(self.block_frames, dtype=np.float32)
            features[: len(rows)] = rows
            valid[: len(rows)] = 1.0
        return {"features": features, "valid": valid, "start_frame": np.array([start], dtype=np.int64)}

    def _formation_observation(self, step: int) -> dict[str, Any]:
        start = step * self.block_frames
        return self._block(start, start + self.block_frames)

    def _use_observation(self, item: TaskItem, index: int) -> dict[str, Any]:
        onset, last = item.annotations["onset_frame"], item.annotations["end_frame"]
        return self._block(onset, last + 1)

    # ----- rendering --------------------------------------------------------------------------
    def render(self) -> np.ndarray | None:
        """``(H, W, 3)`` uint8 spectrogram of the current stream with events and queries marked."""
        if self.render_mode != "rgb_array" or self.episode is None:
            return None
        from memgym.datasets.amemops.plots import figure_to_array, spectrogram_figure

        marker = None
        if self.phase == "formation":
            marker = min((self.step_index + 1) * self.block_frames, self.episode.frames)
        figure = spectrogram_figure(self.episode, self.features, position=marker)
        return figure_to_array(figure)
