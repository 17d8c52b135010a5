"""The use-phase request as the reasoner sees it: the item's task stated on the request's line.

An env knows each use-phase item's task (``info["task"]``: ``qa`` or ``navigation``). The agent
states it on the request's line, ``"Question: <prompt>"`` or ``"Instruction: <prompt>"``
(:func:`request_line`), so a reasoner never has to guess it from the wording; the structured
reasoner reads it back with :func:`split_request_line`.
"""

from __future__ import annotations

REQUEST_LABELS: dict[str, str] = {"qa": "Question", "navigation": "Instruction"}
"""Task -> the label that starts its request line."""


def request_line(task: str | None, prompt: str) -> str:
    """``prompt`` on one line, led by its task's label (unchanged for a task without one)."""
    text = " ".join(str(prompt).split())
    label = REQUEST_LABELS.get(task or "")
    return f"{label}: {text}" if label else text


def split_request_line(line: str) -> tuple[str | None, str]:
    """``(task, request)`` of a request line; task None when the line states none."""
    for task, label in REQUEST_LABELS.items():
        if line.startswith(f"{label}: "):
            return task, line[len(label) + 2 :].strip()
    return None, line.strip()
