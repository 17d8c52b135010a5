"""``did you mean`` hints for unknown names and keys (:mod:`difflib` close matches).

>>> did_you_mean("dialog", ["dialogue", "frames", "3dmem"])
" (did you mean 'dialogue'?)"
>>> did_you_mean("zzz", ["dialogue"])
''
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``choices`` closest to ``word`` (difflib ratio >= 0.6), best first."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=0.6)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` (or ``'x' or 'y'``) for the choices close to ``word``; ``""`` when none is."""
    matches = close_matches(word, choices)
    if not matches:
        return ""
    return f" (did you mean {' or '.join(repr(m) for m in matches)}?)"
