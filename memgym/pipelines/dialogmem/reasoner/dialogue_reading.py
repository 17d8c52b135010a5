"""Reading what residents said about objects: ``"Speaker: utterance"`` lines -> facts.

The structured reasoner reads a transcript (appended dialogue, or the lines linked to a memory
entry) into :class:`Statement` s, without the dataset's templates: each sentence that names a
known category (or follows one in the same utterance: ``it``) is read for the four social
relations below, and a sentence stating none of them for what the object looks like or how it was
come across (colour, material, size, room, what it is on or near, how often, in which order and on
the way to what it was seen: :mod:`~memgym.pipelines.dialogmem.reasoner.observation_reading`). The social relations:

* **alias** -- a naming verb (``call``, ``named``, ``nickname``, ``known as``, ``goes by``, ``refer
  to ... as``); the value follows ``as`` / ``nickname`` / ``by`` / the named object (``we call the
  bed the throne``);
* **significance** -- a sentiment word (``special``, ``means a lot``, ``dear``, ``precious``, ...)
  or a reason (``because it was``) with ``was``; the value follows the last ``was``;
* **owner** -- a person's name (a speaker of the transcript, or a capitalised word inside a
  sentence) with an ownership word (``owns``, ``belongs``, ``Name's``, ``taken over``, ``handed``);
* **usage** -- ``for <activity>`` with a use word (``use``, ``for``), or ``where we do <activity>``.

A name or activity after ``not`` / ``from`` / ``instead of`` / ``rather than``, before ``any more``,
after ``used to be``, or given away (``X handed it to Y``) is the *previous* value, as is one denied
(``isn't Ben's``) in a sentence that names no new one, which then carries to the next statement of
the utterance (``... isn't Ben's. It's Carla's.``); change words
(``now``, ``actually``, ``correction``, ``mistake``, ``these days``, ...) mark an update or a
correction. :func:`fold_chains` joins statements into chains: a change continues the chain of its
category and key whose latest value is the previous one (else the latest such chain); the latest
statement of a chain wins.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from memgym.backends.request_reading import find_spans, tokens
from memgym.pipelines.dialogmem.reasoner.observation_reading import observation

SPEAKER_LINE = re.compile(r"^([A-Z][A-Za-z'\-]*(?: [A-Z][A-Za-z'\-]*){0,2}): (\S.*)$")
"""A transcript line: ``"Speaker: utterance"`` (a capitalised name of one to three words)."""
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_RAW_WORD = re.compile(r"[A-Za-z0-9]+")
_BOUNDARY = re.compile(r"[,;.!?]| not | instead | rather than | any ?more| now\b| so | because | and ")

SOCIAL_KEYS = frozenset(["alias", "significance", "owner", "usage"])
"""The keys of the social relations (the others a sentence may state are perceptual or episodic)."""
NAMING = ("called", "nickname", "nicknamed", "known as", "refer to", "refers to", "name is", "goes by", "go by")
"""Naming words; the verbs of :data:`CALLING` count only before the object (``we call the bed ...``)."""
CALLING = ("call", "calls", "named", "dubbed")
"""Naming verbs followed by the object and then its name (``the kids named the bed the throne``)."""
_CALL_OBJECT = frozenset(["the", "that", "this", "our", "my", "your", "it"])
SENTIMENT = (
    "special", "means a lot", "dear", "precious", "sentimental", "treasure", "meaningful", "story",
    "because it was", "since it was",
)  # fmt: skip
OWNING = ("owns", "owned", "own", "belongs", "belong", "belonging", "owner", "taken over", "handed", "gave", "given")
TRANSFER = frozenset(["handed", "gave", "given", "passed", "transferred"])
USING = ("use", "used", "uses", "using", "for")
CHANGE = frozenset(
    [
        "now",
        "actually",
        "correction",
        "correct",
        "wrong",
        "mistake",
        "misspoke",
        "instead",
        "rather",
        "anymore",
        "longer",
        "stopped",
        "lately",
        "days",
        "taken",
        "handed",
        "gave",
        "scratch",
        "oops",
        "sorry",
    ]
)
"""Words that mark an update or a correction."""
_PREVIOUS_BEFORE = frozenset(["not", "from", "than", "be", "isn", "stopped", "longer"])
_DENIED = frozenset(["isn", "wasn", "aren", "doesn"])
"""Negated verbs before ``t`` that deny the name after them (``isn't Ben's``)."""
_DOING = re.compile(r"\bwhere (?:we|they|you|i|people|everyone) (?:do|have)\b", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Statement:
    """One fact said about an object of ``category`` (``index``: the line it was said in)."""

    category: str
    key: str
    value: str
    previous: str = ""
    change: bool = False
    index: int = 0


def transcript(lines: Iterable[str]) -> list[tuple[str, str]]:
    """``(speaker, utterance)`` of every transcript line among ``lines``."""
    found = []
    for line in lines:
        match = SPEAKER_LINE.match(line.strip())
        if match and match.group(1) not in ("FACT", "Memory", "Question", "Remark"):
            found.append((match.group(1), match.group(2)))
    return found


def read_statements(
    utterances: Sequence[str], categories: Iterable[str], names: Iterable[str] = (), default: str = ""
) -> list[Statement]:
    """The statements of ``utterances`` about objects of ``categories`` (see the module docstring);
    ``names`` are known person names (the speakers); ``default`` is the category of sentences
    before any is named (lines linked to an object of that category)."""
    vocabulary = sorted({c for c in categories if tokens(c)}, key=lambda c: -len(tokens(c)))
    known = {n.lower() for n in names}
    statements = []
    for index, text in enumerate(utterances):
        category, denied = default, None
        for sentence in _SENTENCE.findall(text):
            category = _category(sentence, vocabulary) or category
            if not category:
                continue
            statement = _statement(sentence, category, known) or _observed(sentence, category, vocabulary)
            if statement is None:
                continue
            if not statement.value:  # a denial alone: its value is the next statement's previous
                denied = statement
                continue
            if (
                denied
                and (denied.category, denied.key) == (statement.category, statement.key)
                and not statement.previous
            ):
                statement = dataclasses.replace(statement, previous=denied.previous, change=True)
            denied = None
            statements.append(dataclasses.replace(statement, index=index))
    return statements


def _category(sentence: str, vocabulary: Sequence[str]) -> str:
    words = tokens(sentence)
    hits = [(find_spans(words, tokens(c))[0][0], c) for c in vocabulary if find_spans(words, tokens(c))]
    return min(hits, key=lambda h: (h[0], -len(tokens(h[1]))))[1] if hits else ""


def _has(words: list[str], phrases: Iterable[str]) -> bool:
    return any(find_spans(words, tokens(p)) for p in phrases)


def _statement(sentence: str, category: str, names: set[str]) -> Statement | None:
    words = tokens(sentence)
    change = bool(CHANGE.intersection(words)) or _has(words, ("used to", "these days", "no longer"))
    if _has(words, NAMING) or _calls_object(words, category):
        value = _alias_value(sentence, category)
        return Statement(category, "alias", value, change=change) if value else None
    if _has(words, SENTIMENT) and "was" in words:
        value = _after(sentence, r"\bwas\b", last=True)
        return Statement(category, "significance", value, change=change) if value else None
    people = _names(sentence, names)
    if people and (_has(words, OWNING) or re.search(r"[A-Za-z]['\u2019]s\b", sentence)):
        new, old = _split_owner(sentence, people)
        return Statement(category, "owner", new, old, change or bool(old)) if new or old else None
    if "for" in words and _has(words, USING):
        new, old = _split_usage(sentence)
        return Statement(category, "usage", new, old, change or bool(old)) if new else None
    if _DOING.search(sentence):
        value = _after(sentence, _DOING.pattern)
        return Statement(category, "usage", value, change=change) if value else None
    return None


def _observed(sentence: str, category: str, vocabulary: Sequence[str]) -> Statement | None:
    """The perceptual or episodic statement of a sentence that states no social fact
    (:func:`~memgym.pipelines.dialogmem.reasoner.observation_reading.observation`), or None."""
    found = observation(sentence, category, vocabulary)
    return Statement(category, *found) if found else None


def _calls_object(words: list[str], category: str) -> bool:
    """Whether a :data:`CALLING` verb is followed by the object (``we call the bed``, ``calls it``)."""
    named = tokens(category)
    for i, word in enumerate(words):
        if word in CALLING:
            rest = words[i + 1 :]
            while rest and rest[0] in _CALL_OBJECT - {"it"}:
                rest = rest[1:]
            if rest[: len(named)] == named or words[i + 1 : i + 2] == ["it"]:
                return True
    return False


def _after(text: str, pattern: str, last: bool = False) -> str:
    """The words after ``pattern`` up to the next boundary (the last match when ``last``)."""
    matches = list(re.finditer(pattern, text, flags=re.IGNORECASE))
    if not matches:
        return ""
    rest = text[(matches[-1] if last else matches[0]).end() :]
    cut = _BOUNDARY.search(rest.lower() + ".")
    return " ".join(rest[: cut.start() if cut else len(rest)].split()).strip(" :")


def _alias_value(sentence: str, category: str) -> str:
    lower = sentence.lower()
    for pattern in (
        r"\bknown as\b", r"\bas\b", r"\bnickname(?:d|s)?\b(?:\s*(?:is|:))?", r"\bcalled\b", r"\bgo(?:es)? by\b",
    ):  # fmt: skip
        if re.search(pattern, lower) and (pattern != r"\bas\b" or re.search(r"\brefers? to\b", lower)):
            value = _after(sentence, pattern)
            if value and value.lower() != "a":
                return value
    naming = re.search(r"\b(?:calls?|named|dubbed)\b", lower)
    if naming:
        rest = sentence[naming.end() :]
        at = rest.lower().find(category.lower())
        return _after(rest, re.escape(category)) if at >= 0 else _after(sentence, naming.re.pattern)
    return ""


def _names(sentence: str, known: set[str]) -> list[tuple[int, str]]:
    """``(token index, name)`` of the person names in ``sentence``."""
    raw = _RAW_WORD.findall(sentence)
    return [
        (i, word)
        for i, word in enumerate(raw)
        if word.lower() in known or (i > 0 and word[0].isupper() and word != "I" and len(word) > 1)
    ]


def _split_owner(sentence: str, people: list[tuple[int, str]]) -> tuple[str, str]:
    """(new owner, previous owner or "")."""
    words = [w.lower() for w in _RAW_WORD.findall(sentence)]
    old = [name for i, name in people if _marked_previous(words, i)]
    old += [name for i, name in people if i > 1 and words[i - 1] == "t" and words[i - 2] in _DENIED]
    if not old and len(people) > 1 and TRANSFER.intersection(words):
        old = _given_away_by(words, people)
    new = [name for _, name in people if name not in old]
    return (new[0] if new else ""), (old[0] if old else "")


def _marked_previous(words: list[str], i: int) -> bool:
    """Whether the name at word ``i`` is marked as a previous owner: after a word of
    :data:`_PREVIOUS_BEFORE`, or before "anymore"."""
    return (i > 0 and words[i - 1] in _PREVIOUS_BEFORE) or _before_anymore(words, i)


def _given_away_by(words: list[str], people: list[tuple[int, str]]) -> list[str]:
    """In a transfer between people, the first one not named after "to" (none when no one is)."""
    after_to = [name for i, name in people if i > 0 and words[i - 1] == "to"]
    return [name for _, name in people if name not in after_to][:1] if after_to else []


def _before_anymore(words: list[str], i: int) -> bool:
    following = words[i + 1 : i + 4]
    return "anymore" in following or ("any" in following and "more" in following)


def _split_usage(sentence: str) -> tuple[str, str]:
    """(new activity, previous activity or "") of the ``for ...`` phrases of a sentence."""
    new, old = "", ""
    lower = sentence.lower()
    for match in re.finditer(r"\bfor\b", lower):
        clause = re.split(r"[,;:]", lower[: match.start()])[-1]
        phrase = _after(sentence[match.start() :], r"\bfor\b")
        if not phrase:
            continue
        tail = lower[match.end() :].split(".")[0]
        previous = (
            set(tokens(clause)[-6:]) & {"not", "stopped", "isn", "longer", "than"}
            or "used to" in clause
            or re.match(rf"\s*{re.escape(phrase.lower())}\s+any ?more", tail)
        )
        if previous:
            old = old or phrase
        elif not new:
            new = phrase
    for pattern in (r"\binstead of\b", r"\brather than\b"):
        if not old and re.search(pattern, lower):
            old = _after(sentence, pattern)
    return new, old


def fold_chains(statements: Iterable[Statement]) -> list[list[Statement]]:
    """Statements grouped into chains (see the module docstring), in order of their first statement."""
    chains: list[list[Statement]] = []
    for statement in statements:
        same = [c for c in chains if c[-1].category == statement.category and c[-1].key == statement.key]
        target = None
        if statement.previous:
            target = next((c for c in reversed(same) if _same(c[-1].value, statement.previous)), None)
        if target is None and statement.change and same:
            target = same[-1]
        if target is None:
            chains.append([statement])
        else:
            target.append(statement)
    return chains


def _same(a: str, b: str) -> bool:
    return tokens(a) == tokens(b)
