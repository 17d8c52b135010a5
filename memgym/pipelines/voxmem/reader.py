"""Rule-based reading of a written spoken history (:mod:`~memgym.memory.voxmem.history_lines`).

The offline ``structured`` reasoner hands a VoxMem-style history here: session blocks of
(possibly tagged) user lines, then a question. The reader

1. recognises the question's form (:data:`QUESTION_FORMS`: the VoxMem template phrasings of
   the 15 cells; other questions get ``None`` and the caller falls back to extractive reading)
   and takes its subjects, slot, cue word, sound name or options from it;
2. turns every session into a heard fact: whether its lines name the subject (content words
   of the user lines, fuzzily matched through recognition errors, and of the assistant's
   replies), the value stated (:func:`stated_value`; "still up in the air" / "not sure yet"
   state none), and the session's voice, asker flag, cue and background sound (majority over its user
   lines, the stating line breaking ties);
3. answers from those facts as the question asks: the value, cue or sound of the premise
   sessions (the asker's only for "how did I sound" and IE "when I told you" sound questions),
   counts, same/different, which is higher or more often, the latest / n-th / full sequence.

Untagged lines (the ``transcript`` memory) are read as the asker's, calm and without background
sound: what a text-only reader assumes. No premise session gives a refusal (:data:`REFUSAL`).
It reads only the messages it is given.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from memgym.memory.voxmem.history_lines import NO_SOUND, HeardSession

REFUSAL = "I cannot tell from our conversations."
YOU, OTHER = "you", "someone else"
NEUTRAL_CUE = "calm and neutral"
SEPARATOR = ", then "
ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3}
_WORD = re.compile(r"[a-z0-9']+")
_SUBJECT_STOP = frozenset({"the", "a", "an", "my", "our", "to", "of", "for", "from", "in", "on", "s", "new"})
_UNDECIDED = ("up in the air", "haven't settled", "have not settled", "not sure yet", "undecided", "not decided")
_VALUE = (
    re.compile(r"settled on (?P<v>.+?) as (?:the|a|our)\b"),
    re.compile(
        r".*\b(?:is now|changed to|going to be|should be|will be|is|be)\s+(?P<v>.+?)\s*(?:[.!?;]+(?=\s|$)|:\s|$)"
    ),
)
_TRAILING = re.compile(r"\s*\b(instead|then|now|please)\s*$")
_TOPIC = r"the (?P<slot>.+?) for (?P<s0>.+)"
QUESTION_FORMS: tuple[tuple[str, str], ...] = (
    ("speaker/IE/context_to_cue", r"was i the one who told you " + _TOPIC),
    ("paralinguistic/IE/context_to_cue", r"how did i sound when i told you " + _TOPIC),
    ("sound/IE/context_to_cue", r"what could be heard in the background when i told you " + _TOPIC),
    ("semantics/IE/context_to_cue", r"what (?P<slot>.+?) was given for (?P<s0>.+)"),
    ("semantics/IE/cue_to_fact", r"what (?P<slot>.+?) was settled for (?P<s0>.+)"),
    ("speaker/IE/cue_to_fact", r"what (?P<slot>.+?) did i tell you for (?P<s0>.+)"),
    ("paralinguistic/IE/cue_to_fact", r"when i sounded (?P<cue>.+?) telling you about (?P<s0>.+), what (?P<slot>.+) did i give"),
    ("sound/IE/cue_to_fact", r"when the sound of (?P<sound>.+?) could be heard in the background, what (?P<slot>.+?) did i give for (?P<s0>.+)"),
    ("semantics/MSR/counting", r"in how many of our conversations was an? (?P<slot>.+?) for (?P<s0>.+) given"),
    ("semantics/MSR/counting", r"in how many of our conversations did a (?P<slot>.+?) for (?P<s0>.+) come up"),  # earlier builds
    ("speaker/MSR/counting", r"how many different people told you an? (?P<slot>.+?) for (?P<s0>.+)"),
    ("paralinguistic/MSR/counting", r"in how many of our conversations about (?P<s0>.+) did i sound (?P<cue>.+)"),
    ("sound/MSR/counting", r"in how many of our conversations about (?P<s0>.+) could the sound of (?P<sound>.+) be heard"),
    ("semantics/MSR/matching", r"was the (?P<slot>.+?) for (?P<s0>.+) the same as the (?P=slot) for (?P<s1>.+)"),
    ("speaker/MSR/matching", r"was it the same person who told you the (?P<slot>.+?) for (?P<s0>.+) and the (?P=slot) for (?P<s1>.+)"),
    ("paralinguistic/MSR/matching", r"did i sound the same way when i told you about (?P<s0>.+) as when i told you about (?P<s1>.+)"),
    ("sound/MSR/matching", r"could the same sound be heard in the background when we talked about (?P<s0>.+) and about (?P<s1>.+)"),
    ("semantics/MSR/comparing", r"which had the (?P<higher>later in the week|less frequent|higher|longer|later|lower|shorter|earlier|more frequent) (?P<slot>.+?): (?P<s0>.+) or (?P<s1>.+)"),
    ("speaker/MSR/comparing", r"which did i talk to you about in more of our conversations: (?P<s0>.+) or (?P<s1>.+)"),
    ("paralinguistic/MSR/comparing", r"when i told you about (?P<s0>.+) and about (?P<s1>.+), in which case did i speak faster"),
    ("sound/MSR/comparing", r"when we talked about (?P<s0>.+), which could be heard more often in the background: (?P<o0>.+) or (?P<o1>.+)"),
    ("semantics/TET/latest", r"what is the latest (?P<slot>.+?) for (?P<s0>.+)"),
    ("semantics/TET/at_point", r"what was " + _TOPIC + r" the (?P<nth>\w+) time it came up"),
    ("semantics/TET/full_sequence", r"in order, what was " + _TOPIC + r" each time it came up"),
    ("speaker/TET/latest", r"the last time someone told you " + _TOPIC + r", was it me or someone else"),
    ("speaker/TET/at_point", r"the (?P<nth>\w+) time " + _TOPIC + r" came up, was it me or someone else telling you"),
    ("speaker/TET/full_sequence", r"in order, each time " + _TOPIC + r" came up, was it me or someone else telling you"),
    ("paralinguistic/TET/latest", r"how did i sound the last time i told you " + _TOPIC),
    ("paralinguistic/TET/at_point", r"how did i sound the (?P<nth>\w+) time i told you " + _TOPIC),
    ("paralinguistic/TET/full_sequence", r"in order, how did i sound each time i told you " + _TOPIC),
    ("sound/TET/latest", r"what could be heard in the background the last time " + _TOPIC + r" came up"),
    ("sound/TET/at_point", r"what could be heard in the background the (?P<nth>\w+) time " + _TOPIC + r" came up"),
    ("sound/TET/full_sequence", r"in order, what could be heard in the background each time " + _TOPIC + r" came up"),
)  # fmt: skip
"""``evidence/operation/subtype`` -> the question's phrasing (lower case, no final "?")."""
_FORMS = [(name, re.compile(f"^{pattern}$")) for name, pattern in QUESTION_FORMS]


