"""Which key a question asks for, by meaning: the question's own words (its cues taken out)
against one short description of each key, with the sentence encoder of
:mod:`~memgym.backends.sentence_encoder`.

The structured reasoner reads a question's asking words first
(:func:`~memgym.backends.request_reading.asked_key`); when none names a key (``What hue is ...``,
``Where in the house ...``, ``How many separate occasions ...``), :func:`closest_key` picks the
key whose description is nearest in meaning. Without the encoder installed it answers None (the
reasoner then replies ``unknown``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from memgym.backends import sentence_encoder

KEY_DESCRIPTIONS: dict[str, str] = {
    "owner": "who owns it, whose it is, which person it belongs to",
    "usage": "what it is used for, what people do with it, its purpose",
    "alias": "what people call it, its nickname or name",
    "significance": "why it is special or meaningful, the story behind it",
    "color": "what colour it is, its hue or shade",
    "material": "what material it is made of",
    "size": "how big or small it is compared with others of its kind",
    "room": "which room it is in, where in the house it is",
    "on": "what it is standing or resting on top of",
    "near": "what object is next to it or beside it",
    "times_seen": "how many times you saw it",
    "segment": "which object you were walking towards when you first saw it",
    "order": "whether it was the first, second or third of its kind that you saw",
}
"""Key -> what a question asking for it is about (our words, not the dataset's templates)."""


def closest_key(text: str, keys: Iterable[str]) -> str | None:
    """The key of ``keys`` (those of :data:`KEY_DESCRIPTIONS`) whose description is nearest to
    ``text`` in meaning (cosine of the encoder's vectors; ties to the first in sorted order); None
    without the encoder, for an empty text or no key."""
    keys = sorted(k for k in set(keys) if k in KEY_DESCRIPTIONS)
    if not keys or not text.strip() or not sentence_encoder.available():
        return None
    vectors = sentence_encoder.encode([text, *(KEY_DESCRIPTIONS[k] for k in keys)])
    similarity = vectors[1:] @ vectors[0]
    return keys[int(np.argmax(similarity))]
