"""Training streams collected by stepping ``memgym/AMemOps-v0`` through Gymnasium's vector API.

A training stream is what a memory sees in one episode: the formation observations (blocks of
log-mel frames with the query flags) concatenated into ``features (T, 131)``, and the answers of
the use-phase queries, placed at each query's last frame as the labels of the asked head.
:func:`rollout_streams` plays a *plan* of stream indices in a vector env made by
:func:`make_stream_envs` (``gymnasium.make_vec``, ``"sync"`` or ``"async"``) and returns, batch
after batch, each sub-env's recorded stream. The envs run with ``indexed_streams=True``, so
``reset(seed=i)`` plays stream ``i`` of the generator: the arrays equal those of the direct path
(:class:`memgym.pipelines.amemops.streams.StreamTensors`) for the same indices.

Sub-env ``j`` plays entry ``j`` of each planned batch in turn. Streams hold different numbers of
queries, so the sub-envs finish at different steps: the vector env runs with autoreset
disabled and each finished sub-env is reset at once (``options={"reset_mask": ...}``) onto its
next stream; finished streams wait until every sub-env has finished its entry of the batch.

Clip synthesis dominates a stream's cost (the synthetic libraries render each recording on first
use), so the workers of an ``"async"`` env share one on-disk clip cache: the library's
``cache_dir`` when the stream config sets one, else a temporary folder removed with the env.
Each recording is then synthesised once for all workers instead of once per worker.
"""

from __future__ import annotations

import collections
import dataclasses
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from memgym.datasets.amemops.config import IGNORE_INDEX, StreamConfig

ENV_ID = "memgym/AMemOps-v0"
StreamArrays = tuple[np.ndarray, np.ndarray, np.ndarray]
"""``(features (T, 131) float32, gain labels (T,) int64, pan labels (T,) int64)``; labels are
:data:`IGNORE_INDEX` except at query ends."""


def make_stream_envs(
    stream: StreamConfig,
    num_envs: int,
    *,
    run_seed: int,
    mode: Literal["sync", "async"] = "sync",
    block_frames: int = 32,
    library: Any = None,
):
    """``gymnasium.make_vec("memgym/AMemOps-v0", ...)`` with ``num_envs`` sub-envs playing indexed
    streams of ``(stream, run_seed)``, autoreset disabled (see the module docstring).

    ``library`` (an open :class:`~memgym.datasets.sources.library.SourceLibrary`) is shared by
    the sub-envs of a ``"sync"`` env; ``"async"`` workers open their own from ``stream.library``,
    sharing synthesised clips through its ``cache_dir`` (a temporary one, removed with the env,
    when unset; ``cache_dir`` is no part of a stream's identity, so the streams are the same).
    """
    import gymnasium
    from gymnasium.vector import AutoresetMode

    from memgym.envs.registration import register_gym_envs

    register_gym_envs()
    clips = None
    if mode == "async" and not stream.library.cache_dir:
        clips = tempfile.mkdtemp(prefix="memgym-clips-")
        stream = dataclasses.replace(stream, library=dataclasses.replace(stream.library, cache_dir=clips))
    envs = gymnasium.make_vec(
        ENV_ID,
        num_envs=num_envs,
        vectorization_mode=mode,
        vector_kwargs={"autoreset_mode": AutoresetMode.DISABLED},
        config=stream,
        library=library if mode == "sync" else None,
        seed=run_seed,
        block_frames=block_frames,
        indexed_streams=True,
        max_episode_steps=-1,  # streams of any configuration are played whole (no TimeLimit)
    )
    if clips is not None:  # the workers have forked: only this process removes the folder
        weakref.finalize(envs, shutil.rmtree, clips, ignore_errors=True)
    return envs