@dataclasses.dataclass(frozen=True)
class Question:
    """A recognised question: its form and the phrases it names (lower case)."""

    evidence: str
    operation: str
    subtype: str
    fields: dict[str, str]

    def subjects(self) -> list[str]:
        return [self.fields[k] for k in ("s0", "s1") if k in self.fields]


def parse_question(text: str) -> Question | None:
    """The :class:`Question` of ``text``, None when it has none of the :data:`QUESTION_FORMS`."""
    plain = " ".join(text.lower().strip().rstrip("?.!").split())
    for name, pattern in _FORMS:
        match = pattern.match(plain)
        if match:
            evidence, operation, subtype = name.split("/")
            return Question(evidence, operation, subtype, {k: v.strip() for k, v in match.groupdict().items()})
    return None


@dataclasses.dataclass(frozen=True)
class HeardFact:
    """What one session says about one subject, as heard: value ("" = none stated) and its tags."""

    value: str
    voice: str
    asker: bool
    cue: str
    sound: str


# ----- matching words through recognition errors ----------------------------------------------------
def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("'s", ""))


def _similar(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 4 and SequenceMatcher(None, a, b).ratio() >= 0.75)


def coverage(phrase: str, text: str, exact_text: str = "") -> float:
    """Share of ``phrase``'s content words found among ``text``'s words (fuzzily: recognised
    speech) or ``exact_text``'s (verbatim: written text)."""
    wanted = [w for w in _words(phrase) if w not in _SUBJECT_STOP] or _words(phrase)
    have, exact = set(_words(text)), set(_words(exact_text))
    return sum(w in exact or any(_similar(w, h) for h in have) for w in wanted) / max(len(wanted), 1)


