"""Word forms a request may use for the values a memory holds, mapped onto the memory's words.

A reworded request says ``big`` for a ``large`` object, ``wooden`` for ``wood``, ``two times``
for ``twice``, ``the 3rd`` for ``third``, ``bookshelves`` for ``bookshelf``. Reading matches the
request against the memory's own values, so both sides go through the same canonical forms:

* :data:`WORD_FORMS` -- single words with one canonical form (``big`` -> ``large``, ``grey`` ->
  ``gray``, ``2nd`` -> ``second``, ``3`` -> ``three``);
* :data:`PHRASE_FORMS` -- word sequences with one (``one time`` -> ``once``);
* inflection against the memory's vocabulary (:func:`canonical_request`): a request word the memory
  does not hold becomes the first of its singular or plural forms that it does hold (``lamps`` ->
  ``lamp``, ``bookshelves`` -> ``bookshelf``; ``book`` -> ``books`` when ``books`` is a category).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9]+")

_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_ORDINALS = ("", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}

WORD_FORMS: dict[str, str] = {
    **{str(n): word for n, word in enumerate(_NUMBERS)},
    **{f"{n}{_SUFFIXES.get(n, 'th')}": word for n, word in enumerate(_ORDINALS) if n},
    **dict.fromkeys(["big", "bigger", "biggest", "huge", "larger", "largest", "sizable", "sizeable"], "large"),
    **dict.fromkeys(["little", "tiny", "smaller", "smallest", "compact"], "small"),
    **dict.fromkeys(["mid", "midsize", "midsized", "moderate"], "medium"),
    "wooden": "wood",
    "metallic": "metal",
    "woollen": "wool",
    "grey": "gray",
    "colour": "color",
    "coloured": "colored",
    "refrigerator": "fridge",
    "couch": "sofa",
    "television": "tv",
    "lounge": "living room",
    "corridor": "hallway",
    "hall": "hallway",
    "neighbor": "neighbour",
}
"""Single words -> their canonical form (words of the canonical form, space-separated)."""

PHRASE_FORMS: dict[tuple[str, ...], str] = {
    ("one", "time"): "once",
    ("a", "single", "time"): "once",
    ("single", "time"): "once",
    ("two", "times"): "twice",
    ("on", "two", "occasions"): "twice",
    ("one", "occasion"): "once",
}
"""Word sequences (after :data:`WORD_FORMS`) -> their canonical form."""


IRREGULAR_STEMS: dict[str, str] = {
    "kept": "keep", "hidden": "hide", "hid": "hide", "dried": "dry", "stored": "store", "won": "win",
    "bought": "buy", "made": "make", "done": "do", "given": "give", "gave": "give",
}  # fmt: skip
"""Irregular forms -> their stem's word (``kept`` -> ``keep``)."""


def stem(word: str) -> str:
    """A crude stem that joins a word's inflections (``storing``, ``stored``, ``store`` -> ``stor``;
    ``scarves`` -> ``scarf``; ``kept`` -> ``keep``), for matching free-text values."""
    word = IRREGULAR_STEMS.get(word, word)
    if word.endswith("ves") and len(word) > 4:
        return word[:-3] + "f"
    for suffix in ("ing", "ies", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if len(word) > 3 and word[-1] == word[-2] else word


def raw_tokens(text: str) -> list[str]:
    """Lower-case alphanumeric tokens."""
    return _WORD.findall(str(text).lower())


def canonical(words: Iterable[str]) -> list[str]:
    """``words`` in canonical forms (:data:`WORD_FORMS`, then :data:`PHRASE_FORMS`)."""
    mapped = [part for word in words for part in WORD_FORMS.get(word, word).split()]
    out: list[str] = []
    i = 0
    longest = max(len(p) for p in PHRASE_FORMS)
    while i < len(mapped):
        for n in range(longest, 1, -1):
            form = PHRASE_FORMS.get(tuple(mapped[i : i + n]))
            if form is not None:
                out += form.split()
                i += n
                break
        else:
            out.append(mapped[i])
            i += 1
    return out


@functools.lru_cache(maxsize=8192)
def canonical_phrase(text: str) -> tuple[str, ...]:
    """:func:`canonical` tokens of a memory value or category, cached (they recur in every request)."""
    return tuple(canonical(raw_tokens(text)))


def inflections(word: str) -> list[str]:
    """Singular and plural forms of ``word``, most likely first."""
    forms = []
    if word.endswith("ves"):
        forms += [word[:-3] + "f", word[:-3] + "fe"]
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        forms.append(word[:-1])
    forms += [word + "s", word + "es"]
    return forms


def canonical_request(text: str, vocabulary: frozenset[str], keep: frozenset[str] = frozenset()) -> list[str]:
    """The request's canonical tokens, each word the memory's ``vocabulary`` (its values' and
    categories' canonical tokens) lacks replaced by its first inflection the vocabulary holds;
    words of ``keep`` (the reader's own lexicon: ``call`` stays though ``phone calls`` is a value)
    stay."""
    words = canonical(raw_tokens(text))
    out = []
    for word in words:
        if word not in vocabulary and word not in keep and len(word) > 2:
            word = next((form for form in inflections(word) if form in vocabulary), word)
        out.append(word)
    return out
