"""``oracle``: a ground-truth probe, not a memory — an upper bound for the symbolic pipeline.

It ignores the formation stream. The evaluation loop hands it the episode being played
(:meth:`OracleProbe.bind_episode`); its evidence is then every memory item an agent *could* know
(perceptual and episodic content of observed objects, the latest stated social content) as
``FACT`` lines, plus each observed object's annotated centre as its location (what navigation is
scored against). With
the structured reasoner it must answer every item (the test suite checks this), so it separates
failures of a memory from failures of item construction, reasoning or scoring — the role of the
paper's oracle probes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from memgym.backends.structured import format_fact
from memgym.core.protocols import Memory
from memgym.core.registry import register_memory


@dataclasses.dataclass(frozen=True)
class OracleEvidence:
    """Fact lines (``text``) and ``locations`` (object id -> ``(3,)`` metres)."""

    text: str
    locations: dict[str, tuple[float, float, float]]


@register_memory("oracle")
class OracleProbe(Memory):
    """Ground-truth evidence of the bound episode (see the module docstring)."""

    reads = frozenset({"truth"})

    def __init__(self) -> None:
        self.evidence = OracleEvidence("", {})

    def bind_episode(self, episode: Any, **context: Any) -> None:
        """Take the evidence from ``episode`` (a ``DialogMemEpisode``)."""
        from memgym.datasets.dialogmem.episode import observation_log
        from memgym.datasets.dialogmem.task_specs import available_content
        from memgym.scenes.spec import load_scene

        observed = set(observation_log(episode.traversal).first_seen())
        content = available_content(episode.memory, observed)
        lines = [format_fact(item.as_fact()) for keys in content.values() for item in keys.values()]
        scene = load_scene(episode.traversal.scene)
        locations = {}
        for object_id in sorted(observed):
            locations[object_id] = tuple(float(v) for v in scene.object(object_id).position)
        self.evidence = OracleEvidence("\n".join(lines), locations)

    def reset(self) -> None:
        """Keeps the bound episode: the probe does not learn from the stream."""

    def observe(self, observation: Any) -> None:
        """Ignored."""

    def retrieve(self, query: Any) -> OracleEvidence:
        return self.evidence

    def state_dict(self) -> dict[str, Any]:
        return {"text": self.evidence.text, "locations": {k: list(v) for k, v in self.evidence.locations.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.evidence = OracleEvidence(state["text"], {k: tuple(v) for k, v in state["locations"].items()})