def _needed(phrase: str) -> float:
    n = len([w for w in _words(phrase) if w not in _SUBJECT_STOP]) or 1
    return 1.0 if n <= 2 else (n - 1) / n


def stated_value(line: str) -> str | None:
    """The value a statement line gives (lower case), "" for an undecided statement, None when none.

    The phrase after a copula ("is", "is now", "should be", "changed to", "settled on X as");
    failing that (a recogniser may drop the copula), the first number phrase: a run of digits or
    number words with the word after it ("five thousand miles"), or a day of the week.
    """
    text = " ".join(line.lower().split())
    if any(phrase in text for phrase in _UNDECIDED):
        return ""
    for pattern in _VALUE:
        match = pattern.search(text)
        if match:
            value = _TRAILING.sub("", match["v"].strip(" ,")).strip(" ,")
            return value or None
    return number_phrase(text)


def number_phrase(text: str) -> str | None:
    """The first run of digits or number words in ``text`` and the word after it, or a weekday."""
    tokens = re.findall(r"[a-z0-9$][a-z0-9,:$']*", text.lower())
    for k, token in enumerate(tokens):
        if token in _DAYS:
            return token
        if token.strip("$").replace(",", "").replace(":", "").isdigit() or token in _NUMBER_WORDS:
            end = k
            while end + 1 < len(tokens) and (tokens[end + 1] in _NUMBER_WORDS or tokens[end + 1].isdigit()):
                end += 1
            unit = tokens[end + 1 : end + 2]
            return " ".join(tokens[k : end + 1] + [u for u in unit if u.isalpha() and u not in _SUBJECT_STOP])
    return None


def _majority(values: Sequence[str], prefer: str) -> str:
    counts = Counter(values)
    top = max(counts.values())
    return prefer if counts[prefer] == top else next(v for v in values if counts[v] == top)


def heard_fact(session: HeardSession, subject: str, slot: str) -> HeardFact | None:
    """The session's :class:`HeardFact` about ``subject`` (None when the session does not name it).

    A session names the subject when its user lines and assistant replies (text, not recognised
    speech) hold the subject's content words (all of them for one or two words, all but one for
    more), or as many of those that are not also slot words together with half of the slot's
    words ("guitar" of "the guitar practice" beside "practice minutes"). One fuzzily heard word of
    a two-word subject is not enough: "thinking" sounds like "training", but a session about
    the fish tank does not name the puppy training.
    """
    users = session.users
    if not users or not _names_subject(session, subject, slot):
        return None
    stated = [(line, value) for line in users for value in [stated_value(line.words)] if value is not None]
    # the last line stating an amount, time or day; else the last line stating anything
    stated.sort(key=lambda pair: pair[1] == "" or magnitude(pair[1]) is not None)
    stating, value = stated[-1] if stated else (None, "")
    anchor = stating or users[0]
    if not anchor.tagged:
        return HeardFact(value, "", True, NEUTRAL_CUE, "")
    voice = _majority([u.voice for u in users], anchor.voice)
    return HeardFact(
        value=value,
        voice=voice,
        asker=any(u.asker for u in users if u.voice == voice),
        cue=_majority([u.cue for u in users], anchor.cue),
        sound=_majority([u.sound for u in users], anchor.sound),
    )


def _names_subject(session: HeardSession, subject: str, slot: str) -> bool:
    """Whether the session names ``subject`` (see :func:`heard_fact`): its content words, or its
    own words beside half of the ``slot``'s."""
    said, written = " ".join(u.words for u in session.users), " ".join(session.assistant)
    own = " ".join(w for w in _words(subject) if w not in _words(slot))
    partly = bool(own) and coverage(own, said, written) >= _needed(own) and bool(slot) and coverage(slot, said) >= 0.5
    return partly or coverage(subject, said, written) >= _needed(subject)


