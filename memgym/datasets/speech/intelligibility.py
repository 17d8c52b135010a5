"""Scoring recognised speech against the words that were spoken: normalisation, WER, phrase hits.

Speech recognisers write numbers as digits (``"$5,000"``, ``"the 22nd"``, ``"45 minutes"``)
where VoxMem's words spell them out; :func:`normalize_words` maps both sides to one form
(lower-case words, numbers, currency, ordinals, percentages and clock times spelled out,
hyphens split, other punctuation dropped, apostrophes kept) before they are compared. A bare
three- or four-digit number can also be a clock time (``"715"`` for "seven fifteen"), so a
recognised text is compared in both readings and the better one counts. Words that sound
exactly like a number word (``for``/``four``, ``to``/``two``, ``won``/``one``) compare equal, and
so do an ordinal and its cardinal (``"the 28"`` is heard as "the twenty eighth").
"""

from __future__ import annotations

import re

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = ((10**9, "billion"), (10**6, "million"), (1000, "thousand"))
_ORDINAL_WORDS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
_NUMBER = re.compile(
    r"(?P<currency>[$£€])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?::(?P<minutes>\d{2}))?(?:\.(?P<frac>\d+))?"
    r"(?P<ordinal>st|nd|rd|th)?(?P<percent>%)?"
)
_CURRENCY = {"$": "dollars", "£": "pounds", "€": "euros"}
_HOMOPHONES = {"for": "four", "fore": "four", "to": "two", "too": "two", "won": "one", "ate": "eight"}


def number_words(value: int) -> str:
    """``value`` (0 <= value < 10**12) spelled out without "and": 2045 -> "two thousand forty five"."""
    if value < 20:
        return _ONES[value]
    if value < 100:
        tens, ones = divmod(value, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    if value < 1000:
        hundreds, rest = divmod(value, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_words(rest)}" if rest else "")
    for scale, name in _SCALES:
        if value >= scale:
            high, rest = divmod(value, scale)
            return f"{number_words(high)} {name}" + (f" {number_words(rest)}" if rest else "")
    raise ValueError(f"cannot spell {value}")


def ordinal_words(value: int) -> str:
    """``value`` as an ordinal: 22 -> "twenty second", 40 -> "fortieth"."""
    words = number_words(value).split()
    last = words[-1]
    if last in _ORDINAL_WORDS:
        words[-1] = _ORDINAL_WORDS[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def _clock(match: re.Match) -> str | None:
    """A bare 3-4 digit number read as a clock time ("715" -> "seven fifteen"), else ``None``."""
    digits = match["int"]
    if any(match[g] for g in ("currency", "minutes", "frac", "ordinal", "percent")) or not 3 <= len(digits) <= 4:
        return None
    hours, minutes = divmod(int(digits), 100)
    if not 1 <= hours <= 23 or minutes >= 60:
        return None
    tail = "" if minutes == 0 else (" oh " + _ONES[minutes] if minutes < 10 else f" {number_words(minutes)}")
    return f" {number_words(hours)}{tail} "


def _spell(match: re.Match, clock: bool = False) -> str:
    digits = match["int"].replace(",", "")
    if len(digits) > 12:
        return f" {' '.join(_ONES[int(d)] for d in digits)} "
    if clock and (time := _clock(match)):
        return time
    value = int(digits)
    if match["ordinal"]:
        words = ordinal_words(value)
    else:
        words = number_words(value)
    if match["minutes"]:
        minutes = int(match["minutes"])
        words += "" if minutes == 0 else (" oh " + _ONES[minutes] if minutes < 10 else f" {number_words(minutes)}")
    if match["frac"]:
        words += " point " + " ".join(_ONES[int(d)] for d in match["frac"])
    if match["percent"]:
        words += " percent"
    if match["currency"]:
        words += " " + _CURRENCY[match["currency"]]
    return f" {words} "


def normalize_words(text: str, *, clock: bool = False) -> list[str]:
    """Lower-case words of ``text`` with digits spelled out and punctuation removed.

    ``"I've set $5,000 for the 22nd."`` -> ``["i've", "set", "five", "thousand", "dollars",
    "for", "the", "twenty", "second"]``. With ``clock`` a bare 3-4 digit number that is a valid
    time is read as one (``"715"`` -> ``["seven", "fifteen"]``).
    """
    text = _NUMBER.sub(lambda m: _spell(m, clock), str(text).lower().replace("’", "'"))
    text = re.sub(r"[-–—/]", " ", text)
    text = re.sub(r"[^a-z0-9' ]+", " ", text)
    return [w.strip("'") for w in text.split() if w.strip("'")]


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """Word-level Levenshtein distance (substitutions + deletions + insertions)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, start=1):
        current = [i] + [0] * len(hypothesis)
        for j, hyp in enumerate(hypothesis, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp))
        previous = current
    return previous[-1]


_CARDINAL_OF = {ordinal_words(n).split()[-1]: number_words(n).split()[-1] for n in (*range(1, 20), *range(20, 100, 10))}
_CARDINAL_OF.update(hundredth="hundred", thousandth="thousand", millionth="million")


def _compared(words: list[str]) -> list[str]:
    """Words as compared: homophones of number words and ordinals mapped to their cardinals."""
    words = [_HOMOPHONES.get(w, w) for w in words]
    return [_CARDINAL_OF.get(w, w) for w in words]


def _readings(hypothesis: str) -> list[list[str]]:
    """The recognised text's word sequences: numbers as numbers, and bare numbers as clock times."""
    plain, clock = normalize_words(hypothesis), normalize_words(hypothesis, clock=True)
    return [_compared(plain)] + ([_compared(clock)] if clock != plain else [])


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """``(errors, reference words)`` after normalisation (best reading); WER = errors / words."""
    ref = _compared(normalize_words(reference))
    return min(edit_distance(ref, heard) for heard in _readings(hypothesis)), len(ref)


def phrase_recognised(phrase: str, hypothesis: str) -> bool:
    """Whether the normalised words of ``phrase`` occur contiguously, in order, in ``hypothesis``."""
    words = _compared(normalize_words(phrase))
    if not words:
        return True
    return any(
        heard[i : i + len(words)] == words
        for heard in _readings(hypothesis)
        for i in range(len(heard) - len(words) + 1)
    )
