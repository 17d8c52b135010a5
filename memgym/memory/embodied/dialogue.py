"""``Dialogue``: the raw-stream baseline that keeps every dialogue turn as text and nothing else.

It stores no frames and no poses, so it cannot localise objects; its evidence for any query is
the whole transcript (``"Speaker: utterance"`` lines in the order heard), which a reasoner reads
at evaluation time.
"""

from __future__ import annotations

from typing import Any

from memgym.core.protocols import Memory
from memgym.core.registry import register_memory


@register_memory("dialogue")
class DialogueMemory(Memory):
    """All dialogue lines heard during formation, verbatim.

    ``observe`` reads the ``text`` field of an observation (a mapping or a plain string);
    ``retrieve`` returns the transcript as one string (empty when nothing was said).
    """

    reads = frozenset({"dialogue"})

    def __init__(self) -> None:
        self.lines: list[str] = []

    def reset(self) -> None:
        self.lines = []

    def observe(self, observation: Any) -> None:
        text = observation.get("text", "") if isinstance(observation, dict) else str(observation)
        self.lines += [line for line in text.splitlines() if line.strip()]

    def retrieve(self, query: Any) -> str:
        return "\n".join(self.lines)

    def contents(self) -> dict[str, Any]:
        """``{"dialogue": [{"frame": None, "text": line}, ...]}`` (no frames kept)."""
        return {"dialogue": [{"frame": None, "text": line} for line in self.lines]}

    def state_dict(self) -> dict[str, Any]:
        return {"lines": list(self.lines)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.lines = [str(line) for line in state["lines"]]