# ----- comparing values --------------------------------------------------------------------------------
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "a": 1, "an": 1,
    "once": 1, "twice": 2, "half": 0.5, "noon": 12,
}  # fmt: skip
_ORDINAL_UNITS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                  "eighth": 8, "ninth": 9, "tenth": 10, "fifteenth": 15, "twentieth": 20, "thirtieth": 30}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORDS = (frozenset(_UNITS) - {"a", "an", "half"}) | frozenset(_SCALES)
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def magnitude(value: str) -> float | None:
    """A number to compare ``value`` by: amounts (minutes for durations), days of the week, clock
    times in hours ("six thirty" = 6.5, "three in the afternoon" = 15), intervals in days ("every
    two days" = 2, "twice a week" = 3.5); None when it names no number."""
    tokens = _words(value.replace(",", ""))
    for day, name in enumerate(_DAYS):
        if name in tokens:
            return float(day)
    total, numbers = _spoken_numbers(tokens)
    if total == 0 and not numbers:
        return 1.0 if "every" in tokens else None
    if total == 0 and len(numbers) >= 2 and numbers[0] <= 12 and numbers[1] >= 10:
        return numbers[0] + sum(numbers[1:]) / 60.0  # a clock time: "seven forty five"
    return _in_units(total + sum(numbers), tokens)


def _spoken_numbers(tokens: list[str]) -> tuple[float, list[float]]:
    """``(sum of the scaled runs, the numbers after the last scale)`` of ``tokens``: digits,
    number and ordinal words ("a"/"an" only first), "hundred"/"thousand" scaling what came before."""
    numbers: list[float] = []
    total = 0.0
    for k, token in enumerate(tokens):
        if token.isdigit():
            numbers.append(float(token))
        elif token in _ORDINAL_UNITS or (token in _UNITS and (token not in ("a", "an") or k == 0)):
            numbers.append(float(_UNITS.get(token, _ORDINAL_UNITS.get(token, 0))))
        elif token in _SCALES and numbers:
            total += sum(numbers) * _SCALES[token]
            numbers = []
    return total, numbers


def _in_units(number: float, tokens: list[str]) -> float:
    """``number`` in the units values are compared in: afternoon and evening hours past 12,
    durations in minutes, "a week" intervals in days."""
    if "afternoon" in tokens or "evening" in tokens:
        number += 12
    if "hour" in tokens or "hours" in tokens:
        number *= 60
    if "week" in tokens:
        number = 7.0 / max(number, 1e-9)
    return number


# ----- answering ---------------------------------------------------------------------------------------
def _pick(states: Sequence[str]) -> str:
    """The most frequent state, ties to the latest; :data:`REFUSAL` when there is none."""
    if not states:
        return REFUSAL
    counts = Counter(states)
    top = max(counts.values())
    return next(s for s in reversed(states) if counts[s] == top)


def _state(evidence: str, fact: HeardFact) -> str:
    if evidence == "semantics":
        return fact.value
    if evidence == "speaker":
        return YOU if fact.asker else OTHER
    if evidence == "paralinguistic":
        return fact.cue
    return fact.sound or NO_SOUND


def _same(a: str, b: str) -> bool:
    return coverage(a, b) >= 0.99 and coverage(b, a) >= 0.99


def _argmax(options: Sequence[str], scores: Sequence[float]) -> str:
    best = max(scores)
    return options[list(scores).index(best)]


def answer(question: Question, sessions: Sequence[HeardSession]) -> str:
    """The reply to ``question`` from ``sessions`` (module docstring)."""
    q = question
    asker_only = q.evidence == "paralinguistic" or (q.operation == "IE" and q.evidence == "sound")
    slot = q.fields.get("slot", "")

    def premise(subject: str) -> list[HeardFact]:
        facts = [heard_fact(s, subject, slot) for s in sessions]
        return [x for x in facts if x is not None and x.value and (x.asker or not asker_only)]

    hits = premise(q.fields["s0"])
    if q.operation == "IE" and q.subtype in ("context_to_cue", "cue_to_fact"):
        return _answer_ie(q, hits)
    if q.operation == "TET":
        return _answer_tet(q, hits)
    if q.subtype == "counting":
        return _answer_counting(q, hits)
    return _answer_pair(q, [hits] + [premise(s) for s in q.subjects()[1:]])


