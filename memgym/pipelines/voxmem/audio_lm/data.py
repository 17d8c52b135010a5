"""Training and held-out examples for the small audio LM, spoken by the project's own speech pipeline.

A *clip* is one user turn as VoxMem renders it (:class:`~memgym.datasets.voxmem.render.TurnRenderer`:
an eSpeak voice of the bank, a paralinguistic cue, optionally a background sound mixed at the
SNR), saying one statement of the VoxMem template writer about a topic family's subject and value.
An *example* is one or two clips, a question and its answer; the tasks are

==============  =====  ================================================  =============================
task            clips  question                                          answer (candidates scored)
==============  =====  ================================================  =============================
``transcript``  1      write down exactly what was said                  the words (stage 1)
``said``        1      what <slot> was given for <subject>?              the value (family's values)
``cue``         1      how did the speaker sound?                        cue word (7 cues)
``sound``       1      what could be heard in the background?            class or "nothing" (all + 1)
``noise``       1      was anything audible besides the voice?           yes / no
``speaker``     2      did the same person speak in both recordings?     yes / no
==============  =====  ================================================  =============================

Training examples ask about the clips of a fixed pool (:func:`pool_group`: every question about a
clip at once; each clip is rendered and encoded once), held-out ones about fresh clips (:func:`make_example`). They come from disjoint voices (``heldout_voices``), different seeds and
different sound recordings (the library's ``train`` / ``eval`` splits); VoxMem's own histories are
never used.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np

from memgym.backends.tts.base import Voice
from memgym.datasets.speech.cues import CUE_WORDS, CUES
from memgym.datasets.voxmem.records import SessionFact
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME, TOPIC_FAMILIES
from memgym.datasets.voxmem.writing import TemplateWriter

TASKS: tuple[str, ...] = ("transcript", "said", "cue", "sound", "noise", "speaker")
SCORED_TASKS: tuple[str, ...] = ("said", "speaker", "cue", "sound", "noise")
NOTHING = "nothing"


@dataclasses.dataclass(frozen=True)
class Clip:
    """One spoken statement: who, what, how, over what."""

    voice: str
    text: str
    family: str
    subject: str
    value: str
    cue: str
    sound: str


@dataclasses.dataclass(frozen=True)
class Example:
    """Clips, the question asked after them, the answer and the candidates it is scored among."""

    task: str
    clips: tuple[Clip, ...]
    question: str
    answer: str
    candidates: tuple[str, ...]


def sound_name(sound: str) -> str:
    """How an answer names a sound class (``"car_horn"`` -> ``"car horn"``; none -> ``"nothing"``)."""
    return sound.replace("_", " ") if sound else NOTHING


def draw_clip(
    voices: list[Voice], sound_classes: tuple[str, ...], sound_rate: float, rng: np.random.Generator, voice: str = ""
) -> Clip:
    """A random statement (uniform family, subject, value, cue; a sound with probability ``sound_rate``)."""
    family = TOPIC_FAMILIES[int(rng.integers(len(TOPIC_FAMILIES)))]
    subject = str(family.subjects[int(rng.integers(len(family.subjects)))])
    value = str(family.values[int(rng.integers(len(family.values)))])
    fact = SessionFact(family=family.name, subject=subject, value=value, update=bool(rng.random() < 0.25))
    (text,) = TemplateWriter().user_side(fact, 1, rng)
    cue = CUES[int(rng.integers(len(CUES)))]
    sound = sound_classes[int(rng.integers(len(sound_classes)))] if rng.random() < sound_rate else ""
    chosen = voice or voices[int(rng.integers(len(voices)))].voice_id
    return Clip(chosen, text, family.name, subject, value, cue, sound)


def make_example(
    task: str, voices: list[Voice], sound_classes: tuple[str, ...], sound_rate: float, rng: np.random.Generator
) -> Example:
    """One example of ``task`` (module docstring) on freshly drawn clips."""
    clip = draw_clip(voices, sound_classes, sound_rate, rng)
    if task != "speaker":
        return ask(task, (clip,), sound_classes)
    same = bool(rng.random() < 0.5)
    others = [v.voice_id for v in voices if v.voice_id != clip.voice]
    voice = clip.voice if same else others[int(rng.integers(len(others)))]
    return ask(task, (clip, draw_clip(voices, sound_classes, sound_rate, rng, voice=voice)), sound_classes)


def ask(task: str, clips: tuple[Clip, ...], sound_classes: tuple[str, ...]) -> Example:
    """The question of ``task`` about ``clips`` (two for ``speaker``, else one), its answer and candidates."""
    clip = clips[0]
    if task == "transcript":
        return Example(task, clips, "Write down exactly what was said.", clip.text, ())
    if task == "said":
        family = FAMILY_BY_NAME[clip.family]
        question = f"What {family.slot} was given for {clip.subject}?"
        return Example(task, clips, question, clip.value, tuple(family.values))
    if task == "cue":
        return Example(
            task, clips, "How did the speaker sound?", CUE_WORDS[clip.cue], tuple(CUE_WORDS[c] for c in CUES)
        )
    if task == "sound":
        question = "What could be heard in the background?"
        return Example(
            task, clips, question, sound_name(clip.sound), (NOTHING, *(sound_name(s) for s in sound_classes))
        )
    if task == "noise":
        question = "Was anything audible in the background besides the voice? Answer yes or no."
        return Example(task, clips, question, "yes" if clip.sound else "no", ("yes", "no"))
    if task == "speaker":
        question = "Did the same person speak in both recordings? Answer yes or no."
        return Example(task, clips, question, "yes" if clips[0].voice == clips[1].voice else "no", ("yes", "no"))
    raise ValueError(f"unknown task '{task}'")


def pool_group(
    tasks: tuple[str, ...],
    pool: list[Clip],
    sound_classes: tuple[str, ...],
    speaker_share: float,
    rng: np.random.Generator,
) -> tuple[Example, ...]:
    """Examples on clips of a fixed training ``pool`` (so their encoder outputs can be cached), all
    about the same clips: with probability ``speaker_share`` (when ``speaker`` is among ``tasks``) a
    ``speaker`` question about a uniform clip and a second one of the same voice or, equally often,
    another; else every other task of ``tasks`` about one uniform clip."""
    first = int(rng.integers(len(pool)))
    singles = [t for t in tasks if t != "speaker"]
    if singles and not ("speaker" in tasks and rng.random() < speaker_share):
        return tuple(ask(task, (pool[first],), sound_classes) for task in singles)
    same = bool(rng.random() < 0.5)
    partners = [i for i, c in enumerate(pool) if i != first and (c.voice == pool[first].voice) == same]
    if not partners:
        raise ValueError("clip_pool: too small for speaker pairs (a voice with a single clip)")
    return (ask("speaker", (pool[first], pool[partners[int(rng.integers(len(partners)))]]), sound_classes),)


def slot_text(clip: Clip, blank: str = "", blanks: float = 0.0, rng: np.random.Generator | None = None) -> str:
    """The clip written as text for the audio slot (the text stage): how it sounded, what else was
    audible, then the words, e.g. ``"[hesitant, dog] I think ..."`` or ``"[slow] ..."``.

    With ``blanks > 0``, a Poisson(``blanks``) number of ``blank`` markers (the audio token, which is
    also the CTC blank of stage 1) follows every word, so the text has the shape stage 1 gives the
    audio tokens: word pieces among blanks, at about the audio's token rate (``rng`` draws them).
    """
    tags = ", ".join([CUE_WORDS[clip.cue], *([sound_name(clip.sound)] if clip.sound else [])])
    words = clip.text.split()
    if blanks > 0:
        if rng is None or not blank:
            raise ValueError("slot_text: blanks need the blank marker and a generator")
        words = [word + blank * int(rng.poisson(blanks)) for word in words]
    return f"[{tags}] {' '.join(words)}"


def text_group(
    tasks: tuple[str, ...], voices: list[Voice], sound_classes: tuple[str, ...], rng: np.random.Generator
) -> tuple[Clip, tuple[Example, ...]]:
    """A freshly drawn clip (never rendered: the text stage reads :func:`slot_text`) and every
    single-clip question of ``tasks`` about it; half of the clips have a background sound."""
    clip = draw_clip(voices, sound_classes, 0.5, rng)
    return clip, tuple(ask(task, (clip,), sound_classes) for task in tasks if task != "speaker")


def example_rng(seed: int, stream: str, index: int) -> np.random.Generator:
    """The generator of example ``index`` of ``stream`` (``"train"`` / ``"heldout"``) under ``seed``."""
    digest = hashlib.sha256(f"audio_lm/{stream}/{seed}/{index}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def split_voices(bank: list[Voice], heldout: tuple[str, ...]) -> tuple[list[Voice], list[Voice]]:
    """``(training voices, held-out voices)`` of ``bank``.

    Raises:
        ValueError: a held-out voice id is not in the bank, or no training voice is left.
    """
    ids = {v.voice_id for v in bank}
    unknown = sorted(set(heldout) - ids)
    if unknown:
        raise ValueError(f"heldout_voices: {unknown} are not voices of the bank ({sorted(ids)[0]} ..)")
    train = [v for v in bank if v.voice_id not in heldout]
    if len(train) < 2:
        raise ValueError("heldout_voices: at least two voices must be left for training")
    return train, [v for v in bank if v.voice_id in heldout]


def clip_audio(renderer, voices: dict[str, Voice], clip: Clip, folder: Path) -> np.ndarray:
    """The clip's ``(N,) float32`` 16 kHz waveform, rendered (or reused) by ``renderer`` under ``folder``."""
    from memgym.datasets.voxmem.audio_files import read_turn_audio

    rendered = renderer.render(voices[clip.voice], clip.text, clip.cue, clip.sound)
    return read_turn_audio(folder / rendered.audio)
