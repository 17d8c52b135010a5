"""The abstract contracts the benchmarks plug into: Memory, Reasoner, Scorer, Scene (and the
:class:`ScorerContext` a scorer is built from, with its :class:`Judge`).

They are abstract base classes (not structural protocols) so that registries can assert a
registered class really implements the contract, and so torch memories can subclass both
``torch.nn.Module`` and :class:`Memory`.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from memgym.core.chat import Message
from memgym.core.episode import TaskItem

READS: dict[str, str] = {
    "frames": "formation frames: rgb (H, W, 3) uint8, depth (H, W) metres, pose",
    "semantic": "the semantic image of each frame (annotated instance ids; the gt detector's input)",
    "dialogue": "what was said, as text lines",
    "audio": "audio: spoken turns, or an audio stream's features",
    "reasoner": "the agent's reasoner, bound before use (bind_reasoner)",
    "linker": "a linker grounding dialogue turns to memory entries",
    "truth": "the episode's ground truth (a probe, not a memory; bind_episode)",
}
"""What a memory may read (:attr:`Memory.reads`): word -> meaning. An evaluation refuses a memory
that reads something its benchmark does not give."""

M = TypeVar("M", bound="Memory")
S = TypeVar("S", bound="Scorer")


class Memory(abc.ABC):
    """A pluggable memory: consumes formation observations, answers use-phase queries.

    A memory sees only observations and queries; only a probe (``"truth"`` in :attr:`reads`) reads
    the episode's ground truth, through :meth:`bind_episode`.

    Attributes:
        reads: what it reads, words of :data:`READS` (memgym.plugin_table repeats it per name,
            so an evaluation can pick memories without importing them). An instance may read less
            than its class (a visual memory without the ``gt`` detector reads no ``semantic``).
    """

    reads: frozenset[str] = frozenset()

    @classmethod
    def from_options(cls: type[M], options: Any) -> M:
        """Build from an evaluation's config (``options``; each memory reads the fields it takes,
        e.g. DialogMem's ``visual``, ``link`` and ``camera``). Default: no options."""
        return cls()

    @classmethod
    def stored_options(cls, options: Any) -> Any:
        """``options`` (an evaluation's config) as this memory's run store records it: defaults the
        memory resolves itself written out, so a run made before such a default existed is not
        resumed as if it were made after. Default: ``options`` unchanged."""
        return options

    def bind_episode(self, episode: Any, **context: Any) -> None:  # noqa: B027 (an optional hook)
        """The episode about to be played, before its formation (``context``: benchmark extras, e.g.
        VoxMem's ``asker``). Memories use it for simulator annotations their sensors stand for
        (the ``gt`` detector's label table) and seeds; probes for ground truth. Default: ignored."""

    def bind_reasoner(self, reasoner: Reasoner) -> None:  # noqa: B027 (an optional hook)
        """The agent's reasoner, which retrieval or linking may consult. Default: ignored."""

    def contents(self) -> dict[str, Any]:
        """What the memory holds, as JSON-ready data without images or point clouds (``memgym eval
        dialogmem save_memory=true`` saves it after each episode; ``memgym view`` shows it).
        DialogMem's memories fill ``dialogue``, ``frames``, ``objects`` and ``snapshots``
        (:meth:`memgym.memory.embodied.visual_memory.VisualMemory.contents`). Default: ``{}``."""
        return {}

    def snapshots(self) -> Sequence[Any] | None:
        """The memory's snapshots with their linked dialogue turns (3D-Mem's), which DialogMem's
        link-quality measure reads. Default: None (the memory keeps none)."""
        return None

    def measures(self, episode: Any) -> dict[str, Any]:
        """Measures of the formed memory against ``episode``'s annotations, by name: ground truth the
        memory never reads while it forms or answers (the evaluation asks after formation). DialogMem
        stores ``map`` (an object memory's instance merges and splits) and ``links`` (a snapshot
        memory's link counts) per episode, and reads ``entry_objects`` (entry id -> the annotated
        object most of its views show) for its navigation rows. Default: ``{}`` (none)."""
        return {}

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget everything (start of an episode)."""

    @abc.abstractmethod
    def observe(self, observation: Any) -> None:
        """Consume one formation observation (a frame, a dialogue turn, a session, ...)."""

    @abc.abstractmethod
    def retrieve(self, query: Any) -> Any:
        """Return the evidence this memory selects for ``query`` (its type is memory-specific)."""

    @abc.abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to restore the memory with :meth:`load_state_dict`."""

    @abc.abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> Any:
        """Restore a state produced by :meth:`state_dict`."""