def _answer_ie(q: Question, hits: list[HeardFact]) -> str:
    f = q.fields
    if q.subtype == "context_to_cue":
        if q.evidence == "speaker":
            return _pick(["yes" if x.asker else "no" for x in hits])
        return _pick([_state(q.evidence, x) for x in hits])
    keep: Callable[[HeardFact], bool] = {
        "semantics": lambda x: True,  # the one session stating a value for the subject
        "speaker": lambda x: x.asker,
        "paralinguistic": lambda x: _same(x.cue, f.get("cue", "")),
        "sound": lambda x: _same(x.sound, f.get("sound", "")),
    }[q.evidence]
    return _pick([x.value for x in hits if keep(x)])


def _answer_tet(q: Question, hits: list[HeardFact]) -> str:
    states = [_state(q.evidence, x) for x in hits]
    if not states:
        return REFUSAL
    if q.subtype == "latest":
        return states[-1]
    if q.subtype == "at_point":
        point = ORDINALS.get(q.fields.get("nth", ""), 0)
        return states[point] if point < len(states) else REFUSAL
    return SEPARATOR.join(states)


def _answer_counting(q: Question, hits: list[HeardFact]) -> str:
    if not hits:
        return REFUSAL
    if q.evidence == "semantics":
        return str(len(hits))
    if q.evidence == "speaker":
        return str(len({x.voice if x.voice else x.asker for x in hits}))
    if q.evidence == "paralinguistic":
        return str(sum(_same(x.cue, q.fields["cue"]) for x in hits))
    return str(sum(_same(x.sound, q.fields["sound"]) for x in hits))


def _answer_pair(q: Question, per_subject: list[list[HeardFact]]) -> str:
    """MSR matching and comparing, from the premise facts of each subject the question names."""
    if q.evidence == "sound" and q.subtype == "comparing":
        return _compare_sounds(q, per_subject[0])
    if any(not facts for facts in per_subject):
        return REFUSAL
    if q.subtype == "matching":
        return _match(q, per_subject)
    return _COMPARISONS.get(q.evidence, _compare_values)(q, per_subject)


def _compare_sounds(q: Question, hits: list[HeardFact]) -> str:
    """Which of the two offered sounds the facts heard name more often."""
    options = [q.fields["o0"], q.fields["o1"]]
    return _argmax(options, [sum(_same(x.sound, o) for x in hits) for o in options]) if hits else REFUSAL


def _match(q: Question, per_subject: list[list[HeardFact]]) -> str:
    """``yes`` when the two subjects share the attribute the question asks about (the voice, or
    the state of its evidence), else ``no``."""
    key = (lambda x: x.voice or "asker") if q.evidence == "speaker" else (lambda x: _state(q.evidence, x))
    first, second = (_pick([key(x) for x in facts]) for facts in per_subject)
    return "yes" if _same(first, second) else "no"


def _compare_speakers(q: Question, per_subject: list[list[HeardFact]]) -> str:
    """The subject the person asking now said more about (refusal when neither)."""
    mine = [sum(x.asker for x in facts) for facts in per_subject]
    return _argmax(q.subjects(), mine) if any(mine) else REFUSAL


def _compare_speeds(q: Question, per_subject: list[list[HeardFact]]) -> str:
    """The subject said faster (slow < neither < fast)."""
    speed = {"slow": 0, "fast": 2}
    return _argmax(q.subjects(), [speed.get(_pick([x.cue for x in facts]), 1) for facts in per_subject])


def _compare_values(q: Question, per_subject: list[list[HeardFact]]) -> str:
    """The subject with the larger stated magnitude (the smaller when the question asks for the
    lower, shorter, earlier or more frequent one); refusal when one is unknown or they are equal."""
    sizes = [magnitude(_pick([x.value for x in facts])) for facts in per_subject]
    if any(size is None for size in sizes) or sizes[0] == sizes[1]:
        return REFUSAL
    sign = -1.0 if q.fields.get("higher") in ("lower", "shorter", "earlier", "more frequent") else 1.0
    return _argmax(q.subjects(), [sign * size for size in sizes])


_COMPARISONS = {"speaker": _compare_speakers, "paralinguistic": _compare_speeds}
"""Evidence -> how two subjects are compared on it (stated values otherwise)."""