@dataclasses.dataclass
class _Recording:
    """One stream being played by one sub-env."""

    blocks: list[np.ndarray] = dataclasses.field(default_factory=list)
    answers: list[tuple[int, str, int]] = dataclasses.field(default_factory=list)  # (end frame, head, class)
    query_end: int = -1

    def observe(self, phase: str, observation: dict[str, np.ndarray]) -> None:
        rows = int(observation["valid"].sum())
        if phase == "formation":
            self.blocks.append(observation["features"][:rows].copy())
        else:  # a use-phase query: rows 0..rows-1 are its frames, from start_frame on
            self.query_end = int(observation["start_frame"][0]) + rows - 1

    def answer(self, attribute: str, answer: int) -> None:
        self.answers.append((self.query_end, attribute, answer))

    def arrays(self) -> StreamArrays:
        features = np.concatenate(self.blocks)
        labels = {h: np.full(len(features), IGNORE_INDEX, dtype=np.int64) for h in ("gain", "pan")}
        for frame, attribute, answer in self.answers:
            labels[attribute][frame] = answer
        return features, labels["gain"], labels["pan"]


def _entry(observations: dict[str, np.ndarray], index: int) -> dict[str, np.ndarray]:
    return {key: value[index] for key, value in observations.items()}


def _record_observations(
    recordings: list[_Recording], observations: dict[str, np.ndarray], info: dict[str, Any], mask: np.ndarray
) -> None:
    """Record the batched observation of every sub-env in ``mask``."""
    for j in np.flatnonzero(mask):
        recordings[j].observe(str(info["phase"][j]), _entry(observations, j))


def _record_answers(recordings: list[_Recording], info: dict[str, Any], mask: np.ndarray) -> None:
    """Record the answer the env scored (``info["score"]``) of every sub-env in ``mask`` that scored one."""
    for j in np.flatnonzero(info.get("_score", np.zeros(len(mask), dtype=bool)) & mask):
        recordings[j].answer(str(info["score"]["attribute"][j]), int(info["score"]["answer"][j]))


def rollout_streams(envs, plan: Iterable[Sequence[int]]) -> Iterator[list[StreamArrays]]:
    """For each batch of ``plan`` (``envs.num_envs`` stream indices), the recorded streams in
    order, played in ``envs`` (from :func:`make_stream_envs`; see the module docstring).

    The formation actions and query answers sent are all zeros: the answers are ignored here, the
    labels come from the scores the env reports (``info["score"]``).
    """
    n = envs.num_envs
    plan = iter(plan)
    pending: list[collections.deque[int]] = [collections.deque() for _ in range(n)]
    finished: list[collections.deque[StreamArrays]] = [collections.deque() for _ in range(n)]
    recordings = [_Recording() for _ in range(n)]
    idle = np.zeros(n, dtype=bool)  # the plan has ended and this sub-env has nothing left to play
    last_seed = [0] * n

    def next_seeds(mask: np.ndarray) -> list[int | None]:
        """Seeds for the sub-envs in ``mask``; those left without a planned stream go idle and
        replay their last stream, unrecorded (only once the plan has ended)."""
        if any(mask[j] and not pending[j] for j in range(n)):
            batch = next(plan, None)
            if batch is not None:
                if len(batch) != n:
                    raise ValueError(f"a planned batch has {len(batch)} streams for {n} sub-envs")
                for j in range(n):
                    pending[j].append(int(batch[j]))
        seeds: list[int | None] = [None] * n
        for j in np.flatnonzero(mask):
            idle[j] = not pending[j]
            if pending[j]:
                last_seed[j] = pending[j].popleft()
            seeds[j] = last_seed[j]
        return seeds

    everyone = np.ones(n, dtype=bool)
    seeds = next_seeds(everyone)
    if idle.all():  # an empty plan
        return
    observations, info = envs.reset(seed=seeds)
    _record_observations(recordings, observations, info, everyone & ~idle)
    actions = np.zeros((n, 2), dtype=np.int64)
    while True:
        observations, _, terminated, truncated, info = envs.step(actions)
        _record_answers(recordings, info, ~idle)
        done = np.asarray(terminated) | np.asarray(truncated)
        _record_observations(recordings, observations, info, ~done & ~idle)
        if not done.any():
            continue
        for j in np.flatnonzero(done & ~idle):
            finished[j].append(recordings[j].arrays())
            recordings[j] = _Recording()
        while all(finished):
            yield [queue.popleft() for queue in finished]
        seeds = next_seeds(done)
        if idle.all():  # the plan has ended and every stream has been delivered
            return
        observations, info = envs.reset(seed=seeds, options={"reset_mask": done})
        _record_observations(recordings, observations, info, done & ~idle)
