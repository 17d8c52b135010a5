"""Banks of user voices: the embedded eSpeak NG bank and banks built from backend voice names.

A history's users each get one voice from the bank for all of their sessions
(:func:`assign_voices`). The eSpeak bank crosses English accents (American, British RP, Caribbean,
New York, Lancastrian, default British; eSpeak's West Midlands voice is left out because it
ignores SSML prosody, so cues could not be rendered with it) with 20 different eSpeak variants
(vocal-tract and glottal settings), spreading base pitch, pitch range and rate so neighbouring
voices differ in several dimensions; ``tests/datasets/speech/test_speech.py`` checks that a
nearest-centroid classifier on MFCC statistics tells all of them apart on unseen sentences.

Voices are chosen for what the default recogniser (Whisper tiny.en) hears. Four earlier voices
(Caribbean ``f4`` and ``benjamin``, Scottish ``belinda``, and ``travis`` at 200 words/min) were
left out when Whisper tiny.en got 46-64 % of their words wrong; issue 38 replaced eight more
(``espeak-03`` RP ``f2``, ``-04`` Scottish ``m2``, ``-05`` Scottish ``f3``, ``-08`` New York
``f5``, ``-12`` ``adam``, ``-13`` ``anika``, ``-14`` ``david``, ``-17`` ``paul``) by
``espeak-20`` .. ``-27`` (eSpeak variants screened on the same sentences; ``speed/voxmem_voices.py``,
docs/voxmem_eval.md): the four ``f2``/``m2``/``f3``/``f5`` variants put eSpeak's echo and breath noise
into the pauses, where the sound tagger listens for a background sound (all the false sound tags
of a build came from them), and the others had the highest clean-turn word errors of the bank
(22-37 %; the kept voices 8-24 %, the replacements 10-20 %). Replacements keep their bank positions, so a build draws the
same voice positions as before; a voice's id is never reused for another voice.
"""

from __future__ import annotations

import numpy as np

from memgym.backends.tts.base import TTSError, Voice

# (id number, accent, variant, pitch 0-100, range 0-100, rate wpm, description)
_ESPEAK_VOICES: tuple[tuple[int, str, str, int, int, int, str], ...] = (
    (0, "en-us", "m1", 40, 50, 165, "American, low male"),
    (1, "en-us", "f1", 60, 60, 175, "American, female"),
    (2, "en-gb-x-rp", "m3", 55, 40, 150, "British RP, male, slow"),
    (20, "en-gb-x-rp", "steph2", 70, 50, 155, "British RP, female, slow"),
    (21, "en-us", "robert", 45, 50, 160, "American, male"),
    (22, "en-us", "steph3", 75, 70, 170, "American, high female, lively"),
    (6, "en-029", "m4", 50, 75, 170, "Caribbean, male, lively"),
    (7, "en-us-nyc", "m5", 45, 35, 195, "New York, male, fast"),
    (23, "en-us", "Annie", 60, 45, 160, "American, female, calm"),
    (9, "en-gb-x-gbclan", "m6", 30, 45, 160, "Lancastrian, very low male"),
    (10, "en-gb-x-rp", "m7", 52, 55, 150, "British RP, male, slow"),
    (11, "en", "m8", 60, 70, 175, "British, male, lively"),
    (24, "en-us", "Mike", 35, 45, 170, "American, deep male"),
    (25, "en-us", "Gene", 55, 60, 155, "American, male, lively"),
    (26, "en-us", "john", 50, 40, 175, "American, male, even"),
    (15, "en", "edward", 45, 30, 165, "British, male, monotone"),
    (16, "en-gb-x-gbclan", "max", 55, 60, 185, "Lancastrian, male, fast"),
    (27, "en-us", "Denis", 60, 55, 165, "American, male, bright"),
    (18, "en-us", "steph", 65, 60, 165, "American, female, bright"),
    (19, "en", "grandpa", 40, 55, 145, "British, older male, slow"),
)


def espeak_voice_bank() -> list[Voice]:
    """The 20 embedded eSpeak NG user voices (``espeak-00`` .. ``espeak-27``; ids of voices left
    out of the bank are not reused)."""
    return [
        Voice(
            voice_id=f"espeak-{number:02d}",
            backend="espeak",
            name=f"{accent}+{variant}",
            pitch=pitch,
            pitch_range=span,
            rate_wpm=rate,
            description=description,
        )
        for number, accent, variant, pitch, span, rate, description in _ESPEAK_VOICES
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
