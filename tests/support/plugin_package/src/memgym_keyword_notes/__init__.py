"""``keyword_notes``: keeps every text observation; retrieves the notes sharing most words with the query."""

from __future__ import annotations

from typing import Any

from memgym.core.protocols import Memory


def _words(text: str) -> set[str]:
    return {w.strip(".,?!").lower() for w in text.split()} - {""}


class KeywordNotesMemory(Memory):
    """Text notes ranked by words shared with the query (ties: the later note first).

    Args:
        top_k: how many notes ``retrieve`` returns at most.
    """

    def __init__(self, top_k: int = 2) -> None:
        self.top_k = top_k
        self.notes: list[str] = []

    def reset(self) -> None:
        self.notes = []

    def observe(self, observation: Any) -> None:
        self.notes.append(str(observation))

    def retrieve(self, query: Any) -> list[str]:
        asked = _words(str(query))
        scored = [(len(asked & _words(note)), i) for i, note in enumerate(self.notes)]
        best = sorted((s for s in scored if s[0] > 0), reverse=True)[: self.top_k]
        return [self.notes[i] for _, i in best]

    def state_dict(self) -> dict[str, Any]:
        return {"notes": list(self.notes)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.notes = list(state["notes"])
