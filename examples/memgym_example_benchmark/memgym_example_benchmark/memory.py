"""``digit_span``: a memory of the last ``span`` digits it heard (a digit span, as in the test)."""

from __future__ import annotations

from typing import Any

from memgym.core.protocols import Memory


class DigitSpanMemory(Memory):
    """Keeps the last ``span`` formation lines; ``retrieve({"line": "digit P?"})`` is the digit at
    position ``P``, or ``"unknown"`` when it has been forgotten."""

    reads = frozenset({"dialogue"})

    def __init__(self, span: int = 8) -> None:
        self.span = span
        self.reset()

    @classmethod
    def from_options(cls, options: Any) -> DigitSpanMemory:
        """Built from the eval's ``span``."""
        return cls(span=options.span)

    def reset(self) -> None:
        self.heard = 0
        self.kept: list[str] = []

    def observe(self, observation: Any) -> None:
        self.heard += 1
        self.kept = [*self.kept, observation["line"]][-self.span :]

    def retrieve(self, query: Any) -> str:
        position = int(query["line"].split()[1].rstrip("?"))
        first = self.heard - len(self.kept) + 1  # position of the oldest digit kept
        return self.kept[position - first] if position >= first else "unknown"

    def state_dict(self) -> dict[str, Any]:
        return {"span": self.span, "heard": self.heard, "kept": list(self.kept)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.span, self.heard, self.kept = int(state["span"]), int(state["heard"]), list(state["kept"])
