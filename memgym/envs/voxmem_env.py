"""``memgym/VoxMem-v0``: a multi-session spoken history (formation), then one question (use).

The manual (spaces, phases, info keys, options, an example) is :class:`VoxMemEnv`'s docstring.
"""

from __future__ import annotations

import dataclasses
import string
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from memgym.core.config import as_config, build_config, check_ranges, config_to_dict
from memgym.core.episode import Dataset, TaskItem
from memgym.core.errors import MemgymError
from memgym.core.paths import require_folder
from memgym.core.protocols import Scorer
from memgym.core.registry import register_env
from memgym.core.scoring import ScorerContext, ScorerFactory
from memgym.core.seeding import ADDED_FIELD
from memgym.datasets.voxmem.audio_files import SAMPLE_RATE, read_turn_audio
from memgym.datasets.voxmem.records import VoxMemEpisode
from memgym.envs.two_phase import TwoPhaseEnv

CHARSET = string.printable
AUDIO_FRAME = 160
"""Samples per row of the ``audio`` observation (10 ms at 16 kHz)."""
GENERATED_BUDGET = 4096
"""Budget (tokens) of the one-item histories generated without a dataset and ``budget``."""
AUDIO_CACHE_CLIPS = 4096
"""Decoded turn clips an env keeps (least recently used dropped): nested budgets replay the same turns."""


class AudioCache:
    """Reads FLAC turn files (``(N,) float32`` at 16 kHz), keeping the ``capacity`` most recent in memory."""

    def __init__(self, capacity: int = AUDIO_CACHE_CLIPS) -> None:
        self.capacity = capacity
        self._clips: OrderedDict[Path, np.ndarray] = OrderedDict()

    def load(self, path: Path) -> np.ndarray:
        """The waveform of the file at ``path``."""
        if path in self._clips:
            self._clips.move_to_end(path)
            return self._clips[path]
        audio = read_turn_audio(path)
        self._clips[path] = audio
        if len(self._clips) > self.capacity:
            self._clips.popitem(last=False)
        return audio


@dataclasses.dataclass(frozen=True)
class VoxMemEnvConfig:
    """Configuration of :class:`VoxMemEnv`."""

    dataset: str | None = dataclasses.field(
        default=None, metadata={"help": "VoxMem dataset folder; None: a generated one-item history per reset"}
    )
    budget: int | None = dataclasses.field(
        default=None, metadata={"help": "keep only episodes of this budget, tokens (generated: 4096)", "min": 1}
    )
    max_audio_s: float = dataclasses.field(default=30.0, metadata={"help": "longest turn, seconds", "min": 0.1})
    max_text: int = dataclasses.field(default=2048, metadata={"help": "longest text observation/action", "min": 1})
    task_scorers: dict[str, str] = dataclasses.field(
        default_factory=lambda: {"spoken_qa": "voxmem"},
        metadata={"help": "task -> registered scorer name (memgym list scorers)", **ADDED_FIELD},
    )

    def __post_init__(self) -> None:
        check_ranges(self)


