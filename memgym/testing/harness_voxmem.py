"""VoxMem as the memory contract plays it: ``memgym/VoxMem-v0`` on a spoken dataset of two
one-question histories at the 3K budget (built once per process, about 30 s; or a given dataset
folder), each memory built from a :class:`~memgym.memory.voxmem.options.VoxMemOptions` as
``memgym eval voxmem`` builds them, answering through a
:class:`~memgym.agents.voxmem_agent.VoxMemAgent`.

Two stand-ins keep it offline and small; the contract checks a memory's plumbing, not how well
it hears: the recogniser names each clip by a digest of its samples
(:class:`DigestRecogniser`), and the model replies with a digest of the chat it is handed
(:class:`DigestReasoner`), so a reply changes with anything the memory hands it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from memgym.agents.agent import Agent
from memgym.core.chat import AudioPart, Message, TextPart
from memgym.core.episode import Dataset, Episode
from memgym.core.protocols import Memory, Reasoner
from memgym.testing.harness_base import Harness, add_harness


class DigestRecogniser:
    """A recogniser stand-in: ``transcribe(audio, rate)`` is ``"clip <digest>"`` of the samples."""

    def identity(self) -> str:
        return "contract-digest-asr"

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        samples = np.ascontiguousarray(audio, dtype=np.float32).tobytes()
        return f"clip {hashlib.sha1(samples).hexdigest()[:10]}"


class DigestReasoner(Reasoner):
    """A model stand-in: the reply is a digest of every text and audio part of the chat."""

    name = "contract-digest"

    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        digest = hashlib.sha1()
        for message in messages:
            digest.update(message.role.encode())
            for part in message.content:
                if isinstance(part, AudioPart):
                    digest.update(np.ascontiguousarray(part.waveform, dtype=np.float32).tobytes())
                elif isinstance(part, TextPart):
                    digest.update(part.text.encode())
        return f"answer {digest.hexdigest()[:10]}"


@add_harness
class VoxMemHarness(Harness):
    """VoxMem (module docstring).

    Args:
        dataset: a VoxMem dataset folder to take the first two episodes of (default: a tiny one
            built on first use in the harness's scratch folder).
    """

    benchmark = "voxmem"

    def __init__(self, dataset: str | Path | None = None) -> None:
        super().__init__()
        self.dataset = Path(dataset) if dataset is not None else None
        self._env: gymnasium.Env | None = None
        self._askers: dict[str, str] | None = None

    def takes(self, cls: type[Memory]) -> bool:
        if "audio" not in cls.reads:  # decided without importing VoxMem's evaluation
            return False
        from memgym.memory.voxmem.base import VoxMemMemory
        from memgym.pipelines.voxmem.evaluation import GIVES

        return issubclass(cls, VoxMemMemory) and cls.reads <= GIVES

    def options(self, name: str) -> Any:
        from memgym.memory.voxmem.options import VoxMemOptions
        from memgym.pipelines.voxmem.evaluation import VoxMemEvalConfig

        top = VoxMemEvalConfig.__dataclass_fields__["top_sessions"].default
        return VoxMemOptions(top_sessions=top, make_asr=DigestRecogniser)

    def folder_of_dataset(self) -> Path:
        """The dataset the episodes come from (built on the first call without one)."""
        if self.dataset is None:
            from memgym.backends.asr import ASRConfig
            from memgym.datasets.voxmem.build import VoxMemBuilder
            from memgym.datasets.voxmem.config import VoxMemConfig

            config = VoxMemConfig(
                items=2, cells=("sound/IE",), budgets=("3k",), asr=ASRConfig(kind="none"), out=self.folder
            )
            self.dataset = Path(VoxMemBuilder(config).build())
        return self.dataset

    def env(self, memory: Memory) -> gymnasium.Env:
        if self._env is None:
            folder = self.folder_of_dataset()
            self._env = gymnasium.make("memgym/VoxMem-v0", dataset=str(folder), max_episode_steps=-1)
        return self._env

    def episodes(self) -> tuple[Episode, Episode]:
        episodes = list(Dataset.load(self.folder_of_dataset() / "manifest.jsonl"))
        if len(episodes) < 2:
            raise AssertionError(f"{self.dataset}: the memory contract needs a VoxMem dataset of two episodes or more")
        return episodes[0], episodes[1]

    def context(self, episode: Episode) -> dict[str, Any]:
        if self._askers is None:
            self._askers = _askers(self.folder_of_dataset())
        return {"asker": self._askers.get(episode.items[0].item_id, "")}

    def agent(self, memory: Memory) -> Agent:
        from memgym.agents.voxmem_agent import VoxMemAgent

        return VoxMemAgent(memory, DigestReasoner())  # type: ignore[arg-type]

    def evidence_problem(self, evidence: Any, memory: Memory) -> str | None:
        if not isinstance(evidence, list) or not evidence or not all(isinstance(m, Message) for m in evidence):
            return f"retrieve returned {type(evidence).__name__}: a VoxMem memory returns the chat, a list of Message"
        if evidence[-1].role != "user":
            return f"the chat ends with a '{evidence[-1].role}' message, not the user's question"
        hears = any(isinstance(p, AudioPart) for m in evidence for p in m.content)
        if hears and getattr(memory, "modality", "text") == "text":
            return "a text-modality memory (modality = 'text') handed the model audio parts"
        return None


def _askers(folder: Path) -> dict[str, str]:
    """Item id -> who asks it, from the dataset's ``plans.jsonl`` (as the evaluation reads it)."""
    from memgym.core.records import read_jsonl
    from memgym.datasets.voxmem.records import Plan

    plans = folder / "plans.jsonl"
    return {p.plan_id: p.query.asker for p in read_jsonl(plans) if isinstance(p, Plan)} if plans.is_file() else {}
