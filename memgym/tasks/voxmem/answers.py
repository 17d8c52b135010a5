"""Reading a free-text reply to a VoxMem question: normalisation, the asserted answer, refusal.

A reply is split into clauses (sentences, then ``,`` / ``;`` / "but" / "however" ...). A clause
that contains a refusal expression ("I can't tell", "not mentioned", "I'm not sure", "no
information", "unanswerable", ...) asserts nothing; every other clause may assert an answer.
What counts as an answer depends on the question's answer kind:

===================  ======================================================  ==========================
kind                 asserted answer                                          example gold
===================  ======================================================  ==========================
``number``           the first number (digits, number words, once/twice)     ``"2"``
``yes_no``           the first yes/no polarity (or "the same"/"different")   ``"yes"``
``speaker``          "you" or "someone else" (another user/person, not you)  ``"someone else"``
``span``             the one candidate span mentioned (two or more: none)    ``"two thousand dollars"``
``choice``           the option of the first clause naming exactly one       ``"the kitchen renovation"``
``sequence``         the candidate spans mentioned, in order                 ``"hesitant, then slow"``
``speaker_sequence`` the speaker labels mentioned, in order                  ``"you, then someone else"``
===================  ======================================================  ==========================

A reply *refuses* when some clause refuses and no clause asserts an answer, so a hedge followed
by an answer ("I'm not sure, but I think it was Monday") is an answer, while "I can't tell
whether it was Monday or Tuesday" is a refusal. An empty reply is neither.

Spans are compared after :func:`normalize_tokens`: lower case, punctuation and hyphens become
spaces, articles go, a plural ``s`` is dropped, ``$2,000`` reads as ``2000 dollar``, number
words become digits (``"fifteen thousand"`` -> ``15000``, ``"twenty second"`` -> ``22nd``,
``"an hour"`` -> ``1 hour``), and cue words accept their common forms (``"hesitating"``,
``"laughed"``, ``"quickly"``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Literal

from memgym.tasks.voxmem.number_words import number_run

AnswerKind = Literal["number", "yes_no", "speaker", "span", "choice", "sequence", "speaker_sequence"]
KINDS: tuple[str, ...] = ("number", "yes_no", "speaker", "span", "choice", "sequence", "speaker_sequence")
ReplyClass = Literal["answer", "refusal", "empty"]

YOU = "you"
OTHER = "someone else"
SEQUENCE_SEPARATOR = ", then "
"""How the dataset writes a full-sequence gold answer (``"a, then b, then c"``)."""

# ----- numbers ---------------------------------------------------------------------------------------
_ORDINAL_DIGITS = re.compile(r"^(\d+)(st|nd|rd|th)$")
_COUNT_WORDS = {"once": 1, "twice": 2, "thrice": 3, "never": 0, "none": 0}
"""Words that answer a "how many" question without a number."""
_ONE_BEFORE = frozenset({"hour", "hundred", "thousand", "dozen", "week", "day", "minute", "month", "year", "session"})
"""``a`` / ``an`` before these reads as one (``"an hour"`` == ``"one hour"``)."""
_ARTICLES = frozenset({"a", "an", "the"})

# ----- cue words -------------------------------------------------------------------------------------
CUE_ALIASES: dict[str, tuple[str, ...]] = {
    "calm and neutral": ("neutral", "calm", "normal"),
    "hesitant": ("hesitating", "hesitation", "hesitantly", "hesitated", "unsure of yourself"),
    "surprised": ("surprise", "astonished", "amazed", "shocked"),
    "emphatic": ("emphasis", "emphasized", "emphasised", "emphatically", "stressed", "forceful"),
    "fast": ("quick", "quickly", "rapid", "rapidly", "faster", "hurried"),
    "slow": ("slowly", "slower", "drawn out"),
    "laughing": ("laughed", "laughter", "laugh", "amused", "giggling"),
}
"""Cue word (as questions and gold answers name it) -> other words a reply may use for it."""

# ----- refusals and speakers -------------------------------------------------------------------------
_REFUSAL = re.compile(
    r"\b(?:"
    r"(?:cannot|cant|can not|could not|couldnt|unable to|not able to|no way to|impossible to)"
    r"(?: \w+){0,3} (?:tell|say|determine|know|answer|find|recall|remember|identify|confirm|be sure|be certain"
    r"|figure|infer|work out|verify|distinguish|hear|be determined|see|locate)"
    r"|(?:dont|do not|didnt|did not|doesnt|does not|wasnt|was not|havent|have not|hasnt|has not)"
    r" (?:know|recall|remember|have|say|mention|mentioned|contain|include|seem|come up|hear|specify|specified"
    r"|tell|been told|find|said|stated|given|recorded)"
    r"|not (?:sure|certain|mentioned|specified|stated|clear|enough|possible|available|recorded|provided"
    r"|discussed|known|given|found|said|present|in (?:the|our|my))"
    r"|(?:no|insufficient|not enough|lack of|any) (?:information|info|record|records|mention|evidence|data"
    r"|indication|detail|details|idea|memory|context)"
    r"|unanswerable|unknown|unclear|uncertain|unsure|unspecified|undetermined|ambiguous"
    r"|never (?:told|mentioned|said|talked|discussed|brought|gave|stated|specified|came up)"
    r"|(?:history|conversations?|sessions?|records?) (?:do|does|did) not"
    r"|no (?:such|way of knowing)"
    r")\b"
)
_CLAUSE_SPLIT = re.compile(r"[.!?;:]+(?=\s|$)|\n+|,\s|\s(?:but|however|though|although|yet|whereas)\b", re.IGNORECASE)
_OTHER_MARKERS = (
    "someone else", "somebody else", "another user", "another person", "another speaker", "another one",
    "other user", "other person", "other speaker", "different person", "different user", "different speaker",
    "not you", "wasnt you", "was not you", "isnt you", "not yours", "other people", "not the same person",
)  # fmt: skip
_FILLER = frozenset(
    [
        "i",
        "im",
        "ive",
        "id",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "it",
        "itll",
        "that",
        "thats",
        "this",
        "there",
        "theres",
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "being",
        "think",
        "thought",
        "believe",
        "guess",
        "maybe",
        "perhaps",
        "probably",
        "possibly",
        "likely",
        "seem",
        "seemed",
        "sure",
        "sorry",
        "unfortunately",
        "well",
        "hmm",
        "um",
        "uh",
        "so",
        "just",
        "really",
        "actually",
        "honestly",
        "quite",
        "very",
        "exactly",
        "recall",
        "remember",
        "if",
        "based",
        "on",
        "from",
        "in",
        "of",
        "our",
        "we",
        "conversation",
        "session",
        "history",
        "record",
        "memory",
        "what",
        "which",
        "who",
        "when",
        "how",
        "information",
        "to",
        "and",
        "or",
        "can",
        "could",
        "would",
        "will",
        "say",
        "tell",
        "told",
        "know",
        "let",
        "see",
        "check",
        "okay",
        "ok",
        "oh",
        "yes",
        "no",
        "not",
        "any",
        "anything",
        "about",
        "answer",
        "question",
        "afraid",
        "apologize",
        "apologise",
        "regret",
        "mention",
        "mentioned",
    ]
)
"""Tokens (after :func:`normalize_tokens`) that carry no answer: hedges, politeness, discourse words."""
_YES = frozenset({"yes", "yeah", "yep", "yup", "correct", "indeed", "affirmative"})
_NO = frozenset({"no", "nope", "incorrect", "negative"})


def _plain(text: str) -> str:
    """Lower case, apostrophes removed (``don't`` -> ``dont``), ``$2,000`` -> ``2000 dollars``."""
    text = str(text).lower().replace("\u2019", "'").replace("'", "")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(
        r"\$\s?(\d+(?:\.\d+)?)(k\b)?", lambda m: m.group(1) + ("000" if m.group(2) else "") + " dollars", text
    )
    text = re.sub(r"\b(\d+)k\b", r"\g<1>000", text)
    return text


def _stem(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def normalize_tokens(text: str) -> list[str]:
    """The comparison tokens of ``text`` (see the module docstring)."""
    raw = re.sub(r"[^a-z0-9\s]", " ", _plain(text)).split()
    out: list[str] = []
    i = 0
    while i < len(raw):
        word = raw[i]
        if word in ("a", "an") and i + 1 < len(raw) and _stem(raw[i + 1]) in _ONE_BEFORE:
            out.append("1")
            i += 1
            continue
        if word in _ARTICLES:
            i += 1
            continue
        run = number_run(raw, i)
        if run is not None and not (word == "second" and run[1] == 1):
            out.append(run[0])
            i += run[1]
            continue
        match = _ORDINAL_DIGITS.match(word)
        out.append(f"{int(match.group(1))}{match.group(2)}" if match else _stem(word))
        i += 1
    return out


def normalize_span(text: str) -> str:
    """:func:`normalize_tokens` joined by spaces (``"The Kitchen-Renovation."`` -> ``"kitchen renovation"``)."""
    return " ".join(normalize_tokens(text))


def clauses(reply: str) -> list[str]:
    """The reply split into clauses (sentences, then commas, semicolons and contrastive words)."""
    return [c.strip() for c in _CLAUSE_SPLIT.split(str(reply)) if c and c.strip()]


def refuses(clause: str) -> bool:
    """Whether ``clause`` holds a refusal expression ("can't tell", "not mentioned", "not sure", ...)."""
    plain = " ".join(re.sub(r"[^a-z0-9\s]", " ", _plain(clause)).split())
    return _REFUSAL.search(plain) is not None


# ----- candidates -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Candidate:
    """A possible answer span and the token sequences that name it."""

    label: str
    forms: tuple[tuple[str, ...], ...]


def candidates_for(labels: Sequence[str], *, reverse: bool = True) -> list[Candidate]:
    """:class:`Candidate` per label: its normalised tokens, cue aliases, and (``reverse``) for
    two-word labels the reversed order (``"clock alarm"`` / ``"alarm clock"``)."""
    out = []
    for label in dict.fromkeys(labels):
        forms = {tuple(normalize_tokens(label))}
        for alias in CUE_ALIASES.get(label, ()):
            forms.add(tuple(normalize_tokens(alias)))
        words = normalize_tokens(label)
        if reverse and len(words) == 2 and not any(w.isdigit() for w in words):
            forms.add((words[1], words[0]))
        out.append(Candidate(label, tuple(sorted(f for f in forms if f))))
    return out


def mentions(tokens: Sequence[str], candidates: Sequence[Candidate]) -> list[tuple[int, int, str]]:
    """``(start, stop, label)`` of candidate mentions in ``tokens``: longest matches first, then
    non-overlapping, returned in reading order."""
    spans = []
    for candidate in candidates:
        for form in candidate.forms:
            n = len(form)
            for start in range(len(tokens) - n + 1):
                if tuple(tokens[start : start + n]) == form:
                    spans.append((start, start + n, candidate.label))
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken: set[int] = set()
    found = []
    for start, stop, label in spans:
        if taken.isdisjoint(range(start, stop)):
            taken.update(range(start, stop))
            found.append((start, stop, label))
    return sorted(found)


_OTHER_CANDIDATES = candidates_for(_OTHER_MARKERS, reverse=False)


def speaker_mentions(tokens: Sequence[str]) -> list[str]:
    """Speaker labels (:data:`YOU` / :data:`OTHER`) named in ``tokens``, in order."""
    others = mentions(tokens, _OTHER_CANDIDATES)
    covered = {i for start, stop, _ in others for i in range(start, stop)}
    found = [(start, OTHER) for start, _, _ in others]
    found += [(i, YOU) for i, t in enumerate(tokens) if t in ("you", "yourself", "your") and i not in covered]
    return [label for _, label in sorted(found)]


# ----- asserted answers ---------------------------------------------------------------------------------
def _number(tokens: list[str]) -> str | None:
    for token in tokens:
        if token.isdigit():
            return str(int(token))
        if token in _COUNT_WORDS:
            return str(_COUNT_WORDS[token])
    return None


def _polarity(tokens: list[str]) -> str | None:
    for token in tokens:
        if token in _YES:
            return "yes"
        if token in _NO:
            return "no"
    text = " " + " ".join(tokens) + " "
    if any(f" {p} " in text for p in ("not same", "different", "someone else", "not you", "wasnt you", "was not you")):
        return "no"
    if any(f" {p} " in text for p in ("same", "it was you", "you did", "you told", "you were")):
        return "yes"
    return None


_NEGATORS = frozenset({"not", "than", "instead", "rather", "never"})


def _affirmed(tokens: list[str], candidates: Sequence[Candidate]) -> list[str]:
    """Labels mentioned in ``tokens`` except right after a negator ("not Friday", "rather than Friday")."""
    return [
        label for start, _, label in mentions(tokens, candidates) if start == 0 or tokens[start - 1] not in _NEGATORS
    ]


def asserted_answer(reply: str, kind: AnswerKind, labels: Sequence[str] = ()) -> str | None:
    """The answer ``reply`` asserts for a question of ``kind``, or None.

    Args:
        reply: the model's text.
        kind: one of :data:`KINDS`.
        labels: the answer space for ``span`` / ``choice`` / ``sequence`` (gold plus distractors);
            the answer is returned as one of these labels (a sequence as labels joined by
            :data:`SEQUENCE_SEPARATOR`).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind '{kind}'; expected one of {KINDS}")
    kept = _answering_clauses(reply)
    if kept is None:
        return None
    if kind in ("sequence", "speaker_sequence"):
        return _asserted_sequence(kept, kind, labels)
    options = candidates_for(labels)
    if kind == "span":  # one span over the whole reply; "Monday, or maybe Tuesday" names none
        named = {label for tokens in kept for label in _affirmed(tokens, options)}
        return named.pop() if len(named) == 1 else None
    if kind in _CLAUSE_READERS:
        return next((value for tokens in kept if (value := _CLAUSE_READERS[kind](tokens)) is not None), None)
    return _first_choice(kept, options)


def _answering_clauses(reply: str) -> list[list[str]] | None:
    """The normalised tokens of each clause of ``reply`` that does not refuse; None when the reply
    is a refusal led by a bare "no" ("No, I don't have that information": not a "no")."""
    parts = clauses(reply)
    kept = [normalize_tokens(p) for p in parts if not refuses(p)]
    bare_no = any(normalize_tokens(p) == ["no"] for p in parts)
    if bare_no and len(kept) < len(parts) and all(t == ["no"] for t in kept):
        return None
    return kept


def _asserted_sequence(kept: list[list[str]], kind: AnswerKind, labels: Sequence[str]) -> str | None:
    """The ``sequence`` (labels named, in order) or ``speaker_sequence`` answer of the clauses
    ``kept``, joined by :data:`SEQUENCE_SEPARATOR`; None when they name none."""
    tokens = [t for clause in kept for t in clause]
    if kind == "speaker_sequence":
        found = speaker_mentions(tokens)
    else:
        found = [label for _, _, label in mentions(tokens, candidates_for(labels))]
    return SEQUENCE_SEPARATOR.join(found) if found else None


def _one_speaker(tokens: list[str]) -> str | None:
    """The one speaker a clause names, or None (none or several)."""
    named = set(speaker_mentions(tokens))
    return named.pop() if len(named) == 1 else None


def _first_choice(kept: list[list[str]], options: list[Candidate]) -> str | None:
    """A ``choice`` answer: the label of the first clause naming exactly one of ``options``; else
    the first label any clause names (None when none does)."""
    first_any = None
    for tokens in kept:
        named_labels = list(dict.fromkeys(label for _, _, label in mentions(tokens, options)))
        if len(named_labels) == 1:
            return named_labels[0]
        if named_labels and first_any is None:
            first_any = named_labels[0]
    return first_any


_CLAUSE_READERS = {"number": _number, "yes_no": _polarity, "speaker": _one_speaker}
"""Kind -> the reader of one clause's answer (the first clause with one answers)."""


def has_content(clause: str, question: str = "") -> bool:
    """Whether ``clause`` says something beyond hedges, politeness and the question's own words."""
    asked = set(normalize_tokens(question))
    return any(t not in _FILLER and t not in asked for t in normalize_tokens(clause))


def classify_reply(
    reply: str, kind: AnswerKind, labels: Sequence[str] = (), question: str = ""
) -> tuple[ReplyClass, str | None]:
    """``(class, asserted answer)``.

    ``"refusal"`` when some clause refuses and no other clause answers: neither names an answer
    of ``kind`` nor says anything beyond hedges and the ``question``'s words (so "I'm not sure,
    but I think it was a blender" answers even when "blender" is not in ``labels``).
    """
    if not str(reply).strip():
        return "empty", None
    answer = asserted_answer(reply, kind, labels)
    if answer is not None:
        return "answer", answer
    parts = clauses(reply)
    refusing = [refuses(p) for p in parts]
    if any(refusing) and not any(has_content(p, question) for p, r in zip(parts, refusing) if not r):
        return "refusal", None
    return "answer", None


def same_answer(asserted: str | None, gold: str, kind: AnswerKind) -> bool:
    """Whether an asserted answer equals the gold one (after normalisation for its kind)."""
    if asserted is None:
        return False
    if kind == "number":
        return normalize_span(asserted) == normalize_span(gold)
    if kind in ("sequence", "speaker_sequence"):
        mine = [normalize_span(x) for x in asserted.split(SEQUENCE_SEPARATOR)]
        theirs = [normalize_span(x) for x in gold.split(SEQUENCE_SEPARATOR)]
        return mine == theirs
    return normalize_span(asserted) == normalize_span(gold)