@register_env("voxmem")
class VoxMemEnv(TwoPhaseEnv):
    """A VoxMem episode: a multi-session spoken history (formation), then one question (use).

    ## Description
    Plays VoxMem episodes (``memgym generate voxmem``). An episode is one item at one budget:
    sessions of user turns (speech, 16 kHz mono) and assistant turns (text), each session with a
    start time, then one question about them.

    ## The two phases
    * **formation** -- one step per turn of every session, in history order: the observation is
      the turn (user audio, or assistant text) with its session index, session-start flag and the
      session's timestamp. Actions are ignored (use
      :meth:`formation_action`); the reward is 0.
    * **use** -- one step: the observation is the question (its text, and the same words spoken
      in the asking user's voice, ``role`` 2); the action is the text answer, scored; the
      episode then terminates.

    ## Observation space (``spaces.Dict``)
    | key | space | meaning |
    | --- | --- | --- |
    | ``audio`` | ``Sequence(Box(-1, 1, (160,), float32), stack=True)`` | the turn's waveform in 10 ms rows: ``(ceil(n / 160), 160)``, the last row zero-padded; ``(0, 160)`` for text turns |
    | ``audio_length`` | ``Box(0, max_audio_s * 16000, (1,), int64)`` | valid samples ``n`` in ``audio`` (0 for text turns) |
    | ``text`` | ``Text(max_text)`` | assistant text, or the question in use (empty for user audio) |
    | ``role`` | ``Discrete(3)`` | 0 user audio, 1 assistant text, 2 question |
    | ``session_index`` | ``Box(0, 10**6, (1,), int64)`` | 0-based session of the turn (in use: the count) |
    | ``session_start`` | ``Discrete(2)`` | 1 on a session's first turn |
    | ``timestamp`` | ``Text(32)`` | session start time ``YYYY-MM-DD HH:MM`` (empty in use) |

    An observation is sized by its turn (a 3 s turn holds 48,000 samples, not the 480,000 of the
    longest one): ``obs["audio"].reshape(-1)[: obs["audio_length"][0]]`` is the waveform.
    Vector envs return ``audio`` as a tuple of such arrays, one per env (``"async"`` needs
    ``shared_memory=False``). :mod:`memgym.wrappers` turns it into fixed-size arrays
    (``AudioFeatures``: pooled log-mel; ``PadAudio``: the zero-padded waveform).

    ## Action space
    ``Text(max_text)``: the answer. Ignored during formation.

    ## Rewards
    0 in formation; in use, the ``reward`` of the scorer ``task_scorers.spoken_qa`` names (any
    registered scorer of ``spoken_qa`` items, built for the episode's dataset folder) or of the
    one given as ``scorers["spoken_qa"]`` (``memgym eval voxmem`` passes it its judge). The
    default, ``voxmem``, gives the :class:`~memgym.tasks.voxmem.scoring.VoxMemScorer` verdict: 1.0
    when the reply asserts the gold answer (read by answer kind: numbers and number words, "you" /
    "someone else", spans up to spacing, articles and hyphens, full sequences in order) without
    refusing; for answer-refusal items 1.0 only when the reply refuses (a hedge followed by an
    answer is an answer).

    ## Starting state
    ``reset(seed=..., options={"episode": VoxMemEpisode})`` plays that episode (``options`` has
    no other keys); without one, an episode of the dataset is drawn with the env's generator
    (deterministic under ``seed``), or, with no dataset, a one-item history at ``budget`` tokens
    is generated (cached under the temp folder; the first seed whose item passes QC).

    ## Episode end
    ``terminated`` after the answer; never truncated by the env (``gymnasium.make`` adds a
    ``TimeLimit`` of :meth:`episode_step_bound` at the default configuration, 4,097 steps: it
    never cuts a generated history short; make the env with a dataset of larger budgets with
    ``max_episode_steps=-1`` or its own bound).

    ## Info
    ``phase`` (``"formation"`` / ``"use"``), ``step`` (index within the phase), ``episode_id``;
    in use ``item_id`` and ``task`` (``"spoken_qa"``); after the answer ``score``: the whole
    verdict (``correct``, ``refused``, ``false_refusal``, ...).

    ## Arguments
    ``config``: a :class:`VoxMemEnvConfig`, a mapping of its keys or a YAML file path; its keys
    may also be given as keywords (``gymnasium.make("memgym/VoxMem-v0", dataset=...)``), applied
    over ``config``. ``dataset``: a VoxMem dataset folder; ``budget``: keep only its episodes of
    this budget (tokens); ``max_audio_s``: longest turn (30 s; longer ones are cut);
    ``max_text``: longest text observation and action (characters); ``task_scorers``: task ->
    registered scorer (``{"spoken_qa": "voxmem"}``). ``scorers``: task -> a
    :class:`~memgym.core.protocols.Scorer` or a factory ``(ScorerContext) -> Scorer``, used instead
    of the named one. ``render_mode="rgb_array"``: :meth:`render` draws the current audio's
    spectrogram.

    ## Example
    A one-item dataset at a 3K-token budget (built in a few seconds; no recogniser gate):

    >>> import tempfile
    >>> import gymnasium as gym
    >>> import memgym
    >>> from memgym.backends.asr import ASRConfig
    >>> from memgym.datasets.voxmem.build import VoxMemBuilder
    >>> from memgym.datasets.voxmem.config import VoxMemConfig
    >>> tmp = tempfile.TemporaryDirectory()
    >>> config = VoxMemConfig(items=1, cells=("sound/IE",), budgets=("3k",), asr=ASRConfig(kind="none"), out=tmp.name)
    >>> folder = VoxMemBuilder(config).build()
    >>> env = gym.make("memgym/VoxMem-v0", dataset=str(folder))
    >>> obs, info = env.reset(seed=0)
    >>> info["phase"], obs["role"], obs["session_start"], int(obs["audio_length"][0]) > 0
    ('formation', 0, 1, True)
    >>> obs["audio"].shape == (-(-int(obs["audio_length"][0]) // 160), 160)
    True
    >>> while info["phase"] == "formation":
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.formation_action())
    >>> obs["role"], obs["text"] == env.unwrapped.episode.items[0].prompt, info["task"]
    (2, True, 'spoken_qa')
    >>> answer = env.unwrapped.episode.items[0].answer
    >>> obs, reward, terminated, truncated, info = env.step(answer)
    >>> reward, terminated, info["score"]["correct"]
    (1.0, True, 1.0)
    >>> env.close()
    >>> tmp.cleanup()
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    config_class = VoxMemEnvConfig

    def __init__(
        self,
        config: VoxMemEnvConfig | Mapping[str, Any] | str | Path | None = None,
        *,
        render_mode: str | None = None,
        scorers: Mapping[str, Scorer | ScorerFactory] | None = None,
        **values: Any,
    ) -> None:
        config = as_config(VoxMemEnvConfig, config, where="VoxMemEnv config")
        if values:
            config = build_config(VoxMemEnvConfig, {**config_to_dict(config), **values}, where="VoxMemEnv config")
        super().__init__(render_mode=render_mode, task_scorers=config.task_scorers, scorers=scorers)
        self.config = config
        dataset, budget, max_text = self.config.dataset, self.config.budget, self.config.max_text
        self.dataset_dir = Path(dataset) if dataset is not None else None
        self.budget = budget
        self.max_samples = int(self.config.max_audio_s * SAMPLE_RATE)
        self.max_text = max_text
        self._episodes: list[VoxMemEpisode] = []
        if self.dataset_dir is not None:
            require_folder(self.dataset_dir, "dataset", "a VoxMem dataset folder (with manifest.jsonl)")
            manifest = self.dataset_dir / "manifest.jsonl"
            if not manifest.is_file():
                raise MemgymError(f"{self.dataset_dir} is not a VoxMem dataset (no manifest.jsonl)")
            episodes = [e for e in Dataset.load(manifest) if budget is None or e.budget == budget]
            if not episodes:
                raise MemgymError(f"{manifest} has no episodes at budget {budget}")
            self._episodes = episodes
        text = spaces.Text(max_length=max_text, min_length=0, charset=CHARSET)
        self.observation_space = spaces.Dict(
            {
                "audio": spaces.Sequence(spaces.Box(-1.0, 1.0, (AUDIO_FRAME,), np.float32), stack=True),
                "audio_length": spaces.Box(0, self.max_samples, (1,), np.int64),
                "text": text,
                "role": spaces.Discrete(3),
                "session_index": spaces.Box(0, 10**6, (1,), np.int64),
                "session_start": spaces.Discrete(2),
                "timestamp": spaces.Text(max_length=32, min_length=0, charset=CHARSET),
            }
        )
        self.action_space = spaces.Text(max_length=max_text, min_length=0, charset=CHARSET)
        self._turns: list[tuple[int, int, Any]] = []
        self._audio = AudioCache()
        self._last_audio = np.zeros(0, np.float32)

    def episode_step_bound(self) -> int:
        """With a dataset, the longest of its episodes (turns + items); without, ``budget + 1``
        (4,097 at the default 4,096 tokens): a generated history passes QC only within its budget,
        and every turn counts at least one token."""
        if self._episodes:
            return max(sum(len(s.turns) for s in e.sessions) + len(e.items) for e in self._episodes)
        return (self.budget or GENERATED_BUDGET) + 1

    # ----- hooks -----------------------------------------------------------------------------------
    def _build_episode(self, rng: np.random.Generator, options: dict[str, Any]) -> VoxMemEpisode:
        if self._episodes:
            return self._episodes[int(rng.integers(len(self._episodes)))]
        return _generated_episode(int(rng.integers(0, 2**31)), self.budget or GENERATED_BUDGET)

    def _begin(self, episode) -> int:
        if not isinstance(episode, VoxMemEpisode):
            raise TypeError(f"VoxMemEnv plays VoxMemEpisode records, got {type(episode).__name__}")
        root = episode.annotations.get("dataset_dir") or (str(self.dataset_dir) if self.dataset_dir else "")
        self._root = Path(root)
        self._dataset = str(self._root.resolve()) if root else ""
        self._turns = [(si, ti, turn) for si, s in enumerate(episode.sessions) for ti, turn in enumerate(s.turns)]
        return len(self._turns)

    def _formation_observation(self, step: int) -> dict[str, Any]:
        session_index, turn_index, turn = self._turns[step]
        session = self.episode.sessions[session_index]
        audio = self._load(turn.audio) if turn.role == "user" else np.zeros(0, np.float32)
        return self._observation(
            audio, "" if turn.role == "user" else turn.text, 0 if turn.role == "user" else 1,
            session_index, turn_index == 0, session.timestamp,
        )  # fmt: skip

    def _use_observation(self, item: TaskItem, index: int) -> dict[str, Any]:
        audio_path = item.annotations.get("question_audio", "")
        audio = self._load(audio_path) if audio_path else np.zeros(0, np.float32)
        return self._observation(audio, item.prompt, 2, len(self.episode.sessions), False, "")

    def _score(self, item: TaskItem, action: Any) -> dict[str, Any]:
        return self.scorer(item.task).score(item, str(action))

    def scorer_context(self) -> ScorerContext:
        """The episode's dataset folder ('' for a generated one without)."""
        return ScorerContext(dataset_dir=self._dataset)

    # ----- helpers -----------------------------------------------------------------------------------
    def _load(self, relative: str) -> np.ndarray:
        return self._audio.load(self._root / relative)[: self.max_samples]

    def _observation(self, audio, text, role, session_index, start, timestamp) -> dict[str, Any]:
        self._last_audio = audio
        rows = np.zeros((-(-audio.size // AUDIO_FRAME), AUDIO_FRAME), np.float32)
        np.clip(audio, -1.0, 1.0, out=rows.reshape(-1)[: audio.size])
        clean = "".join(c for c in text if c in CHARSET)[: self.max_text]
        return {
            "audio": rows,
            "audio_length": np.array([audio.size], np.int64),
            "text": clean,
            "role": int(role),
            "session_index": np.array([session_index], np.int64),
            "session_start": int(bool(start)),
            "timestamp": "".join(c for c in timestamp if c in CHARSET)[:32],
        }

    def render(self) -> np.ndarray:
        """``(128, 256, 3) uint8`` log spectrogram of the current audio (black when none)."""
        image = np.zeros((128, 256, 3), np.uint8)
        audio = self._last_audio
        if audio.size >= 512:
            frames = np.lib.stride_tricks.sliding_window_view(audio, 512)[::160]
            spec = np.log1p(np.abs(np.fft.rfft(frames * np.hanning(512), axis=1))[:, :256])
            spec = spec[:, ::2].T[::-1]  # (128 freq, T)
            cols = np.linspace(0, spec.shape[1] - 1, 256).astype(int)
            spec = spec[:, cols]
            spec = (255 * spec / max(spec.max(), 1e-9)).astype(np.uint8)
            image[...] = spec[..., None]
        return image


GENERATION_SEEDS = 4  # seeds tried (seed, seed + 1000, ...) before a generated reset gives up


def _generated_episode(seed: int, budget: int) -> VoxMemEpisode:
    """A one-item episode built (and cached) under the temp folder.

    QC (the intelligibility gate above all) may drop an item after its redraws; the next seed of
    the sequence ``seed % 1000 + 1000 k`` is then built, so a reset gives the first item that
    passes QC, the same one every time.
    """
    import tempfile

    from memgym.datasets.voxmem.build import VoxMemBuilder
    from memgym.datasets.voxmem.config import VoxMemConfig

    out = Path(tempfile.gettempdir()) / "memgym-voxmem-env"
    for attempt in range(GENERATION_SEEDS):
        sub_seed = seed % 1000 + 1000 * attempt
        config = VoxMemConfig(
            items=1, budgets=(str(budget),), seed=sub_seed, max_revisions=6, out=str(out / f"seed{sub_seed}")
        )
        folder = VoxMemBuilder(config).build()
        episode = next(iter(Dataset.load(folder / "manifest.jsonl")), None)
        if episode is not None:
            return dataclasses.replace(episode, annotations={**episode.annotations, "dataset_dir": str(folder)})
    raise MemgymError(
        f"no VoxMem item generated for seed {seed} passed QC in {GENERATION_SEEDS} tries "
        f"(see {folder / 'qc_report.md'}); reset with another seed"
    )
