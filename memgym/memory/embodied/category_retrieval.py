"""3D-Mem's retrieval step: the reasoner predicts the object categories relevant to a request.

:func:`predict_categories` shows the reasoner the categories present in memory (a
``CATEGORIES [...]`` line, :data:`memgym.backends.structured.CATEGORIES_PREFIX`) and the
request, and reads back the categories it names (comma-separated; words outside the list are
ignored), in the order named. A memory holding dialogue (the appended transcript, or the lines
linked to its snapshots) shows those lines first, so a request that names its object only by what
residents said ("Take me to the lighthouse.") can still be mapped to the category they said it of.
The structured reasoner answers this prompt too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from memgym.backends.structured import CATEGORIES_PREFIX, named_categories
from memgym.core.chat import Message
from memgym.core.errors import MemgymError
from memgym.core.protocols import Reasoner

CATEGORY_SYSTEM_PROMPT = (
    "You choose which object categories in a robot's memory a request refers to. Reply with the relevant "
    "categories from the list, comma-separated, most relevant first, and nothing else."
)


def category_messages(request: str, categories: Iterable[str], dialogue: Sequence[str] = ()) -> list[Message]:
    """The chat asking for the categories of ``request`` among ``categories``; ``dialogue``: the
    ``"Speaker: utterance"`` lines the memory holds (shown before the list, so that a request naming
    its object only by what residents said, ``Take me to the lighthouse.``, can be resolved)."""
    listed = json.dumps(sorted(set(categories)))
    said = "Dialogue:\n" + "\n".join(dialogue) + "\n" if dialogue else ""
    return [
        Message.text("system", CATEGORY_SYSTEM_PROMPT),
        Message.text("user", f"{said}{CATEGORIES_PREFIX}{listed}\nRequest: {request}"),
    ]


def parse_categories(reply: str, categories: Iterable[str]) -> tuple[str, ...]:
    """Categories of ``categories`` named in ``reply``, in the order first named."""
    return tuple(named_categories(reply, categories))


def predict_categories(
    reasoner: Reasoner | None, request: str, categories: Iterable[str], dialogue: Sequence[str] = ()
) -> tuple[str, ...]:
    """Ask ``reasoner`` which of ``categories`` ``request`` needs (see the module docstring), showing
    it the memory's ``dialogue`` lines when it holds any."""
    categories = sorted(set(categories))
    if not categories:
        return ()
    if reasoner is None:
        raise MemgymError(
            "this memory retrieves by categories the reasoner predicts; give it one with bind_reasoner(reasoner) "
            "(ReasonerAgent does so before every retrieval)"
        )
    reply = reasoner.generate(category_messages(request, categories, dialogue), max_new_tokens=48)
    return parse_categories(reply, categories)