class Reasoner(abc.ABC):
    """Generates text from typed chat messages (LLM, VLM, audio LM, or a structured reasoner)."""

    name: str = "reasoner"
    io_bound: bool = False
    """True for a client whose replies are computed elsewhere (an HTTP endpoint) and that is safe to
    build once per thread: evaluations then play up to its ``concurrency`` items at once
    (:func:`memgym.backends.config.concurrent_items`)."""

    @abc.abstractmethod
    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        """Reply to ``messages``; deterministic for a pinned model and temperature 0."""

    def generate_many(
        self, requests: Sequence[Sequence[Message]], *, max_new_tokens: int = 256, return_errors: bool = False
    ) -> list[Any]:
        """Replies to each chat of ``requests``, in their order (here one after another; an
        endpoint client overrides it to keep several requests in flight).

        Args:
            return_errors: put a failed request's exception in its place instead of raising the
                first one (in request order) once all have finished.
        """
        replies: list[Any] = []
        for messages in requests:
            try:
                replies.append(self.generate(messages, max_new_tokens=max_new_tokens))
            except Exception as exc:
                if not return_errors:
                    raise
                replies.append(exc)
        return replies


@dataclasses.dataclass(frozen=True)
class Judge:
    """A pinned judge model and what its ratings are cached under.

    Attributes:
        reasoner: the judge (called at temperature 0 by every memgym backend).
        identity: names the model, seed and temperature; part of every cache key.
        cache: the evaluation's crash-safe rating cache (a
            :class:`~memgym.tasks.llm_match.JudgeCache`; None: memory only).
        max_new_tokens: the judge's reply budget, tokens.
    """

    reasoner: Reasoner
    identity: str
    cache: Any = None
    max_new_tokens: int = 8


@dataclasses.dataclass(frozen=True)
class ScorerContext:
    """What a scorer is built from (:meth:`~memgym.core.protocols.Scorer.from_context`); each
    scorer reads the fields it takes.

    Attributes:
        dataset_dir: the dataset folder of the episodes scored ('' when the env generated them):
            VoxMem's scorer reads its plans and sound classes there.
        judge: the evaluation's judge (None: none configured; a scorer that needs one refuses).
    """

    dataset_dir: str = ""
    judge: Judge | None = None


class Scorer(abc.ABC):
    """Scores one prediction against one task item.

    Attributes:
        tasks: the tasks (:attr:`TaskItem.task <memgym.core.episode.TaskItem>`) whose answers it
            scores, with the metrics their result rows read: an env or evaluation takes a scorer
            for a task only when the task is among them (``qa``: text answers of DialogMem;
            ``spoken_qa``: VoxMem's verdict keys; ``attribute_query``: AMemOps' class keys). Empty:
            any task.
        judged: it needs a judge model (:attr:`ScorerContext.judge
            <memgym.core.protocols.ScorerContext>`); evaluations build their judge for it.
    """

    name: str = "scorer"
    tasks: frozenset[str] = frozenset()
    judged: bool = False

    @classmethod
    def from_context(cls: type[S], context: ScorerContext) -> S:
        """Build for the episodes an env plays (``context``: their dataset folder, the evaluation's
        judge; each scorer reads what it takes). Default: ``cls()``."""
        return cls()

    @abc.abstractmethod
    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        """Return metric name -> value (at least one numeric metric)."""


class Scene(abc.ABC):
    """A 3D scene the embodied sensors render and the agent navigates.

    Positions are ``(3,) float`` metres in the Habitat frame (Y up); poses are position plus a
    ``(4,)`` quaternion ``(x, y, z, w)``.
    """

    @abc.abstractmethod
    def render(self, position: np.ndarray, rotation: np.ndarray) -> dict[str, np.ndarray]:
        """``{"rgb": (H, W, 3) uint8, "depth": (H, W) float32 metres, "semantic": (H, W) int32}``."""

    @abc.abstractmethod
    def geodesic_distance(self, start: np.ndarray, goal: np.ndarray) -> float:
        """Shortest navigable path length in metres, ``inf`` if unreachable."""

    @abc.abstractmethod
    def shortest_path(self, start: np.ndarray, goal: np.ndarray) -> np.ndarray:
        """``(K, 3)`` waypoints of a shortest path (empty if unreachable)."""

    @abc.abstractmethod
    def is_navigable(self, position: np.ndarray) -> bool:
        """Whether the agent can stand at ``position``."""

    @property
    @abc.abstractmethod
    def objects(self) -> Sequence[Any]:
        """Annotated objects (id, category, attributes, position, view points)."""
