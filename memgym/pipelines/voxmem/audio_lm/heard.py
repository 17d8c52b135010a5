"""Does the model hear? Held-out questions answered with the clips and with silence in their place.

For every scored task (:data:`~memgym.pipelines.voxmem.audio_lm.data.SCORED_TASKS`) the model
ranks the task's candidate answers by log-probability (:meth:`AudioLM.score`) after the held-out
clips (voices and sound recordings never heard in training) and after silence of the same
lengths (the *no-audio baseline*: the same model, prompt and number of audio tokens, no signal).
Accuracy is the share of examples whose top candidate is the answer; chance is the mean of
``1 / len(candidates)`` and *majority* the share of the most frequent answer (e.g. "nothing" for
sound questions, where half the clips have no sound). Intervals: 95 % percentile bootstrap over examples (the difference paired).

Transcripts (:func:`transcript_heard`) are measured teacher-forced: the mean cross-entropy of the
held-out statement's tokens and the share of them predicted top-1, with the clip and with silence;
a model that hears has a lower loss with the clip (the difference silence - audio is > 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memgym.core.statistics import bootstrap_difference, bootstrap_mean
from memgym.pipelines.voxmem.audio_lm.data import SCORED_TASKS, example_rng, make_example, slot_text


def evaluate_heard(
    lm: Any, speech: Any, per_task: int, seed: int, *, tasks: tuple[str, ...] = SCORED_TASKS, progress: bool = False
) -> dict[str, Any]:
    """Per scored task among ``tasks``: ``n``, ``chance``, ``audio`` / ``silence`` accuracy and ``difference`` (each
    ``{"estimate", "low", "high"}``), and the per-example ``correct`` lists."""
    results: dict[str, Any] = {}
    for t, task in enumerate(task for task in SCORED_TASKS if task in tasks):
        hits: dict[str, list[float]] = {"audio": [], "silence": [], "audio_per_token": [], "silence_per_token": []}
        chance, answers = [], []
        for i in range(per_task):
            example = make_example(
                task, speech.voices, speech.sound_classes, 0.5, example_rng(seed, f"heldout/{task}", i)
            )
            audios = [speech.audio(c) for c in example.clips]
            target = example.candidates.index(example.answer)
            lengths = np.array([len(lm.answer_ids(c)) for c in example.candidates])
            for key, waves in (("audio", audios), ("silence", [np.zeros_like(a) for a in audios])):
                scores = lm.score([lm.prefix(w) for w in waves], example.question, example.candidates)
                hits[key].append(float(int(np.argmax(scores)) == target))
                hits[f"{key}_per_token"].append(float(int(np.argmax(scores / lengths)) == target))
            chance.append(1.0 / len(example.candidates))
            answers.append(example.answer)
        rng = np.random.default_rng(seed + 1000 * t)
        results[task] = {
            "n": per_task,
            "chance": float(np.mean(chance)),
            "majority": max(answers.count(a) for a in set(answers)) / len(answers),
            **_paired(hits["audio"], hits["silence"], rng),
            "per_token": _paired(hits["audio_per_token"], hits["silence_per_token"], rng),
            "correct": hits,
        }
        if progress:
            r = results[task]
            print(
                f"audio_lm: held-out {task}: audio {_text(r['audio'])} silence {_text(r['silence'])} "
                f"difference {_text(r['difference'])} chance {r['chance']:.2f} majority {r['majority']:.2f}",
                flush=True,
            )
    return results


def text_heard(
    lm: Any, speech: Any, per_task: int, seed: int, *, tasks: tuple[str, ...] = SCORED_TASKS, blanks: float = 0.0
) -> dict[str, Any]:
    """The text ceiling: the held-out questions of :func:`evaluate_heard` (same examples) answered with
    each statement written as text in the audio slot (:func:`slot_text`, with ``blanks`` audio tokens
    after each word on average, as the text stage wrote it) against an empty slot (the LM's prior);
    per single-clip task among ``tasks``, ``text`` / ``empty`` accuracy and ``difference``."""
    results: dict[str, Any] = {}
    for t, task in enumerate(task for task in SCORED_TASKS if task in tasks and task != "speaker"):
        hits: dict[str, list[float]] = {"text": [], "empty": []}
        for i in range(per_task):
            example = make_example(
                task, speech.voices, speech.sound_classes, 0.5, example_rng(seed, f"heldout/{task}", i)
            )
            target = example.candidates.index(example.answer)
            text = slot_text(example.clips[0], lm.audio_token, blanks, example_rng(seed, f"heldout/{task}/blanks", i))
            for key, slot in (("text", text), ("empty", "")):
                scores = lm.score([slot], example.question, example.candidates)
                hits[key].append(float(int(np.argmax(scores)) == target))
        rng = np.random.default_rng(seed + 77 * t)
        results[task] = {"n": per_task, **_paired(hits["text"], hits["empty"], rng, ("text", "empty"))}
    return results


def _paired(
    first: list[float], second: list[float], rng: np.random.Generator, names: tuple[str, str] = ("audio", "silence")
) -> dict[str, Any]:
    """Both accuracies (keys ``names``) and their paired ``difference``, each a 95 % bootstrap interval."""
    return {
        names[0]: _interval(bootstrap_mean(first, rng=rng)),
        names[1]: _interval(bootstrap_mean(second, rng=rng)),
        "difference": _interval(bootstrap_difference(first, second, rng=rng, paired=True)),
    }


def transcript_heard(lm: Any, speech: Any, n: int, seed: int) -> dict[str, Any]:
    """``n`` held-out statements written down teacher-forced after the clip and after silence:
    ``loss`` (nats per token; ``difference`` = silence - audio) and ``accuracy`` (top-1 per token;
    audio - silence), each ``{"audio", "silence", "difference"}`` intervals, and the per-clip values."""
    fits: dict[str, list[tuple[float, float]]] = {"audio": [], "silence": []}
    for i in range(n):
        example = make_example(
            "transcript", speech.voices, speech.sound_classes, 0.5, example_rng(seed, "heldout/transcript", i)
        )
        audio = speech.audio(example.clips[0])
        for key, wave in (("audio", audio), ("silence", np.zeros_like(audio))):
            fits[key].append(lm.answer_fit([lm.prefix(wave)], example.question, example.answer))
    result: dict[str, Any] = {"n": n}
    for m, name in enumerate(("loss", "accuracy")):
        audio, silence = ([f[m] for f in fits[key]] for key in ("audio", "silence"))
        better, worse = (silence, audio) if name == "loss" else (audio, silence)
        rng = np.random.default_rng(seed + 7919 * (m + 1))
        result[name] = {
            "audio": _interval(bootstrap_mean(audio, rng=rng)),
            "silence": _interval(bootstrap_mean(silence, rng=rng)),
            "difference": _interval(bootstrap_difference(better, worse, rng=rng, paired=True)),
            "values": {"audio": audio, "silence": silence},
        }
    return result


def _text(interval: dict[str, float]) -> str:
    """``"0.45 [0.30, 0.60]"``."""
    return f"{interval['estimate']:.2f} [{interval['low']:.2f}, {interval['high']:.2f}]"


def _interval(interval: Any) -> dict[str, float]:
    return {"estimate": interval.estimate, "low": interval.low, "high": interval.high}
