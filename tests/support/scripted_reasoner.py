"""A reasoner test double that replies from a script and records every prompt."""

from __future__ import annotations

from memgym.core.protocols import Reasoner


class ScriptedReasoner(Reasoner):
    """Replies with ``replies`` in order; ``prompts`` holds the last message text of each call."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def generate(self, messages, *, max_new_tokens=256):
        self.prompts.append(messages[-1].text_only())
        return self.replies.pop(0)
