"""DialogMem as the memory contract plays it: ``memgym/DialogMem-v0`` in a three-room house with
one goal (about 70 formation frames of 32 x 24 pixels), six use items an episode (three navigation
instructions, three questions), the offline structured reasoner in a
:class:`~memgym.agents.reasoner_agent.ReasonerAgent`, memories built from a
:class:`~memgym.pipelines.dialogmem.eval_config.DialogMemEvalConfig` as ``memgym eval dialogmem``
builds them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np

from memgym.agents.agent import Agent
from memgym.core.episode import Episode
from memgym.core.protocols import Memory
from memgym.testing.harness_base import Harness, add_harness

CAMERA = ("camera.width=32", "camera.height=24")
"""The formation camera of the contract's episodes (the eval config's and the env's)."""
ENV_CONFIG: dict[str, Any] = {
    "house_seed": 2,
    "house": {"min_rooms": 3, "max_rooms": 3},
    "traversal": {"min_goals": 1, "max_goals": 1},
    "camera": {"width": 32, "height": 24},
}
"""``memgym/DialogMem-v0`` config of the episodes: the smallest house and traversal it builds."""
ITEMS_PER_TASK = 3
"""Use items kept per task (navigation, qa) in each episode."""


@add_harness
class DialogMemHarness(Harness):
    """DialogMem (module docstring).

    Args:
        overrides: ``key=value`` overrides of the eval config every memory is built from, after
            the small camera (e.g. ``link.clip_model=FOLDER`` for ``3dmem+clip``).
    """

    benchmark = "dialogmem"

    def __init__(self, overrides: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.overrides = tuple(overrides)
        self._envs: dict[bool, gymnasium.Env] = {}
        self._episodes: tuple[Episode, Episode] | None = None

    def takes(self, cls: type[Memory]) -> bool:
        from memgym.pipelines.dialogmem.eval_config import DIALOGMEM_READS

        return cls.reads <= DIALOGMEM_READS

    def options(self, name: str) -> Any:
        return self.options_with(name, self.overrides)

    def options_with(self, name: str, overrides: tuple[str, ...]) -> Any:
        """The eval config of ``name`` with ``overrides`` (``key=value``) after the small camera."""
        from memgym.core.config import load_config
        from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig

        return load_config(DialogMemEvalConfig, overrides=(f"memory={name}", *CAMERA, *overrides))

    def env(self, memory: Memory) -> gymnasium.Env:
        semantic = "semantic" in memory.reads  # as the eval: semantic images only for memories reading them
        if semantic not in self._envs:
            self._envs[semantic] = gymnasium.make(
                "memgym/DialogMem-v0", config={**ENV_CONFIG, "semantic": semantic}, max_episode_steps=-1
            )
        return self._envs[semantic]

    def episodes(self) -> tuple[Episode, Episode]:
        if self._episodes is None:
            env = gymnasium.make("memgym/DialogMem-v0", config=ENV_CONFIG, max_episode_steps=-1)
            played = []
            for seed in (0, 1):
                env.reset(seed=seed)
                episode = env.unwrapped.episode
                kept = {i.item_id for task in ("navigation", "qa") for i in _of_task(episode, task)[:ITEMS_PER_TASK]}
                played.append(dataclasses.replace(episode, items=tuple(i for i in episode.items if i.item_id in kept)))
            env.close()
            self._episodes = (played[0], played[1])
        return self._episodes

    def agent(self, memory: Memory) -> Agent:
        from memgym.agents.reasoner_agent import ReasonerAgent
        from memgym.backends.config import build_reasoner

        config = self.options("dialogue")
        return ReasonerAgent(
            memory, build_reasoner(config.reasoner), config.reasoner.max_new_tokens, config.answer_tokens
        )

    def after_formation(self, agent: Agent) -> None:
        """Bind the reasoner, as the evaluation does before it measures the formed memory (a VLM
        linker asks it)."""
        agent.memory.bind_reasoner(agent.reasoner)  # type: ignore[attr-defined]

    def evidence_problem(self, evidence: Any, memory: Memory) -> str | None:
        text = evidence if isinstance(evidence, str) else getattr(evidence, "text", None)
        if not isinstance(text, str):
            return f"retrieve returned {type(evidence).__name__}: the agent reads a str, or an object with a str 'text'"
        locations = getattr(evidence, "locations", {}) or {}
        if not isinstance(locations, Mapping):
            return f"evidence.locations is {type(locations).__name__}, not a mapping of entry id -> (3,) position"
        bad = [key for key, where in locations.items() if np.shape(where) != (3,)]
        if bad:
            return f"evidence.locations of {bad[:3]} are not (3,) positions in metres"
        images = getattr(evidence, "images", ())
        wrong = [np.shape(image) for image in images if np.ndim(image) != 3 or np.shape(image)[-1] != 3]
        return f"evidence.images must be (H, W, 3) uint8, got shapes {wrong[:3]}" if wrong else None


def _of_task(episode: Episode, task: str) -> list[Any]:
    return [item for item in episode.items if item.task == task]
