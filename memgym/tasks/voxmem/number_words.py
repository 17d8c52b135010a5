"""Numbers spelled out in words, read as digits: ``"fifteen thousand"`` -> ``15000``,
``"twenty second"`` -> ``22nd`` (:func:`number_run`, used by VoxMem's reply normalisation,
:func:`memgym.tasks.voxmem.answers.normalize_tokens`).

>>> number_run("two thousand and five dollars".split(), 0)
('2005', 4)
>>> number_run("the twenty second".split(), 1)
('22nd', 2)
"""

from __future__ import annotations

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "thirtieth": 30,
}  # fmt: skip


def number_run(tokens: list[str], start: int) -> tuple[str, int] | None:
    """A number spelled out from ``tokens[start]``: ``(digits or 22nd form, tokens used)``."""
    total, current, used, seen, ordinal = 0, 0, 0, False, False
    last = ""
    i = start
    while i < len(tokens):
        word = tokens[i]
        if word in _UNITS and last not in ("unit", "teen"):
            current += _UNITS[word]
            last = "teen" if _UNITS[word] >= 10 else "unit"
        elif word in _TENS and last in ("", "scale"):
            current += _TENS[word]
            last = "tens"
        elif word in _ORDINALS and last in ("", "scale", "tens") and (seen or word not in ("second",)):
            current += _ORDINALS[word]
            ordinal, seen, used = True, True, i - start + 1
            break
        elif word in _SCALES and seen and last != "scale":
            total, current = _scaled(total, current, _SCALES[word])
            last = "scale"
        elif last == "scale" and _joining_and(tokens, i):
            i += 1
            continue
        else:
            break
        seen = True
        i += 1
        used = i - start
    if not seen:
        return None
    value = total + current
    return (f"{value}{_ordinal_suffix(value)}" if ordinal else str(value)), used


def _scaled(total: int, current: int, scale: int) -> tuple[int, int]:
    """``(total, current)`` after a scale word: "hundred" multiplies the group being read, a
    larger scale closes it into the total."""
    if scale == 100:
        return total, max(current, 1) * 100
    return total + max(current, 1) * scale, 0


def _joining_and(tokens: list[str], i: int) -> bool:
    """Whether ``tokens[i]`` is an "and" joining a scale to the units or tens after it."""
    return tokens[i] == "and" and i + 1 < len(tokens) and (tokens[i + 1] in _UNITS or tokens[i + 1] in _TENS)


def _ordinal_suffix(value: int) -> str:
    if 10 <= value % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
