"""Banks of user voices: the embedded eSpeak NG bank and banks built from backend voice names.

A history's users each get one voice from the bank for all of their sessions
(:func:`assign_voices`). The eSpeak bank crosses English accents (American, British RP,
Scottish, Caribbean, New York, Lancastrian, default British; eSpeak's West Midlands voice is left
out because it ignores SSML prosody, so cues could not be rendered with it) with 20 different eSpeak
variants (vocal-tract and glottal settings), spreading base pitch, pitch range and rate so neighbouring voices differ in
several dimensions; ``tests/datasets/speech/test_speech.py`` checks that a nearest-centroid
classifier on MFCC + pitch statistics tells all of them apart on unseen sentences. Four earlier
voices (Caribbean ``f4`` and ``benjamin``, Scottish ``belinda``, and ``travis`` at 200 words/min)
are left out: Whisper tiny.en got 46-64 % of their words wrong (docs/voxmem.md).
"""

from __future__ import annotations

import numpy as np

from memgym.backends.tts.base import TTSError, Voice

# (accent, variant, pitch 0-100, range 0-100, rate wpm, description)
_ESPEAK_VOICES: tuple[tuple[str, str, int, int, int, str], ...] = (
    ("en-us", "m1", 40, 50, 165, "American, low male"),
    ("en-us", "f1", 60, 60, 175, "American, female"),
    ("en-gb-x-rp", "m3", 55, 40, 150, "British RP, male, slow"),
    ("en-gb-x-rp", "f2", 70, 70, 170, "British RP, female, lively"),
    ("en-gb-scotland", "m2", 35, 60, 180, "Scottish, deep male"),
    ("en-gb-scotland", "f3", 65, 45, 160, "Scottish, female"),
    ("en-029", "m4", 50, 75, 170, "Caribbean, male, lively"),
    ("en-us-nyc", "m5", 45, 35, 195, "New York, male, fast"),
    ("en-us-nyc", "f5", 55, 80, 180, "New York, female, lively"),
    ("en-gb-x-gbclan", "m6", 30, 45, 160, "Lancastrian, very low male"),
    ("en-gb-x-rp", "m7", 52, 55, 150, "British RP, male, slow"),
    ("en", "m8", 60, 70, 175, "British, male, lively"),
    ("en-us", "adam", 45, 50, 185, "American, male, fast"),
    ("en-gb-x-rp", "anika", 50, 50, 160, "British RP, female, breathy"),
    ("en-us-nyc", "david", 50, 60, 175, "New York, low male"),
    ("en", "edward", 45, 30, 165, "British, male, monotone"),
    ("en-gb-x-gbclan", "max", 55, 60, 185, "Lancastrian, male, fast"),
    ("en-us", "paul", 45, 70, 160, "American, male, lively"),
    ("en-us", "steph", 65, 60, 165, "American, female, bright"),
    ("en", "grandpa", 40, 55, 145, "British, older male, slow"),
)


def espeak_voice_bank() -> list[Voice]:
    """The 20 embedded eSpeak NG user voices (``espeak-00`` .. ``espeak-19``)."""
    return [
        Voice(
            voice_id=f"espeak-{i:02d}",
            backend="espeak",
            name=f"{accent}+{variant}",
            pitch=pitch,
            pitch_range=span,
            rate_wpm=rate,
            description=description,
        )
        for i, (accent, variant, pitch, span, rate, description) in enumerate(_ESPEAK_VOICES)
    ]


def named_voice_bank(backend: str, names: tuple[str, ...] | list[str]) -> list[Voice]:
    """A bank of voices for an endpoint or HF backend from its voice names / speaker ids."""
    if not names:
        raise TTSError(f"tts.voices is empty: the '{backend}' backend needs the names of the voices to use")
    return [Voice(voice_id=f"{backend}-{name}", backend=backend, name=str(name)) for name in names]


def assign_voices(users: list[str], bank: list[Voice], rng: np.random.Generator) -> dict[str, Voice]:
    """Give each user a distinct voice from ``bank`` (kept for all of that user's sessions).

    Raises:
        TTSError: more users than voices.
    """
    if len(users) > len(bank):
        raise TTSError(f"{len(users)} users need distinct voices but the voice bank has only {len(bank)}")
    order = rng.permutation(len(bank))[: len(users)]
    return {user: bank[int(i)] for user, i in zip(users, order)}
