"""A class's docstring summary as plain text, for ``memgym list --describe``.

The summary is the first sentence of the docstring's first paragraph with its reST markup
removed: ``:func:`~a.b.f``` becomes ``f``, ````x```` becomes ``x``, and pointers to "the module
docstring" give way to that docstring's own first sentence.

>>> class Memory:
...     '''Keeps every turn; ``retrieve`` returns :func:`~m.audio_history_messages` of all
...     sessions (see the module docstring). More text.'''
>>> plain_summary(Memory)
'Keeps every turn; retrieve returns audio_history_messages of all sessions.'
"""

from __future__ import annotations

import re
import sys

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(?:([^`<]*?)\s*<[^`>]*>|~?([^`]*))`")
_LITERAL = re.compile(r"``([^`]*)``|`([^`]*)`")
_MODULE_POINTER = re.compile(r"\s*\((?:see )?(?:the )?module docstring\)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def plain_text(text: str) -> str:
    """``text`` without reST roles and literal markup (a role keeps its title or last dotted part)."""

    def role(match: re.Match) -> str:
        if match.group(1) is not None:
            return match.group(1)
        target = match.group(2)
        return target.rsplit(".", 1)[-1] if "." in target and " " not in target else target

    text = _ROLE.sub(role, text)
    return _LITERAL.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)


def first_sentence(doc: str) -> str:
    """The first sentence of ``doc``'s first paragraph, its lines joined (``""`` for no docstring)."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0] if paragraph else ""


def plain_summary(cls: type) -> str:
    """The first sentence of ``cls``'s docstring as plain text (its name when it has none); a
    sentence that only points at the module docstring is replaced by that docstring's first one."""
    summary = _MODULE_POINTER.sub("", first_sentence(cls.__doc__ or ""))
    if "module docstring" in summary.lower():
        module = sys.modules.get(cls.__module__)
        summary = first_sentence(getattr(module, "__doc__", None) or "") or summary
    summary = plain_text(summary).rstrip(":")
    return summary or cls.__name__
