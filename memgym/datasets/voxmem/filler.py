"""Filler sessions: ordinary instruction-following dialogues unrelated to any question.

* :class:`GeneratedFillerCorpus` (default, offline): requests drawn from a bank of everyday
  tasks and phrasings, answered with two steps (12,000 distinct dialogues: 40 tasks x 5 phrasings x
  with/without a follow-up x 30 ordered step pairs); deterministic per index.
* :class:`InstructS2SCorpus`: a local copy of InstructS2S(-200K) or any ShareGPT-style JSON /
  JSONL file or folder of them; each record has ``"conversation"`` or ``"conversations"``: a list
  of ``{"from": "human"|"gpt", "value": ...}`` (or ``{"role": "user"|"assistant", "content"}``)
  turns. Turns are trimmed to VoxMem session lengths (user turns to
  :data:`MAX_USER_WORDS` words, assistant turns to :data:`MAX_ASSISTANT_WORDS`).

Both yield ``(user_texts, assistant_texts, source_name)`` by index.
"""

from __future__ import annotations

import abc
import itertools
import json
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.textfiles import read_text

MAX_USER_WORDS = 60
"""User turns longer than this are cut (keeps spoken turns well under 30 s)."""
MAX_ASSISTANT_WORDS = 80

_TASKS = (
    "fold a fitted sheet",
    "remove a coffee stain from a shirt",
    "write a polite email declining an invitation",
    "boil an egg so the yolk stays soft",
    "start a compost bin on a balcony",
    "improve my handwriting",
    "memorize a short poem",
    "choose a good watermelon",
    "clean a computer keyboard",
    "tie a bowline knot",
    "organize a messy closet",
    "make a paper airplane that flies far",
    "prepare for a job interview",
    "keep houseplants alive in winter",
    "learn to juggle three balls",
    "sharpen a kitchen knife",
    "write a short thank you note",
    "fall asleep faster",
    "plan a picnic menu",
    "back up photos from my phone",
    "explain photosynthesis to a child",
    "make cold brew coffee",
    "stretch after sitting all day",
    "iron a dress shirt",
    "start journaling",
    "choose a name for a goldfish",
    "make a simple budget spreadsheet",
    "reduce screen time in the evening",
    "pack a suitcase efficiently",
    "clean a cast iron pan",
    "write a haiku about autumn",
    "learn the basics of chess",
    "make homemade lemonade",
    "remember people's names",
    "set up a reading nook",
    "descale a kettle",
    "practice mindful breathing",
    "draw a simple cartoon cat",
    "prepare a short toast for a friend",
    "keep a sourdough starter alive",
)
_ASKS = (
    "How do I {task}?",
    "Can you tell me how to {task}?",
    "What's the easiest way to {task}?",
    "I'd like to {task}. Where should I start?",
    "Could you give me a few tips to {task}?",
)
_STEPS = (
    "Start by gathering what you need and giving yourself a few quiet minutes.",
    "Take it one small step at a time and check your progress as you go.",
    "Keep it simple at first, then refine once the basics feel natural.",
    "Set a short, regular routine so the habit sticks.",
    "Look at a quick example first so you know what the result should look like.",
    "Finish by tidying up and noting what you would do differently next time.",
)
_STEP_PAIRS = tuple(itertools.permutations(range(len(_STEPS)), 2))
_FOLLOWUPS = (
    "That makes sense. Anything I should avoid?",
    "Great, how long does that usually take?",
    "Thanks. Is there a common mistake people make?",
    "Okay, and what if it doesn't work the first time?",
)
_FOLLOWUP_ANSWERS = (
    "The most common mistake is rushing; going slowly usually gives a better result.",
    "It usually takes a little practice, so don't worry if the first try is rough.",
    "If it doesn't work, repeat the last step and adjust one thing at a time.",
)


class FillerCorpus(abc.ABC):
    """Indexable source of filler dialogues."""

    name = "filler"

    @abc.abstractmethod
    def __len__(self) -> int:
        """Number of dialogues."""

    @abc.abstractmethod
    def dialogue(self, index: int) -> tuple[list[str], list[str]]:
        """``(user_texts, assistant_texts)`` of filler ``index`` (same lengths)."""


class GeneratedFillerCorpus(FillerCorpus):
    """The embedded generated corpus (see module docstring)."""

    name = "generated"

    def __len__(self) -> int:
        return len(_TASKS) * len(_ASKS) * 2 * len(_STEP_PAIRS)  # task x phrasing x follow-up x steps

    def dialogue(self, index: int) -> tuple[list[str], list[str]]:
        index %= len(self)
        rng = np.random.default_rng([7, index])
        task = _TASKS[index % len(_TASKS)]
        ask = _ASKS[(index // len(_TASKS)) % len(_ASKS)]
        first, second = _STEP_PAIRS[index // (len(_TASKS) * len(_ASKS) * 2)]
        user = [ask.format(task=task)]
        assistant = [f"Here is a simple way to {task}. {_STEPS[first]} {_STEPS[second]}"]
        if (index // (len(_TASKS) * len(_ASKS))) % 2 == 1:
            user.append(str(rng.choice(_FOLLOWUPS)))
            assistant.append(str(rng.choice(_FOLLOWUP_ANSWERS)))
        return user, assistant


class InstructS2SCorpus(FillerCorpus):
    """Dialogues from a local InstructS2S / ShareGPT-style JSON(L) file or folder.

    Raises:
        MemgymError: the path is missing, holds no JSON/JSONL, or no record has usable turns.
    """

    name = "instructs2s"

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.exists():
            raise MemgymError(f"filler_path {path} does not exist; expected an InstructS2S JSON/JSONL file or folder")
        files = sorted(path.rglob("*.json*")) if path.is_dir() else [path]
        self._dialogues: list[tuple[list[str], list[str]]] = []
        for file in files:
            for record in _records(file):
                dialogue = _parse(record)
                if dialogue is not None:
                    self._dialogues.append(dialogue)
        if not self._dialogues:
            raise MemgymError(f"filler.path {path}: no record with 'conversation(s)' user/assistant turns found")

    def __len__(self) -> int:
        return len(self._dialogues)

    def dialogue(self, index: int) -> tuple[list[str], list[str]]:
        return self._dialogues[index % len(self._dialogues)]


def _records(file: Path):
    text = read_text(file)
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
        yield from items
        return
    except json.JSONDecodeError:
        pass
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise MemgymError(f"{file}:{number}: not valid JSON ({exc.msg})") from None


def _parse(record) -> tuple[list[str], list[str]] | None:
    if not isinstance(record, dict):
        return None
    turns = record.get("conversation") or record.get("conversations")
    if not isinstance(turns, list):
        return None
    user, assistant = [], []
    for turn in turns:
        if not isinstance(turn, dict):
            continue
        who = str(turn.get("from", turn.get("role", ""))).lower()
        text = str(turn.get("value", turn.get("content", ""))).strip()
        if not text:
            continue
        if who in ("human", "user") and len(user) == len(assistant):
            user.append(_trim(text, MAX_USER_WORDS))
        elif who in ("gpt", "assistant") and len(assistant) == len(user) - 1:
            assistant.append(_trim(text, MAX_ASSISTANT_WORDS))
        if len(assistant) == 2:
            break
    user = user[: len(assistant)]
    return (user, assistant) if user else None


def _trim(text: str, max_words: int) -> str:
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]).rstrip(",;:") + "."
