"""``ReasonerAgent``: a memory's evidence, read by a reasoner, becomes the use-phase answer.

For each use-phase item the agent asks its memory for evidence (``memory.retrieve(prompt)``;
the memory first gets the agent's reasoner through ``bind_reasoner``, which its retrieval may consult),
turns it into chat content (text evidence as a text part; evidence objects may also offer
``images`` ``(H, W, 3) uint8`` and ``locations`` ``{entry id: (3,) metres}``, and
``structured_text`` -- fact lines sent instead of ``text`` to reasoners with ``reads_facts``,
the offline structured one; images go only to reasoners whose ``accepts_images`` is not False,
so text LMs get the text alone), appends the item's prompt as the last line, led by its task as the env
gives it (``info["task"]``: ``Question: ...`` / ``Instruction: ...``, :mod:`memgym.core.task_line`; a
reasoner never guesses the task from the wording), and asks the reasoner.
Answers:

* ``qa`` -- the reply text;
* ``navigation`` -- the reasoner picks a memory entry (``OBJECT <id>`` or a bare entry id); the
  agent answers that entry's location. When the memory has no locations (``Dialogue`` stores no
  poses) or the reply names no entry, the agent cannot localise and answers a NaN position,
  which navigation scorers count as a failure.

Each answer's token budget is the task's entry in ``task_tokens`` (default ``max_new_tokens``),
at most ``max_new_tokens``. A reasoner with ``generate_line`` (the transformers and OpenAI-compatible ones) replies
with one line, decoding stopped at its first line end, for answers of a few words or an entry id.

A reasoner failure (:class:`~memgym.backends.errors.ReasonerError`) propagates; evaluation loops
record it for the item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.agents.agent import Agent
from memgym.core.chat import ImagePart, Message, TextPart
from memgym.core.errors import ConfigError
from memgym.core.protocols import Memory, Reasoner
from memgym.core.task_line import request_line

SYSTEM_PROMPT = (
    "You are a home robot. You explored a house while its residents talked to you. Use only the memory "
    "below. The last line is a question ('Question: ...'): answer briefly (a few words); or a navigation "
    "instruction ('Instruction: ...'): reply with the id of the memory entry to go to, or 'unknown'. Later "
    "statements override earlier ones."
)


class ReasonerAgent(Agent):
    """Memory + reasoner (see the module docstring).

    Args:
        memory: any memgym memory.
        reasoner: the model that reads the evidence.
        max_new_tokens: longest answer, tokens.
        task_tokens: task (``qa``, ``navigation``) -> answer budget in tokens, capped at
            ``max_new_tokens``; tasks not named get ``max_new_tokens``.

    Raises:
        ConfigError: a budget below 1.
    """

    def __init__(
        self,
        memory: Memory,
        reasoner: Reasoner,
        max_new_tokens: int = 32,
        task_tokens: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(memory)
        self.reasoner = reasoner
        self.max_new_tokens = max_new_tokens
        self.task_tokens = dict(task_tokens or {})
        low = {k: v for k, v in {"max_new_tokens": max_new_tokens, **self.task_tokens}.items() if int(v) < 1}
        if low:
            raise ConfigError(f"reasoner agent: answer budgets must be >= 1 token, got {low}")
        self.last_reply = ""

    def budget(self, task: str | None) -> int:
        """Tokens allowed for an answer to a ``task`` item."""
        return min(int(self.task_tokens.get(task or "", self.max_new_tokens)), self.max_new_tokens)

    def messages(self, prompt: str, evidence: Any, task: str | None = None) -> list[Message]:
        """The chat sent to the reasoner for ``prompt`` (an item of ``task``) given ``evidence``."""
        text = evidence if isinstance(evidence, str) else getattr(evidence, "text", "")
        structured = getattr(self.reasoner, "reads_facts", False) and hasattr(evidence, "structured_text")
        if structured:
            text = evidence.structured_text
        parts: list[Any] = [TextPart(f"Memory:\n{text or '(empty)'}")]
        if not structured and getattr(self.reasoner, "accepts_images", True):
            parts += [ImagePart(np.asarray(image, np.uint8)) for image in getattr(evidence, "images", ())]
        parts.append(TextPart(request_line(task, prompt)))
        return [Message.text("system", SYSTEM_PROMPT), Message("user", tuple(parts))]

    def answer(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        prompt = observation["text"]
        self.memory.bind_reasoner(self.reasoner)
        evidence = self.memory.retrieve(prompt)
        messages = self.messages(prompt, evidence, info.get("task"))
        budget = self.budget(info.get("task"))
        one_line = getattr(self.reasoner, "generate_line", None)
        if one_line is not None:
            reply = one_line(messages, max_new_tokens=budget)
        else:
            reply = self.reasoner.generate(messages, max_new_tokens=budget)
        self.last_reply = reply
        position = np.asarray(observation["position"], np.float32)
        if info.get("task") == "navigation":
            locations = getattr(evidence, "locations", {}) or {}
            entry = reply.strip().removeprefix("OBJECT").strip()
            position = np.asarray(locations.get(entry, (np.nan, np.nan, np.nan)), np.float32)
        return {"text": reply, "position": position}
