"""The written form of a spoken history that text LMs read: tagged user lines and session blocks.

A user turn becomes one line, optionally opened by the acoustic tags the cascade heard::

    [voice B, the person asking now | hesitant | background: rain] I think Monday works.

(:func:`tag_line` writes it, :func:`parse_tag_line` reads it back). A history is a text of
session blocks separated by blank lines, each opening with ``Session <k> - <YYYY-MM-DD HH:MM>``
and holding ``User: ...`` / ``Assistant: ...`` lines, followed by ``Question: ...``
(:func:`parse_history` reads it). The memories of ``memgym/memory/voxmem`` write this layout;
readers of it (the offline ``structured`` reasoner) parse it here, so the format has one home.
"""

from __future__ import annotations

import dataclasses
import re

ASKER_MARK = ", the person asking now"
NO_SOUND = "no background sound"
_TAGS = re.compile(r"^\[voice (?P<voice>[^,|\]]+)(?P<asker>" + re.escape(ASKER_MARK) + r")? \| (?P<cue>[^|\]]+) \| "
                   r"(?:background: (?P<sound>[^|\]]+)|" + NO_SOUND + r")\] ?(?P<words>.*)$")  # fmt: skip
_HEADER = re.compile(r"^Session (\d+) - (.+)$")


def tag_line(words: str, speaker: str, asker: str, cue: str, sound: str) -> str:
    """One tagged user line: ``speaker`` label, ``asker`` label (marks the asker), cue word, sound class."""
    voice = f"voice {speaker}" + (ASKER_MARK if speaker == asker else "")
    background = f"background: {sound.replace('_', ' ')}" if sound else NO_SOUND
    return f"[{voice} | {cue} | {background}] {words}"


@dataclasses.dataclass(frozen=True)
class HeardLine:
    """One user line as written: its words and, when tagged, voice label, asker flag, cue and sound.

    ``voice`` is "" for an untagged line; ``sound`` is "" when no background sound was tagged.
    """

    words: str
    voice: str = ""
    asker: bool = False
    cue: str = ""
    sound: str = ""

    @property
    def tagged(self) -> bool:
        return bool(self.voice)


def parse_tag_line(line: str) -> HeardLine:
    """The :class:`HeardLine` of a user line's text (after ``User: ``); untagged text is all words."""
    match = _TAGS.match(line.strip())
    if match is None:
        return HeardLine(words=line.strip())
    return HeardLine(
        words=match["words"].strip(),
        voice=match["voice"].strip(),
        asker=bool(match["asker"]),
        cue=match["cue"].strip(),
        sound=(match["sound"] or "").strip(),
    )


@dataclasses.dataclass(frozen=True)
class HeardSession:
    """One session block: its number (1-based, as written), start time, user and assistant lines."""

    number: int
    timestamp: str
    users: tuple[HeardLine, ...]
    assistant: tuple[str, ...]


def parse_history(text: str) -> tuple[list[HeardSession], str] | None:
    """``(sessions, question)`` of a history text (module docstring); None when ``text`` is not one."""
    lines = text.strip().splitlines()
    if not lines or not lines[-1].startswith("Question: "):
        return None
    question = lines[-1][len("Question: ") :].strip()
    sessions: list[HeardSession] = []
    header: tuple[int, str] | None = None
    users: list[HeardLine] = []
    assistant: list[str] = []
    for line in lines[:-1] + ["Session 0 - end"]:
        match = _HEADER.match(line)
        if match:
            if header is not None:
                sessions.append(HeardSession(header[0], header[1], tuple(users), tuple(assistant)))
            header, users, assistant = (int(match[1]), match[2]), [], []
        elif header is not None and line.startswith("User: "):
            users.append(parse_tag_line(line[len("User: ") :]))
        elif header is not None and line.startswith("Assistant: "):
            assistant.append(line[len("Assistant: ") :])
    if not sessions and "(no conversations)" not in text:
        return None
    return sessions, question
