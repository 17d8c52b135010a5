"""``keyword_dialogue``: a DialogMem memory keeping what the residents said and handing the reasoner
the lines that share the most words with the question (docs/plugins.md)."""

from __future__ import annotations

from typing import Any

from memgym.core.protocols import Memory


def words(text: str) -> set[str]:
    """The lower-cased words of ``text`` without punctuation."""
    return {word.strip(".,;:?!'\"").lower() for word in text.split()} - {""}


class KeywordDialogueMemory(Memory):
    """Every dialogue line heard in formation; ``retrieve(question)`` returns, as one string, the
    ``top_k`` lines sharing most words with it (ties: the later line first), oldest first.

    Args:
        top_k: lines handed to the reasoner at most.
    """

    reads = frozenset({"dialogue"})  # what an evaluation must give it: the lines said

    def __init__(self, top_k: int = 8) -> None:
        self.top_k = top_k
        self.lines: list[str] = []

    @classmethod
    def from_options(cls, options: Any) -> KeywordDialogueMemory:
        """Built by ``memgym eval dialogmem memory=keyword_dialogue``; takes no eval options."""
        return cls()

    def reset(self) -> None:
        self.lines = []

    def observe(self, observation: Any) -> None:
        """Keep the ``"Speaker: utterance"`` lines of a formation observation's ``text``."""
        text = observation.get("text", "") if isinstance(observation, dict) else str(observation)
        self.lines += [line for line in text.splitlines() if line.strip()]

    def retrieve(self, query: Any) -> str:
        asked = words(str(query))
        ranked = sorted(range(len(self.lines)), key=lambda i: (len(asked & words(self.lines[i])), i), reverse=True)
        chosen = sorted(i for i in ranked[: self.top_k] if asked & words(self.lines[i]))
        return "\n".join(self.lines[i] for i in chosen)

    def contents(self) -> dict[str, Any]:
        return {"dialogue": [{"frame": None, "text": line} for line in self.lines]}

    def state_dict(self) -> dict[str, Any]:
        return {"lines": list(self.lines)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.lines = [str(line) for line in state["lines"]]
